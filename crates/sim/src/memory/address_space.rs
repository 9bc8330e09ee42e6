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
//! disappears, for the TLBs to drop it. Running out of memory is
//! [`MemoryError::OutOfMemory`]; page-outs (issue 4) are to be inserted in
//! [`AddressSpace::touch`] where the allocator fails.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde::{Deserialize, Serialize};

use super::allocator::{AllocHint, FrameAllocator};
use super::error::MemoryError;
use super::page::{Frame, PageSize, HUGE_ORDER};

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
}

/// A fixed multiplicative hash for page numbers (deterministic and fast;
/// page numbers are not adversarial).
#[derive(Default)]
struct PageHasher(u64);

impl Hasher for PageHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(26);
    }
}

type PageMap<V> = HashMap<u64, V, BuildHasherDefault<PageHasher>>;

const SMALL_PER_HUGE: u64 = 1 << HUGE_ORDER;

/// One application's page table.
#[derive(Clone, Debug)]
pub struct AddressSpace {
    app: u32,
    huge: HugePages,
    small: PageMap<Frame>,
    large: PageMap<Frame>,
    /// 4 KiB pages mapped in each 2 MiB region.
    small_in_region: PageMap<u32>,
    stats: PagingStats,
}

impl AddressSpace {
    /// An empty address space of application `app`.
    pub fn new(app: u32, huge: HugePages) -> AddressSpace {
        AddressSpace {
            app,
            huge,
            small: PageMap::default(),
            large: PageMap::default(),
            small_in_region: PageMap::default(),
            stats: PagingStats::default(),
        }
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
        self.small.get(&sv).map(|&f| (PageSize::Small, sv, f))
    }

    /// The mapping of `vaddr`, mapping its page first if it has none (a
    /// page fault; see the module's documentation for the page size).
    pub fn touch<A: FrameAllocator + ?Sized>(
        &mut self,
        vaddr: u64,
        alloc: &mut A,
    ) -> Result<(PageSize, u64, Frame), MemoryError> {
        if let Some(m) = self.lookup(vaddr) {
            return Ok(m);
        }
        let hv = PageSize::Huge.page_of(vaddr);
        if self.huge == HugePages::Always && !self.small_in_region.contains_key(&hv) {
            let hint = AllocHint::for_page(self.app, hv << PageSize::Huge.bits());
            match alloc.alloc(HUGE_ORDER, hint) {
                Ok(f) => {
                    self.large.insert(hv, f);
                    self.stats.faults_2m += 1;
                    return Ok((PageSize::Huge, hv, f));
                }
                Err(MemoryError::OutOfMemory { .. }) => self.stats.huge_fallbacks += 1,
                Err(e) => return Err(e),
            }
        }
        let sv = PageSize::Small.page_of(vaddr);
        let hint = AllocHint::for_page(self.app, sv << PageSize::Small.bits());
        // Issue 4: page out a victim here and retry instead of failing.
        let f = alloc.alloc(0, hint)?;
        self.small.insert(sv, f);
        *self.small_in_region.entry(hv).or_insert(0) += 1;
        self.stats.faults_4k += 1;
        Ok((PageSize::Small, sv, f))
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
                    self.small.insert((v << HUGE_ORDER) + i, Frame(f.0 + i));
                }
                self.small_in_region.insert(v, SMALL_PER_HUGE as u32);
            }
        }
        // 4 KiB pages in the range: walk the range or the table, whichever
        // is shorter.
        let first = start >> sb;
        let last = (end - 1) >> sb;
        let mut pages: Vec<u64> = if last - first < self.small.len() as u64 {
            (first..=last)
                .filter(|v| self.small.contains_key(v))
                .collect()
        } else {
            let mut p: Vec<u64> = self
                .small
                .keys()
                .copied()
                .filter(|v| (first..=last).contains(v))
                .collect();
            p.sort_unstable();
            p
        };
        pages.dedup();
        for v in pages {
            let f = self.small.remove(&v).expect("listed above");
            alloc.free(f, 0);
            dropped(PageSize::Small, v);
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
            .chain(self.small.iter().map(|(&v, &f)| (PageSize::Small, v, f)))
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
