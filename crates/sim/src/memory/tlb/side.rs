//! The first level of one kind of a core's TLBs (data or instruction):
//! its arrays, its counters and the page of its last hit.

use super::super::page::PageSize;
use super::super::tlb_array::TlbArray;
use super::{idx, TlbLevelStats};

/// The page of the last first-level hit of one kind: virtual base,
/// offset mask and physical base. [`NO_PAGE`] matches no address.
#[derive(Clone, Copy, Debug)]
pub(super) struct LastPage {
    pub(super) vbase: u64,
    pub(super) mask: u64,
    pub(super) pbase: u64,
}

/// No page: `vaddr & !0 == 1 << 63` holds for no address of a record (a
/// 48-bit address sign-extended: bit 63 comes with bits 47 to 62).
pub(super) const NO_PAGE: LastPage = LastPage {
    vbase: 1 << 63,
    mask: 0,
    pbase: 0,
};

impl LastPage {
    pub(super) fn of(size: PageSize, vaddr: u64, frame: u64) -> LastPage {
        let mask = size.bytes() - 1;
        LastPage {
            vbase: vaddr & !mask,
            mask,
            pbase: frame,
        }
    }
}

/// The first level of one kind (data or instruction): its arrays (4 KiB,
/// 2 MiB), its counters and the page of its last hit, together so that a
/// lookup reads one neighbourhood of the host's memory.
#[derive(Clone, Debug)]
pub(super) struct Side {
    /// The page of the last first-level hit: looking the same page up
    /// again is a first-level hit that changes no LRU order (the page is
    /// already the most recent of its set), so it is answered here
    /// without searching the arrays. Set by every first-level hit and
    /// insertion (the page inserted is the most recent of its set);
    /// cleared by every invalidation and flush.
    pub(super) last: LastPage,
    pub(super) stats: TlbLevelStats,
    pub(super) arrays: [TlbArray; 2],
}

impl Side {
    /// Inserts the translation of page `tagged` (its number with the
    /// address-space id) of `size` to `frame` into this kind's array of
    /// that size, and makes it the page of the last hit (the page
    /// inserted is the most recent of its set), as `vaddr`'s page;
    /// unless that array has 0 entries, which never hits: no last page
    /// then.
    #[inline(always)]
    pub(super) fn insert(&mut self, size: PageSize, tagged: u64, vaddr: u64, frame: u64) {
        let array = &mut self.arrays[idx(size)];
        array.insert(size, tagged, frame);
        self.last = if array.has_entries() {
            LastPage::of(size, vaddr, frame)
        } else {
            NO_PAGE
        };
    }
}
