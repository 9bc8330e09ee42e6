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

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::allocator::{AllocHint, FrameAllocator};
use super::error::MemoryError;
use super::page::{Frame, PageSize, HUGE_ORDER};
use super::page_table::{PageMap, Pte, SmallPages};
use super::page_walk::TablePlacement;

/// Costs of paging and recoloring, charged to the application's time
/// (scenario key `costs` of the memory section).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct PagingCosts {
    /// Microseconds to copy one 4 KiB page (a recoloring move; default 3,
    /// the figure Zhang et al. measured).
    #[serde(default = "default_copy")]
    pub page_copy_us: f64,
    /// Microseconds to page one 4 KiB page out (default 20: reclaim and
    /// an asynchronous write to swap).
    #[serde(default = "default_out")]
    pub page_out_us: f64,
    /// Microseconds to page one 4 KiB page in (default 100: a random
    /// 4 KiB read from a solid-state swap device).
    #[serde(default = "default_in")]
    pub page_in_us: f64,
}

fn default_copy() -> f64 {
    3.0
}
fn default_out() -> f64 {
    20.0
}
fn default_in() -> f64 {
    100.0
}

impl Default for PagingCosts {
    fn default() -> PagingCosts {
        PagingCosts {
            page_copy_us: default_copy(),
            page_out_us: default_out(),
            page_in_us: default_in(),
        }
    }
}

impl PagingCosts {
    /// Checks that every cost is a finite, non-negative number.
    pub fn check(&self) -> Result<(), MemoryError> {
        for (field, v) in [
            ("costs.page-copy-us", self.page_copy_us),
            ("costs.page-out-us", self.page_out_us),
            ("costs.page-in-us", self.page_in_us),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(MemoryError::Config {
                    field,
                    reason: format!("{v} is not a finite number of microseconds >= 0"),
                });
            }
        }
        Ok(())
    }
}

fn ns(us: f64) -> u64 {
    (us * 1000.0).round().max(0.0) as u64
}

/// The costs in integer nanoseconds (so counters stay exact).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CostsNs {
    copy: u64,
    out: u64,
    inn: u64,
}

impl From<PagingCosts> for CostsNs {
    fn from(c: PagingCosts) -> CostsNs {
        CostsNs {
            copy: ns(c.page_copy_us),
            out: ns(c.page_out_us),
            inn: ns(c.page_in_us),
        }
    }
}

/// When pages are mapped as 2 MiB superpages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HugePages {
    /// Only 4 KiB pages.
    #[default]
    Never,
    /// A superpage on the first touch of an empty aligned 2 MiB region,
    /// falling back to 4 KiB when no order-9 block is free.
    Always,
}

/// Page-table counters of one address space.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PagingStats {
    /// First touches mapped with a 4 KiB page.
    pub faults_4k: u64,
    /// First touches mapped with a 2 MiB page.
    pub faults_2m: u64,
    /// Superpage faults that fell back to 4 KiB (no order-9 block free).
    pub huge_fallbacks: u64,
    /// Superpages split into 4 KiB pages by a partial unmap.
    pub splits: u64,
    /// 4 KiB pages unmapped.
    pub unmapped_4k: u64,
    /// 2 MiB pages unmapped.
    pub unmapped_2m: u64,
    /// 4 KiB pages paged out to make room (memory or the app's colors
    /// exhausted).
    pub page_outs: u64,
    /// Paged-out pages touched again and paged back in.
    pub page_ins: u64,
    /// Nanoseconds of page-outs and page-ins, charged to the app.
    pub swap_ns: u64,
    /// Pages moved to a frame of another color (lazily on touch, or at
    /// once by Selective Moving).
    pub pages_recolored: u64,
    /// Nanoseconds of page copies for recoloring, charged to the app.
    pub copy_ns: u64,
    /// Marked pages that could not move (no frame at all): they stay.
    pub recolor_failures: u64,
    /// Superpages recolored by a move of the whole 2 MiB
    /// ([`AddressSpace::recolor_huge`]; each also counts 512 pages in
    /// `pages_recolored` and 512 page copies in `copy_ns`).
    #[serde(default)]
    pub superpages_moved: u64,
    /// Superpages recolored by a split into 4 KiB pages that move lazily
    /// ([`AddressSpace::recolor_huge`]).
    #[serde(default)]
    pub superpage_recolor_splits: u64,
}

/// What [`AddressSpace::recolor_huge`] did with a superpage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HugeRecolor {
    /// Moved whole to a new 2 MiB block from the allocator (under SWAP, a
    /// pseudo-superpage of the app's colors): 512 page copies at once.
    Moved(Frame),
    /// No 2 MiB block was free: split into 512 4 KiB pages in place, of
    /// which `marked` (those not of the app's colors) move lazily on their
    /// next touch, one page copy each.
    Split {
        /// 4 KiB pages marked for a lazy move.
        marked: u64,
    },
}

impl PagingStats {
    /// Nanoseconds the app spent in paging and recoloring (`swap_ns +
    /// copy_ns`), for the timing loop to add to its time.
    pub fn stall_ns(&self) -> u64 {
        self.swap_ns + self.copy_ns
    }
}

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
        }
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
    /// is new ([`TablePlacement`]: a reserved region, in first-use order).
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
    pub fn touch<A: FrameAllocator + ?Sized>(
        &mut self,
        vaddr: u64,
        alloc: &mut A,
    ) -> Result<(PageSize, u64, Frame), MemoryError> {
        let hv = PageSize::Huge.page_of(vaddr);
        if let Some(&f) = self.large.get(&hv) {
            return Ok((PageSize::Huge, hv, f));
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

    /// Moves 4 KiB page `vpn` to a new frame (of color `target` if given
    /// and available, else as the allocator's round-robin over the app's
    /// colors picks), frees the old frame and charges a page copy. The
    /// caller drops the page's old translation from its TLBs. The page's
    /// recoloring mark is cleared.
    pub fn move_page<A: FrameAllocator + ?Sized>(
        &mut self,
        vpn: u64,
        target: Option<u32>,
        alloc: &mut A,
    ) -> Result<Frame, MemoryError> {
        if !self.small.contains(vpn) {
            return Err(MemoryError::NotMapped { vpn });
        }
        let hint = AllocHint {
            color: target,
            ..self.hint(vpn << PageSize::Small.bits())
        };
        let new = self.alloc_small(alloc, hint, Some(vpn))?;
        let (old, _) = self
            .small
            .update_flags(vpn, |f| f & !RECOLOR)
            .expect("kept mapped");
        self.small.set_frame(vpn, new);
        alloc.free(old, 0);
        self.stats.pages_recolored += 1;
        self.stats.copy_ns += self.costs.copy;
        Ok(new)
    }

    /// Recolors superpage `hv` (a 2 MiB virtual page number) after the
    /// app's colors changed: moved whole to a new 2 MiB block when the
    /// allocator has one (under SWAP a colored app gets a
    /// pseudo-superpage of its colors), charging 512 page copies; else
    /// split into 4 KiB pages in place whose frames not of the app's
    /// colors are marked for lazy recoloring. Moving first keeps the
    /// superpage's single TLB entry, which is what SWAP is for; a split
    /// superpage is never rebuilt in this model. The caller drops the
    /// superpage's translation from its TLBs. `None` when `hv` is not a
    /// superpage of this space.
    pub fn recolor_huge<A: FrameAllocator + ?Sized>(
        &mut self,
        hv: u64,
        alloc: &mut A,
    ) -> Option<HugeRecolor> {
        let old = *self.large.get(&hv)?;
        let hint = self.hint(hv << PageSize::Huge.bits());
        if let Ok(new) = alloc.alloc(HUGE_ORDER, hint) {
            if self.track_fresh {
                self.fresh.push((new, u32::from(HUGE_ORDER)));
            }
            self.large.insert(hv, new);
            alloc.free(old, HUGE_ORDER);
            self.stats.superpages_moved += 1;
            self.stats.pages_recolored += SMALL_PER_HUGE;
            self.stats.copy_ns += SMALL_PER_HUGE * self.costs.copy;
            return Some(HugeRecolor::Moved(new));
        }
        self.large.remove(&hv);
        self.stats.superpage_recolor_splits += 1;
        let mut marked = 0;
        for i in 0..SMALL_PER_HUGE {
            let v = (hv << HUGE_ORDER) + i;
            let f = Frame(old.0 + i);
            self.insert_small(v, f);
            if !alloc.frame_fits(self.app, f) {
                self.mark_recolor(v);
                marked += 1;
            }
        }
        self.small_in_region.insert(hv, SMALL_PER_HUGE as u32);
        Some(HugeRecolor::Split { marked })
    }

    /// The superpages and their first frames, in address order.
    pub fn huge_pages(&self) -> Vec<(u64, Frame)> {
        let mut v: Vec<(u64, Frame)> = self.large.iter().map(|(&v, &f)| (v, f)).collect();
        v.sort_unstable();
        v
    }

    /// Marks resident 4 KiB page `vpn` for lazy recoloring: its next touch
    /// moves it. False if the page is not a resident 4 KiB page.
    pub fn mark_recolor(&mut self, vpn: u64) -> bool {
        self.small.update_flags(vpn, |f| f | RECOLOR).is_some()
    }

    /// Whether page `vpn` is marked for recoloring.
    pub fn is_marked(&self, vpn: u64) -> bool {
        self.small
            .frame_flags(vpn)
            .is_some_and(|(_, f)| f & RECOLOR != 0)
    }

    /// Pages marked for recoloring and not yet moved.
    pub fn marked_pages(&self) -> usize {
        self.small
            .iter()
            .filter(|(_, p)| p.flags & RECOLOR != 0)
            .count()
    }

    /// Clears the access bit of every 4 KiB page (the caller flushes its
    /// TLBs so that the next access of each page walks).
    pub fn clear_accessed(&mut self) {
        self.small.map_flags(|f| f & !ACCESSED);
    }

    /// The 4 KiB pages whose access bit is set, in address order.
    pub fn accessed_pages(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .small
            .iter()
            .filter(|(_, p)| p.flags & ACCESSED != 0)
            .map(|(v, _)| v)
            .collect();
        v.sort_unstable();
        v
    }

    /// The resident 4 KiB pages and their frames, in address order.
    pub fn small_pages(&self) -> Vec<(u64, Frame)> {
        let mut v: Vec<(u64, Frame)> = self.small.iter().map(|(v, p)| (v, p.frame)).collect();
        v.sort_unstable();
        v
    }

    /// The paged-out 4 KiB pages, in address order.
    pub fn swapped_pages(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.swapped.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// Unmaps `[start, start + len)`: frees the frames of every page in
    /// it, splitting superpages it covers only partly, and tells `dropped`
    /// of every translation that no longer exists.
    pub fn unmap<A: FrameAllocator + ?Sized>(
        &mut self,
        start: u64,
        len: u64,
        alloc: &mut A,
        mut dropped: impl FnMut(PageSize, u64),
    ) {
        if len == 0 {
            return;
        }
        let end = start.saturating_add(len); // exclusive
        let hb = PageSize::Huge.bits();
        let sb = PageSize::Small.bits();
        // Superpages overlapping the range, in address order.
        let mut huge: Vec<u64> = self
            .large
            .keys()
            .copied()
            .filter(|&v| (v << hb) < end && ((v + 1) << hb) > start)
            .collect();
        huge.sort_unstable();
        for v in huge {
            let f = self.large.remove(&v).expect("listed above");
            dropped(PageSize::Huge, v);
            if (v << hb) >= start && ((v + 1) << hb) <= end {
                alloc.free(f, HUGE_ORDER);
                self.stats.unmapped_2m += 1;
            } else {
                // Split: the frames become 512 4 KiB pages in place.
                self.stats.splits += 1;
                for i in 0..SMALL_PER_HUGE {
                    self.insert_small((v << HUGE_ORDER) + i, Frame(f.0 + i));
                }
                self.small_in_region.insert(v, SMALL_PER_HUGE as u32);
            }
        }
        // 4 KiB pages in the range: walk the range or the table, whichever
        // is shorter.
        let first = start >> sb;
        let last = (end - 1) >> sb;
        let known = self.small.len() + self.swapped.len();
        let mut pages: Vec<u64> = if last - first < known as u64 {
            (first..=last)
                .filter(|&v| self.small.contains(v) || self.swapped.contains_key(&v))
                .collect()
        } else {
            let mut p: Vec<u64> = self
                .small
                .keys()
                .chain(self.swapped.keys().copied())
                .filter(|v| (first..=last).contains(v))
                .collect();
            p.sort_unstable();
            p
        };
        pages.dedup();
        for v in pages {
            if let Some(p) = self.small.remove(v) {
                alloc.free(p.frame, 0);
                dropped(PageSize::Small, v);
            } else {
                // A paged-out page: its swap slot is dropped.
                self.swapped.remove(&v);
            }
            self.stats.unmapped_4k += 1;
            let region = v >> HUGE_ORDER;
            if let Some(n) = self.small_in_region.get_mut(&region) {
                *n -= 1;
                if *n == 0 {
                    self.small_in_region.remove(&region);
                }
            }
        }
    }

    /// Unmaps everything (the application exits).
    pub fn release<A: FrameAllocator + ?Sized>(&mut self, alloc: &mut A) {
        self.unmap(0, u64::MAX, alloc, |_, _| {});
    }

    /// Every mapping: page size, virtual page number and first frame, in
    /// address order.
    pub fn mappings(&self) -> Vec<(PageSize, u64, Frame)> {
        let mut out: Vec<_> = self
            .large
            .iter()
            .map(|(&v, &f)| (PageSize::Huge, v, f))
            .chain(
                self.small
                    .iter()
                    .map(|(v, p)| (PageSize::Small, v, p.frame)),
            )
            .collect();
        out.sort_unstable_by_key(|&(s, v, _)| (v << s.bits(), s));
        out
    }

    /// 4 KiB frames mapped (a superpage counts 512).
    pub fn resident_frames(&self) -> u64 {
        self.small.len() as u64 + self.large.len() as u64 * SMALL_PER_HUGE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::buddy::BuddyAllocator;

    #[test]
    fn first_touch_maps_once() {
        let mut b = BuddyAllocator::new(16 << 20).unwrap();
        let mut s = AddressSpace::new(0, HugePages::Never);
        let a = s.touch(0x1234, &mut b).unwrap();
        assert_eq!(s.touch(0x1fff, &mut b).unwrap(), a);
        assert_eq!(a.0, PageSize::Small);
        assert_eq!(s.stats().faults_4k, 1);
        assert_eq!(b.free_frames(), 4095);
    }

    #[test]
    fn superpages_fall_back_and_split() {
        // 6 MiB: one order-10 block (4 MiB) and one order-9 (2 MiB).
        let mut b = BuddyAllocator::new(6 << 20).unwrap();
        let mut s = AddressSpace::new(0, HugePages::Always);
        for r in 0..3u64 {
            let (size, _, f) = s.touch(r << 21, &mut b).unwrap();
            assert_eq!(size, PageSize::Huge);
            assert_eq!(f.0 % 512, 0);
        }
        // Memory is full of superpages: a fourth region gets nothing.
        assert!(matches!(
            s.touch(3 << 21, &mut b),
            Err(MemoryError::OutOfMemory { order: 0, .. })
        ));
        assert_eq!(s.stats().huge_fallbacks, 1);
        // Unmap 4 KiB in the middle of region 1: split, one frame freed.
        let mut gone = Vec::new();
        s.unmap((1 << 21) + 8192, 4096, &mut b, |sz, v| gone.push((sz, v)));
        assert_eq!(gone, vec![(PageSize::Huge, 1), (PageSize::Small, 512 + 2)]);
        assert_eq!(s.stats().splits, 1);
        assert_eq!(b.free_frames(), 1);
        assert_eq!(s.resident_frames(), 3 * 512 - 1);
        // The freed frame serves a 4 KiB page of a region that has 4 KiB
        // pages already, so no superpage is tried there.
        let (size, _, _) = s.touch((1 << 21) + 8192, &mut b).unwrap();
        assert_eq!(size, PageSize::Small);
        s.release(&mut b);
        assert_eq!(b.free_frames(), 3 * 512);
        assert_eq!(b.free_list(10).len() + b.free_list(9).len(), 2);
    }
}
