//! The translation paths of a simulation loop: an access within one
//! 4 KiB page translated by the page of the last first-level TLB hit, the
//! first-level arrays, the STLB or a walk, each step counting exactly
//! what [`PhysicalCore::translate`] counts for the record.

use cachepart_trace::{Kind, Record};

use super::super::allocator::FrameAllocator;
use super::super::error::MemoryError;
use super::super::page::PageSize;
use super::PhysicalCore;

impl PhysicalCore {
    /// The physical address of access record `rec` if it is an access
    /// within one 4 KiB page, through the TLBs and the page table (what
    /// [`Self::translate`] does and counts for it, inline up to the TLB
    /// lookups); `None` (nothing done): an escape or a page-crossing
    /// access, for [`Self::translate`].
    #[inline(always)]
    pub fn translate_single<A: FrameAllocator + ?Sized>(
        &mut self,
        rec: Record,
        alloc: &mut A,
    ) -> Option<Result<u64, MemoryError>> {
        let (instr, vaddr) = single_page(rec)?;
        let hit = self.tlb.lookup(instr, vaddr);
        Some(self.hit_or_walk(instr, vaddr, hit, alloc))
    }

    /// The physical address of access record `rec` when that needs no more
    /// than the first-level TLBs ([`Tlb::lookup_l1`], the page of the last
    /// first-level hit first): an access (not an escape) within one 4 KiB
    /// page whose page the first level holds. Counts what
    /// [`Self::translate`] would count then (one first-level hit) and
    /// gives the address of its single record; `None` (nothing counted,
    /// nothing changed): call [`Self::translate_missed`].
    ///
    /// [`Tlb::lookup_l1`]: crate::memory::tlb::Tlb::lookup_l1
    #[inline(always)]
    pub fn translate_fast(&mut self, rec: Record) -> Option<u64> {
        let (instr, vaddr) = single_page(rec)?;
        let p = self.tlb.lookup_l1(instr, vaddr)?;
        Some(self.physical_of(p))
    }

    /// [`Self::translate_fast`] of a core without a swap
    /// ([`Self::swap`] is `None`: translated addresses are physical), for
    /// loops that check that once.
    #[inline(always)]
    pub fn translate_fast_unswapped(&mut self, rec: Record) -> Option<u64> {
        debug_assert!(self.swap.is_none());
        let (instr, vaddr) = single_page(rec)?;
        self.tlb.lookup_l1(instr, vaddr)
    }

    /// [`Self::translate_fast`] of the page of the last first-level TLB
    /// hit only ([`Tlb::lookup_last`]); `None` (nothing counted, nothing
    /// changed) for any other record.
    ///
    /// [`Tlb::lookup_last`]: crate::memory::tlb::Tlb::lookup_last
    #[inline(always)]
    pub fn translate_last(&mut self, rec: Record) -> Option<u64> {
        let (instr, vaddr) = single_page(rec)?;
        let p = self.tlb.lookup_last(instr, vaddr)?;
        Some(self.physical_of(p))
    }

    /// [`Self::translate_single`] after [`Self::translate_fast`] gave
    /// `None`: the same, without probing the first-level TLBs again
    /// (they do not hold the page).
    #[inline(always)]
    pub fn translate_missed<A: FrameAllocator + ?Sized>(
        &mut self,
        rec: Record,
        alloc: &mut A,
    ) -> Option<Result<u64, MemoryError>> {
        let (instr, vaddr) = single_page(rec)?;
        let hit = self.tlb.l1_missed(instr, vaddr);
        Some(self.hit_or_walk(instr, vaddr, hit, alloc))
    }

    /// [`Self::translate_missed`] when the STLB holds the page
    /// ([`Tlb::stlb_hit`]): counts what it would count and gives the
    /// physical address; `None` (nothing counted, nothing changed) for an
    /// escape, a page-crossing access or an STLB miss.
    ///
    /// [`Tlb::stlb_hit`]: crate::memory::tlb::Tlb::stlb_hit
    #[inline(always)]
    pub fn translate_stlb(&mut self, rec: Record) -> Option<u64> {
        let (instr, vaddr) = single_page(rec)?;
        let p = self.tlb.stlb_hit(instr, vaddr)?;
        Some(self.physical_of(p))
    }

    /// The physical address of `vaddr` from a TLB's answer `hit`, walking
    /// the page table (fresh walk loads) when the TLBs missed.
    #[inline(always)]
    fn hit_or_walk<A: FrameAllocator + ?Sized>(
        &mut self,
        instr: bool,
        vaddr: u64,
        hit: Option<u64>,
        alloc: &mut A,
    ) -> Result<u64, MemoryError> {
        match hit {
            Some(p) => Ok(self.physical_of(p)),
            None => {
                self.walk_loads.clear();
                self.walk(instr, vaddr, alloc).map(|p| self.physical_of(p))
            }
        }
    }
}

/// Whether `rec` is an access (not an escape) within one 4 KiB page: then
/// whether it is an instruction fetch, and its virtual address.
#[inline(always)]
fn single_page(rec: Record) -> Option<(bool, u64)> {
    let kind = rec.kind_code();
    if kind == Kind::Escape as u64 {
        return None;
    }
    let vaddr = rec.addr_unchecked();
    let last = vaddr.wrapping_add(rec.size_unchecked() - 1);
    if (vaddr ^ last) >= PageSize::Small.bytes() {
        return None;
    }
    Some((kind == Kind::Ifetch as u64, vaddr))
}
