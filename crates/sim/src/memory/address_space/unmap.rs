//! Unmapping (`munmap`, exit) and the listings of an address space's
//! mappings.

use super::{AddressSpace, SMALL_PER_HUGE};
use crate::memory::allocator::FrameAllocator;
use crate::memory::page::{Frame, PageSize, HUGE_ORDER};

impl AddressSpace {
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
