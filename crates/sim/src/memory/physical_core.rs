//! A core that runs one application in physical mode: every address of
//! its trace is translated (TLBs, then the page table, mapping pages on
//! first touch) before it reaches the caches, so the shared LLC is
//! indexed by physical addresses.
//!
//! The [`Hierarchy`] is unchanged: it gets records whose addresses are
//! physical. An access whose bytes span two pages is split into one record
//! per page (the first keeps the instruction gap) unless the two pages
//! happen to be physically contiguous; splits are counted, and the
//! instruction count is corrected for split instruction fetches. The LLC
//! and the frame allocator are lent on each call, as both are shared by
//! every core. `munmap` escape records (an address, then a length) unmap
//! the range and drop its translations from this core's TLBs (one by one
//! up to 33 pages, else a full flush, Linux's
//! `tlb_single_page_flush_ceiling`). Other escapes pass through.
//!
//! Under SWAP ([`PhysicalCore::set_swap`]) the page tables and TLBs hold
//! pseudo-physical frames and every translated address goes through the
//! [`SwapMap`] before it reaches the caches. The swap is applied in front
//! of the first level whatever its configured position: the candidate
//! bits lie above every private cache's set index and the swap is a
//! bijection of lines, so a private cache indexed by pseudo-physical
//! addresses hits and misses exactly as one indexed by physical
//! addresses (tested in `tests/swap.rs`); only the LLC and memory see the
//! difference.
//!
//! With walks through the caches (`walk = "hierarchy"`, see
//! [`super::page_walk`]) a walk leaves its page-table loads (entry
//! addresses from the address space's [`AddressSpace::table_entry`],
//! through the swap map under SWAP) pending; the caller issues them into
//! the hierarchy before the access's own records
//! ([`PhysicalCore::issue_walk_loads`]; [`PhysicalCore::access`] does it).
//! Each translation drops the loads of the one before.

use cachepart_trace::{Event, Kind, Record};

use super::address_space::{AddressSpace, PagingStats};
use super::allocator::FrameAllocator;
use super::error::MemoryError;
use super::page::PageSize;
use super::swap_map::SwapMap;
use super::tlb::{Tlb, TlbStats};
use crate::cache::Cache;
use crate::hierarchy::{Hierarchy, HierarchyStats, Served};

/// Pages an unmap invalidates one by one before flushing the TLB instead.
pub const TLB_FLUSH_CEILING: u64 = 33;

/// Counters of a physical core.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhysicalStats {
    /// The caches' counters (instructions corrected for split fetches).
    pub hierarchy: HierarchyStats,
    /// The TLBs' counters.
    pub tlb: TlbStats,
    /// The page table's counters.
    pub paging: PagingStats,
    /// Accesses split in two because they crossed into a page that is not
    /// physically contiguous.
    pub split_accesses: u64,
}

/// The translated form of one record: one or two records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Translated {
    recs: [Record; 2],
    len: usize,
}

impl Translated {
    /// The records, in order.
    pub fn records(&self) -> &[Record] {
        &self.recs[..self.len]
    }
}

/// One core running one application on physical addresses.
#[derive(Clone, Debug)]
pub struct PhysicalCore {
    hier: Hierarchy,
    tlb: Tlb,
    space: AddressSpace,
    pending_munmap: Option<u64>,
    split_accesses: u64,
    split_fetches: u64,
    swap: Option<SwapMap>,
    /// Page-table loads of the last translation's walks (physical
    /// addresses), not yet issued.
    walk_loads: Vec<u64>,
}

fn physical(kind: Kind, paddr: u64, size: u32, gap: u32) -> Record {
    Record::access(kind, paddr, size, gap).expect("a physical address fits in 48 bits")
}

impl PhysicalCore {
    /// A core with private caches `hier`, TLBs `tlb` and the address space
    /// `space` of the application it runs.
    pub fn new(hier: Hierarchy, tlb: Tlb, space: AddressSpace) -> PhysicalCore {
        PhysicalCore {
            hier,
            tlb,
            space,
            pending_munmap: None,
            split_accesses: 0,
            split_fetches: 0,
            swap: None,
            walk_loads: Vec::new(),
        }
    }

    /// Puts SWAP's bit swap between the page tables (pseudo-physical
    /// frames) and the caches (physical addresses); `None` removes it.
    pub fn set_swap(&mut self, swap: Option<SwapMap>) {
        self.swap = swap;
    }

    /// The swap, if any.
    pub fn swap(&self) -> Option<&SwapMap> {
        self.swap.as_ref()
    }

    /// The physical address of translated (pseudo-physical) `p`.
    #[inline(always)]
    fn physical_of(&self, p: u64) -> u64 {
        match &self.swap {
            Some(s) => s.to_physical(p),
            None => p,
        }
    }

    /// The private caches.
    pub fn hierarchy(&self) -> &Hierarchy {
        &self.hier
    }

    /// The private caches, mutably (way masks).
    pub fn hierarchy_mut(&mut self) -> &mut Hierarchy {
        &mut self.hier
    }

    /// The address space.
    pub fn address_space(&self) -> &AddressSpace {
        &self.space
    }

    /// Puts `space` in place of the current address space and returns the
    /// old one (a context switch to another application).
    pub fn replace_address_space(&mut self, space: AddressSpace) -> AddressSpace {
        self.pending_munmap = None;
        std::mem::replace(&mut self.space, space)
    }

    /// The TLBs.
    pub fn tlb(&self) -> &Tlb {
        &self.tlb
    }

    /// The address space, mutably (recoloring; drop the pages it moves or
    /// marks from [`Self::tlb_mut`]).
    pub fn address_space_mut(&mut self) -> &mut AddressSpace {
        &mut self.space
    }

    /// The TLBs, mutably (flushes at context switches, invalidations
    /// after recoloring).
    pub fn tlb_mut(&mut self) -> &mut Tlb {
        &mut self.tlb
    }

    /// The counters so far.
    pub fn stats(&self) -> PhysicalStats {
        let mut hierarchy = self.hier.stats();
        hierarchy.instructions -= self.split_fetches;
        PhysicalStats {
            hierarchy,
            tlb: self.tlb.stats(),
            paging: *self.space.stats(),
            split_accesses: self.split_accesses,
        }
    }

    /// The physical address of `vaddr`, through the TLBs and, on a miss,
    /// the page table (mapping the page if it is new).
    fn translate_addr<A: FrameAllocator + ?Sized>(
        &mut self,
        instr: bool,
        vaddr: u64,
        alloc: &mut A,
    ) -> Result<u64, MemoryError> {
        let p = match self.tlb.lookup(instr, vaddr) {
            Some(p) => p,
            None => self.walk(instr, vaddr, alloc)?,
        };
        Ok(self.physical_of(p))
    }

    /// The TLBs missed `vaddr` (and counted the walk): the page table
    /// gives its frame (mapping the page if it is new), which fills the
    /// TLBs.
    #[inline(never)]
    fn walk<A: FrameAllocator + ?Sized>(
        &mut self,
        instr: bool,
        vaddr: u64,
        alloc: &mut A,
    ) -> Result<u64, MemoryError> {
        let (size, vpn, frame) = self.space.touch(vaddr, alloc)?;
        if self.space.has_invalidations() {
            for (s, v) in self.space.take_invalidations() {
                self.tlb.invalidate(s, v); // pages paged out to make room
            }
        }
        self.tlb.fill(instr, size, vpn, frame.addr());
        if let Some(levels) = self.tlb.walk_levels(vaddr, size) {
            for level in levels.rev() {
                let e = self.space.table_entry(level, vaddr);
                self.walk_loads.push(self.physical_of(e));
            }
        }
        Ok(frame.addr() | (vaddr & (size.bytes() - 1)))
    }

    /// The page-table loads the last translation's walks left pending
    /// (physical addresses, in walk order).
    pub fn walk_loads(&self) -> &[u64] {
        &self.walk_loads
    }

    /// Issues the pending page-table loads into the hierarchy (and `llc`),
    /// counting each in the TLB statistics by the level that served it
    /// and telling `each` that level.
    pub fn issue_walk_loads(&mut self, llc: &mut Cache, mut each: impl FnMut(Served)) {
        for &a in &self.walk_loads {
            let served = self.hier.walk_load(llc, a);
            self.tlb.count_walk_load(served as usize);
            each(served);
        }
        self.walk_loads.clear();
    }

    /// Translates one record (mapping pages as needed); escape records
    /// come back unchanged, after acting on `munmap`.
    pub fn translate<A: FrameAllocator + ?Sized>(
        &mut self,
        rec: Record,
        alloc: &mut A,
    ) -> Result<Translated, MemoryError> {
        self.walk_loads.clear();
        let kind = rec.kind();
        if kind == Kind::Escape {
            self.event(rec, alloc);
            return Ok(Translated {
                recs: [rec; 2],
                len: 1,
            });
        }
        let instr = kind == Kind::Ifetch;
        let vaddr = rec.addr();
        let size = rec.size();
        let p = self.translate_addr(instr, vaddr, alloc)?;
        let last = vaddr.wrapping_add(u64::from(size) - 1);
        if PageSize::Small.page_of(vaddr) == PageSize::Small.page_of(last) {
            return Ok(Translated {
                recs: [physical(kind, p, size, rec.gap()); 2],
                len: 1,
            });
        }
        // The access crosses a 4 KiB boundary: translate the second page
        // too (one more TLB lookup; inside one superpage, or across
        // physically adjacent frames, the access stays whole).
        let first_len = (PageSize::Small.bytes() - (vaddr & (PageSize::Small.bytes() - 1))) as u32;
        let p2 = self.translate_addr(instr, vaddr.wrapping_add(u64::from(first_len)), alloc)?;
        if p2 == p + u64::from(first_len) {
            return Ok(Translated {
                recs: [physical(kind, p, size, rec.gap()); 2],
                len: 1,
            });
        }
        self.split_accesses += 1;
        self.split_fetches += u64::from(instr);
        Ok(Translated {
            recs: [
                physical(kind, p, first_len, rec.gap()),
                physical(kind, p2, size - first_len, 0),
            ],
            len: 2,
        })
    }

    /// Translates `rec` and simulates it against the shared `llc`.
    #[inline]
    pub fn access<A: FrameAllocator + ?Sized>(
        &mut self,
        llc: &mut Cache,
        alloc: &mut A,
        rec: Record,
    ) -> Result<(), MemoryError> {
        let t = self.translate(rec, alloc)?;
        if !self.walk_loads.is_empty() {
            self.issue_walk_loads(llc, |_| {});
        }
        for &r in t.records() {
            self.hier.access(llc, r);
        }
        Ok(())
    }

    /// Runs every record of `records`; stops at the first error.
    pub fn run<A: FrameAllocator + ?Sized, I: IntoIterator<Item = Record>>(
        &mut self,
        llc: &mut Cache,
        alloc: &mut A,
        records: I,
    ) -> Result<(), MemoryError> {
        for r in records {
            self.access(llc, alloc, r)?;
        }
        Ok(())
    }

    /// Unmaps the application's whole address space (it exits).
    pub fn release<A: FrameAllocator + ?Sized>(&mut self, alloc: &mut A) {
        self.space.release(alloc);
        self.tlb.flush();
    }

    fn event<A: FrameAllocator + ?Sized>(&mut self, rec: Record, alloc: &mut A) {
        match rec.as_event() {
            Some(Event::Munmap(addr)) => self.pending_munmap = Some(addr),
            Some(Event::Length(len)) => {
                if let Some(start) = self.pending_munmap.take() {
                    let pages = len.div_ceil(PageSize::Small.bytes());
                    let tlb = &mut self.tlb;
                    if pages > TLB_FLUSH_CEILING {
                        tlb.flush();
                        self.space.unmap(start, len, alloc, |_, _| {});
                    } else {
                        self.space
                            .unmap(start, len, alloc, |size, vpn| tlb.invalidate(size, vpn));
                    }
                }
            }
            Some(_) => self.pending_munmap = None,
            None => {}
        }
    }
}

mod fast;

#[cfg(test)]
mod tests;
