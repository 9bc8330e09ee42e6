//! One application's virtual address space: its page table, mapped on
//! first touch by a [`FrameAllocator`].
//!
//! A page is mapped the first time it is touched (a page fault), with
//! 4 KiB pages or, under [`HugePages::Always`] (Linux's transparent huge
//! pages set to `always`), with a 2 MiB superpage when the aligned 2 MiB
//! region holds no 4 KiB page yet and an order-9 block is free; otherwise
//! it falls back to 4 KiB, as THP does. Unmapping (`munmap`) frees the
//! frames; a superpage partly unmapped is first split into 512 4 KiB
//! pages (its frames stay where they are), as Linux splits a THP.
//!
//! The allocator is lent on each call, because physical memory is shared
//! by every address space; so is a callback told of every translation that
//! disappears, for the TLBs to drop it.
//!
//! **Page-outs.** Memory is finite, and memory per color more so. When
//! the allocator has no 4 KiB frame for a fault
//! ([`MemoryError::OutOfMemory`], or [`MemoryError::ColorsExhausted`] for
//! a colored app), one of this application's own resident 4 KiB pages is
//! paged out and the allocation retried. The victim is the page mapped
//! longest ago (FIFO over faults and page-ins, deterministic) among those
//! whose frame is of one of the app's colors (any frame if the app has no
//! color set), so the frame freed is one the app may use. A page-out
//! costs [`PagingCosts::page_out_us`]; touching a paged-out page faults
//! and pages it in ([`PagingCosts::page_in_us`]). Both times add up in
//! [`PagingStats::swap_ns`], charged to the app. The victim's translation
//! must leave the TLBs: [`AddressSpace::take_invalidations`] hands the
//! list to the caller after each call that may page out. Only when no
//! victim exists is the error returned.
//!
//! **Recoloring** ([`crate::memory::recolor`]) acts through
//! [`AddressSpace::mark_recolor`] (lazy: the page moves on its next touch,
//! i.e. on the next page walk after its TLB entry was dropped),
//! [`AddressSpace::move_page`] (at once) and the access bits
//! ([`AddressSpace::clear_accessed`], [`AddressSpace::accessed_pages`]);
//! each move costs a page copy ([`PagingCosts::page_copy_us`]), counted in
//! [`PagingStats::pages_recolored`] and [`PagingStats::copy_ns`].

mod paging;
mod recoloring;
#[cfg(test)]
mod tests;
mod unmap;

use std::collections::VecDeque;

use super::allocator::{AllocHint, FrameAllocator};
use super::error::MemoryError;
use super::page::{Frame, PageSize, HUGE_ORDER};
use super::page_table::{PageMap, Pte, SmallPages};
use super::page_walk::{TableColors, TablePlacement};
use paging::CostsNs;

pub use paging::{HugePages, HugeRecolor, PagingCosts, PagingStats};

const ACCESSED: u8 = 1;
const RECOLOR: u8 = 2;

const SMALL_PER_HUGE: u64 = 1 << HUGE_ORDER;

/// One application's page table.
#[derive(Clone, Debug)]
pub struct AddressSpace {
    app: u32,
    huge: HugePages,
    small: SmallPages,
    large: PageMap<Frame>,
    /// 4 KiB pages mapped or paged out in each 2 MiB region.
    small_in_region: PageMap<u32>,
    /// Paged-out 4 KiB pages.
    swapped: PageMap<()>,
    /// Page-out candidates, oldest first: (vpn, seq); stale entries (the
    /// page is gone or was mapped again) are skipped.
    fifo: VecDeque<(u64, u64)>,
    next_seq: u64,
    /// Translations removed by page-outs, for the caller's TLBs.
    invalidations: Vec<(PageSize, u64)>,
    /// Frames handed to this space since the last
    /// [`AddressSpace::take_fresh_frames`] (frame, order): the kernel
    /// zeroes them, so the caller drops their cached lines.
    fresh: Vec<(Frame, u32)>,
    /// Whether `fresh` is kept ([`AddressSpace::track_fresh_frames`]).
    track_fresh: bool,
    /// Shared virtual ranges `[start, end)`.
    shared: Vec<(u64, u64)>,
    costs: CostsNs,
    stats: PagingStats,
    /// Where its page tables lie (walks through the caches).
    tables: TablePlacement,
    /// Whether new tables take the app's colors.
    table_colors: TableColors,
}

impl AddressSpace {
    /// An empty address space of application `app`, default costs.
    pub fn new(app: u32, huge: HugePages) -> AddressSpace {
        AddressSpace {
            app,
            huge,
            small: SmallPages::default(),
            large: PageMap::default(),
            small_in_region: PageMap::default(),
            swapped: PageMap::default(),
            fifo: VecDeque::new(),
            next_seq: 0,
            invalidations: Vec::new(),
            fresh: Vec::new(),
            track_fresh: false,
            shared: Vec::new(),
            costs: PagingCosts::default().into(),
            stats: PagingStats::default(),
            tables: TablePlacement::default(),
            table_colors: TableColors::Any,
        }
    }

    /// Which colors page tables created from now on take
    /// (`memory.page-table-colors`; [`TableColors::Any`] by default).
    /// With [`TableColors::Owner`], [`AddressSpace::touch`] places the
    /// tables that translate the page it maps or finds on frames of the
    /// app's colors as the allocator holds them at that moment (tables
    /// already placed stay; an app without a color set, or an allocator
    /// that does not color, leaves them to [`AddressSpace::table_entry`]).
    pub fn set_table_colors(&mut self, colors: TableColors) {
        self.table_colors = colors;
    }

    /// Sets the costs charged for page copies, page-outs and page-ins.
    pub fn set_costs(&mut self, costs: &PagingCosts) -> Result<(), MemoryError> {
        costs.check()?;
        self.costs = (*costs).into();
        Ok(())
    }

    /// Marks `[start, start + len)` as shared with other applications:
    /// its pages are allocated with [`AllocHint::shared`] set.
    pub fn mark_shared(&mut self, start: u64, len: u64) {
        self.shared.push((start, start.saturating_add(len)));
    }

    fn is_shared(&self, vaddr: u64) -> bool {
        self.shared.iter().any(|&(a, b)| (a..b).contains(&vaddr))
    }

    fn hint(&self, vaddr: u64) -> AllocHint {
        AllocHint {
            shared: self.is_shared(vaddr),
            ..AllocHint::for_page(self.app, vaddr)
        }
    }

    /// Translations that page-outs removed since the last call: the
    /// caller drops them from its TLBs.
    pub fn take_invalidations(&mut self) -> Vec<(PageSize, u64)> {
        std::mem::take(&mut self.invalidations)
    }

    /// Whether page-outs removed translations since the last
    /// [`AddressSpace::take_invalidations`].
    #[inline]
    pub fn has_invalidations(&self) -> bool {
        !self.invalidations.is_empty()
    }

    /// Keeps a log of the frames handed to this space from now on, for
    /// [`AddressSpace::take_fresh_frames`] (off by default: a caller that
    /// never drains it does not grow it).
    pub fn track_fresh_frames(&mut self, on: bool) {
        self.track_fresh = on;
        if !on {
            self.fresh.clear();
        }
    }

    /// Whether frames were handed to this space since the last
    /// [`AddressSpace::take_fresh_frames`].
    #[inline]
    pub fn has_fresh_frames(&self) -> bool {
        !self.fresh.is_empty()
    }

    /// Moves the frames handed to this space since the last call (frame,
    /// buddy order) into `into`: each is a page the kernel zeroed before
    /// mapping it (first touch, page-in or recoloring copy), whose old
    /// cached lines the caller drops.
    pub fn take_fresh_frames(&mut self, into: &mut Vec<(Frame, u32)>) {
        into.append(&mut self.fresh);
    }

    /// The physical address of the level-`level` page-table entry (4 =
    /// PML4 ... 1 = PT) that translates `vaddr`, placing its table if it
    /// is new ([`TablePlacement`]: a reserved region, in first-use order;
    /// tables [`AddressSpace::touch`] placed by color are where it put
    /// them).
    pub fn table_entry(&mut self, level: u32, vaddr: u64) -> u64 {
        self.tables.entry(self.app, level, vaddr)
    }

    /// The application id.
    pub fn app(&self) -> u32 {
        self.app
    }

    /// The counters.
    pub fn stats(&self) -> &PagingStats {
        &self.stats
    }

    /// The mapping of `vaddr`, if any: page size, virtual page number (at
    /// that size) and first frame.
    #[inline]
    pub fn lookup(&self, vaddr: u64) -> Option<(PageSize, u64, Frame)> {
        let hv = PageSize::Huge.page_of(vaddr);
        if let Some(&f) = self.large.get(&hv) {
            return Some((PageSize::Huge, hv, f));
        }
        let sv = PageSize::Small.page_of(vaddr);
        self.small
            .frame_flags(sv)
            .map(|(f, _)| (PageSize::Small, sv, f))
    }

    /// The mapping of `vaddr`, mapping its page first if it has none (a
    /// page fault; see the module's documentation for the page size),
    /// paging a paged-out page back in, or moving a page marked for
    /// recoloring. This is the page walk: it sets the page's access bit.
    /// With [`TableColors::Owner`] it also places the page's tables
    /// ([`AddressSpace::set_table_colors`]).
    pub fn touch<A: FrameAllocator + ?Sized>(
        &mut self,
        vaddr: u64,
        alloc: &mut A,
    ) -> Result<(PageSize, u64, Frame), MemoryError> {
        let mapped = self.touch_page(vaddr, alloc)?;
        if self.table_colors == TableColors::Owner {
            self.color_tables(vaddr, mapped.0, alloc);
        }
        Ok(mapped)
    }

    /// Places the tables a walk of `vaddr` (a page of `size`) reads on
    /// frames of the app's colors, those that do not exist yet.
    fn color_tables<A: FrameAllocator + ?Sized>(&mut self, vaddr: u64, size: PageSize, alloc: &A) {
        let (Some(layout), Some(colors)) = (alloc.color_layout(), alloc.app_colors(self.app))
        else {
            return;
        };
        let leaf = if size == PageSize::Huge { 2 } else { 1 };
        for level in (leaf..=4).rev() {
            self.tables
                .place_colored(self.app, level, vaddr, colors, layout);
        }
    }

    /// [`AddressSpace::touch`] without the tables.
    fn touch_page<A: FrameAllocator + ?Sized>(
        &mut self,
        vaddr: u64,
        alloc: &mut A,
    ) -> Result<(PageSize, u64, Frame), MemoryError> {
        let hv = PageSize::Huge.page_of(vaddr);
        // Without superpages (4 KiB pages only) the walk skips their map.
        if !self.large.is_empty() {
            if let Some(&f) = self.large.get(&hv) {
                return Ok((PageSize::Huge, hv, f));
            }
        }
        let sv = PageSize::Small.page_of(vaddr);
        if let Some((frame, flags)) = self.small.update_flags(sv, |f| f | ACCESSED) {
            if flags & RECOLOR == 0 {
                return Ok((PageSize::Small, sv, frame));
            }
            let frame = match self.move_page(sv, None, alloc) {
                Ok(f) => f,
                Err(_) => {
                    self.stats.recolor_failures += 1;
                    self.small
                        .update_flags(sv, |f| f & !RECOLOR)
                        .expect("still mapped")
                        .0
                }
            };
            return Ok((PageSize::Small, sv, frame));
        }
        if self.swapped.contains_key(&sv) {
            let f = self.alloc_small(alloc, self.hint(sv << PageSize::Small.bits()), Some(sv))?;
            self.swapped.remove(&sv);
            self.insert_small(sv, f);
            self.stats.page_ins += 1;
            self.stats.swap_ns += self.costs.inn;
            return Ok((PageSize::Small, sv, f));
        }
        if self.huge == HugePages::Always && !self.small_in_region.contains_key(&hv) {
            let hint = self.hint(hv << PageSize::Huge.bits());
            match alloc.alloc(HUGE_ORDER, hint) {
                Ok(f) => {
                    if self.track_fresh {
                        self.fresh.push((f, u32::from(HUGE_ORDER)));
                    }
                    self.large.insert(hv, f);
                    self.stats.faults_2m += 1;
                    return Ok((PageSize::Huge, hv, f));
                }
                Err(MemoryError::OutOfMemory { .. }) => self.stats.huge_fallbacks += 1,
                Err(e) => return Err(e),
            }
        }
        let f = self.alloc_small(alloc, self.hint(sv << PageSize::Small.bits()), Some(sv))?;
        self.insert_small(sv, f);
        *self.small_in_region.entry(hv).or_insert(0) += 1;
        self.stats.faults_4k += 1;
        Ok((PageSize::Small, sv, f))
    }

    fn insert_small(&mut self, vpn: u64, frame: Frame) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.small.insert(
            vpn,
            Pte {
                frame,
                seq,
                flags: ACCESSED,
            },
        );
        self.fifo.push_back((vpn, seq));
        if self.fifo.len() > 2 * self.small.len() + 64 {
            let small = &self.small;
            self.fifo
                .retain(|&(v, q)| small.get(v).is_some_and(|p| p.seq == q));
        }
    }

    /// A 4 KiB frame for `hint`, paging out this app's pages (never
    /// `keep`) while the allocator has none.
    fn alloc_small<A: FrameAllocator + ?Sized>(
        &mut self,
        alloc: &mut A,
        hint: AllocHint,
        keep: Option<u64>,
    ) -> Result<Frame, MemoryError> {
        loop {
            match alloc.alloc(0, hint) {
                Ok(f) => {
                    if self.track_fresh {
                        self.fresh.push((f, 0));
                    }
                    return Ok(f);
                }
                Err(
                    e @ (MemoryError::OutOfMemory { .. } | MemoryError::ColorsExhausted { .. }),
                ) => {
                    if !self.page_out_one(alloc, keep) {
                        return Err(e);
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Pages out the oldest resident 4 KiB page whose frame fits the
    /// app's colors (not `keep`); false if there is none.
    fn page_out_one<A: FrameAllocator + ?Sized>(
        &mut self,
        alloc: &mut A,
        keep: Option<u64>,
    ) -> bool {
        let mut i = 0;
        while i < self.fifo.len() {
            let (vpn, seq) = self.fifo[i];
            let Some(p) = self.small.get(vpn).filter(|p| p.seq == seq) else {
                self.fifo.remove(i);
                continue;
            };
            if Some(vpn) == keep || !alloc.frame_fits(self.app, p.frame) {
                i += 1;
                continue;
            }
            self.fifo.remove(i);
            self.small.remove(vpn);
            self.swapped.insert(vpn, ());
            alloc.free(p.frame, 0);
            self.invalidations.push((PageSize::Small, vpn));
            self.stats.page_outs += 1;
            self.stats.swap_ns += self.costs.out;
            return true;
        }
        false
    }
}
