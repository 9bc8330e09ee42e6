//! One core's TLBs: first-level instruction and data TLBs with separate
//! arrays for 4 KiB and 2 MiB pages, a unified second-level STLB, a
//! page-walk penalty and, for walks through the caches, the walker's
//! paging-structure caches ([`super::page_walk`]).
//!
//! A translation looks up the first-level arrays of its kind (both page
//! sizes at once, as hardware probes them in parallel); on a miss the STLB
//! (both sizes, or 4 KiB only with `stlb-page-sizes = "4k"`); on a miss
//! there too the page table is walked (by the caller, who owns it) and the
//! walk's penalty is counted in cycles, for the timing model to charge.
//! Fills go into the STLB (unless it is 4 KiB-only and the page is 2 MiB)
//! and the first-level array of the page's size. Every array is LRU. An
//! STLB hit costs `stlb-hit-cycles` (charged by the timing model).
//!
//! Defaults are Intel Skylake's: L1 DTLB 64 entries 4-way (4 KiB) and 32
//! entries 4-way (2 MiB), L1 ITLB 128 entries 8-way (4 KiB) and 8 entries
//! fully associative (2 MiB), STLB 1536 entries 12-way shared by both
//! sizes, an STLB hit for free and a flat 30-cycle walk (page-walk caches
//! hit; the walk's own cache accesses are not simulated: `walk = "flat"`).

use serde::{Deserialize, Serialize};

use super::error::MemoryError;
use super::page::PageSize;
use super::page_walk::{PagingStructureCaches, StlbPageSizes, WalkMode};
use super::tlb_array::TlbArray;

mod config;
mod side;

use config::is_default;
pub use config::TlbConfig;
use side::{LastPage, Side, NO_PAGE};

/// Lookups of one TLB level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlbLevelStats {
    /// Lookups that found the translation.
    pub hits: u64,
    /// Lookups that did not.
    pub misses: u64,
}

impl TlbLevelStats {
    /// Lookups in all.
    pub fn lookups(&self) -> u64 {
        self.hits + self.misses
    }
}

/// Counters of one core's TLBs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlbStats {
    /// L1 instruction TLB (both arrays).
    pub l1i: TlbLevelStats,
    /// L1 data TLB (both arrays).
    pub l1d: TlbLevelStats,
    /// STLB (looked up on every L1 miss).
    pub stlb: TlbLevelStats,
    /// Page walks (= STLB misses).
    pub walks: u64,
    /// Cycles of page walks (`walks x walk-cycles`), for timing.
    pub walk_cycles: u64,
    /// Page-table loads of walks through the caches (`walk =
    /// "hierarchy"`), by the level that served them: L1D, L2, LLC,
    /// below the LLC (memory, or the L3 victim cache where there is one).
    /// They are also counted as data loads of those caches.
    #[serde(default, skip_serializing_if = "is_default")]
    pub walk_loads: [u64; 4],
}

impl TlbStats {
    /// Translations asked for (L1 lookups of both kinds).
    pub fn translations(&self) -> u64 {
        self.l1i.lookups() + self.l1d.lookups()
    }

    /// Page-table loads of walks through the caches, all levels.
    pub fn walk_loads_total(&self) -> u64 {
        self.walk_loads.iter().sum()
    }
}

/// One core's TLBs.
#[derive(Clone, Debug)]
pub struct Tlb {
    /// First levels: data (0), instruction (1).
    sides: [Side; 2],
    stlb: TlbArray,
    /// The STLB holds 4 KiB translations only.
    stlb_small_only: bool,
    /// The paging-structure caches, for walks through the caches.
    psc: Option<PagingStructureCaches>,
    walk_cycles: u64,
    /// The counters of the STLB and the walks (the first levels' are in
    /// `sides`).
    stats: TlbStats,
    /// Address-space id mixed into every virtual page number (tagged
    /// TLBs: entries of several apps coexist, as with PCIDs).
    asid: u64,
    /// Whether a 2 MiB translation was ever filled: until then no array
    /// holds one, and lookups probe only the 4 KiB ones (a probe of an
    /// array without the page changes nothing, so skipping it is exact).
    any_huge: bool,
}

/// Bit where the address-space id starts in tagged page numbers (above
/// any 4 KiB page number of a 48-bit address).
const ASID_SHIFT: u32 = 40;

fn idx(size: PageSize) -> usize {
    usize::from(size == PageSize::Huge)
}

impl Tlb {
    /// Empty TLBs as configured.
    pub fn new(cfg: &TlbConfig) -> Result<Tlb, MemoryError> {
        let side =
            |small: (&'static str, _), huge: (&'static str, _)| -> Result<Side, MemoryError> {
                Ok(Side {
                    last: NO_PAGE,
                    stats: TlbLevelStats::default(),
                    arrays: [
                        TlbArray::new(small.0, small.1)?,
                        TlbArray::new(huge.0, huge.1)?,
                    ],
                })
            };
        Ok(Tlb {
            sides: [
                side(("l1d-4k", cfg.l1d_4k), ("l1d-2m", cfg.l1d_2m))?,
                side(("l1i-4k", cfg.l1i_4k), ("l1i-2m", cfg.l1i_2m))?,
            ],
            stlb: TlbArray::new("stlb", cfg.stlb)?,
            stlb_small_only: cfg.stlb_page_sizes == StlbPageSizes::Small,
            psc: match cfg.walk {
                WalkMode::Flat => None,
                WalkMode::Hierarchy => Some(PagingStructureCaches::new(&cfg.psc)?),
            },
            walk_cycles: u64::from(cfg.walk_cycles),
            stats: TlbStats::default(),
            asid: 0,
            any_huge: false,
        })
    }

    /// Forgets the page of the last first-level hit of both kinds.
    fn forget_last(&mut self) {
        for side in &mut self.sides {
            side.last = NO_PAGE;
        }
    }

    /// Tags the translations looked up, filled and invalidated from now
    /// on with address space `asid` (its low 16 bits; a context switch on a CPU with
    /// PCIDs: the other spaces' entries stay, but never match).
    pub fn set_asid(&mut self, asid: u32) {
        self.asid = (u64::from(asid) & 0xffff) << ASID_SHIFT;
        self.forget_last();
    }

    /// The counters.
    pub fn stats(&self) -> TlbStats {
        TlbStats {
            l1d: self.sides[0].stats,
            l1i: self.sides[1].stats,
            ..self.stats
        }
    }

    /// Page walks so far (`stats().walks`).
    #[inline(always)]
    pub fn walks(&self) -> u64 {
        self.stats.walks
    }

    /// STLB hits so far (`stats().stlb.hits`).
    #[inline(always)]
    pub fn stlb_hits(&self) -> u64 {
        self.stats.stlb.hits
    }

    /// The physical address of `vaddr` if it lies in the page of the last
    /// first-level hit of its kind (an instruction fetch if `instr`),
    /// counted as the first-level hit [`Tlb::lookup`] would count; `None`
    /// (nothing counted) otherwise.
    #[inline(always)]
    pub fn lookup_last(&mut self, instr: bool, vaddr: u64) -> Option<u64> {
        let side = &mut self.sides[usize::from(instr)];
        let last = side.last;
        if vaddr & !last.mask != last.vbase {
            return None;
        }
        side.stats.hits += 1;
        Some(last.pbase | (vaddr & last.mask))
    }

    /// The physical address of `vaddr` if the TLBs hold its page (an
    /// instruction fetch if `instr`); `None` means a page walk is needed:
    /// the caller walks its page table, calls [`Tlb::fill`], and the walk
    /// is counted here.
    #[inline]
    pub fn lookup(&mut self, instr: bool, vaddr: u64) -> Option<u64> {
        match self.lookup_l1(instr, vaddr) {
            Some(p) => Some(p),
            None => self.l1_missed(instr, vaddr),
        }
    }

    /// [`Self::lookup`] when the first level holds the page (counted as
    /// its hit); `None` (nothing counted, nothing changed) when it does
    /// not: then [`Self::l1_missed`] finishes the lookup. The simulation
    /// loop's path for accesses that leave the last page.
    #[inline(always)]
    pub fn lookup_l1(&mut self, instr: bool, vaddr: u64) -> Option<u64> {
        let any_huge = self.any_huge;
        let asid = self.asid;
        let side = &mut self.sides[usize::from(instr)];
        let last = side.last;
        if vaddr & !last.mask == last.vbase {
            side.stats.hits += 1;
            return Some(last.pbase | (vaddr & last.mask));
        }
        // The 4 KiB array, then (once there are 2 MiB translations) the
        // 2 MiB one, written out: this runs on every access that leaves
        // the last page.
        let small = PageSize::Small;
        if let Some(frame) = side.arrays[0].lookup(small, small.page_of(vaddr) | asid) {
            side.stats.hits += 1;
            side.last = LastPage::of(small, vaddr, frame);
            return Some(frame | (vaddr & (small.bytes() - 1)));
        }
        let huge = PageSize::Huge;
        if any_huge {
            if let Some(frame) = side.arrays[1].lookup(huge, huge.page_of(vaddr) | asid) {
                side.stats.hits += 1;
                side.last = LastPage::of(huge, vaddr, frame);
                return Some(frame | (vaddr & (huge.bytes() - 1)));
            }
        }
        None
    }

    /// [`Self::lookup`] after both first-level arrays missed
    /// ([`Self::lookup_l1`] gave `None`): the STLB, else a walk is
    /// counted. An STLB hit goes into the first level, as the page of its
    /// last hit (unless that array has 0 entries).
    #[inline(never)]
    pub fn l1_missed(&mut self, instr: bool, vaddr: u64) -> Option<u64> {
        if let Some(p) = self.stlb_hit(instr, vaddr) {
            return Some(p);
        }
        let side = &mut self.sides[usize::from(instr)];
        side.stats.misses += 1;
        side.last = NO_PAGE;
        self.stats.stlb.misses += 1;
        self.stats.walks += 1;
        self.stats.walk_cycles += self.walk_cycles;
        None
    }

    /// [`Self::l1_missed`] when the STLB holds the page: counts the
    /// first-level miss and the STLB hit, puts the translation into the
    /// first level (as the page of its last hit, unless that array has 0
    /// entries) and gives the physical address of `vaddr`. `None`
    /// (nothing counted, nothing changed) when the STLB misses too.
    #[inline(always)]
    pub fn stlb_hit(&mut self, instr: bool, vaddr: u64) -> Option<u64> {
        let asid = self.asid;
        let small = PageSize::Small;
        let vpn = small.page_of(vaddr) | asid;
        let mut hit = self.stlb.lookup(small, vpn).map(|f| (small, vpn, f));
        if hit.is_none() && self.any_huge && !self.stlb_small_only {
            let huge = PageSize::Huge;
            let vpn = huge.page_of(vaddr) | asid;
            hit = self.stlb.lookup(huge, vpn).map(|f| (huge, vpn, f));
        }
        let (size, vpn, frame) = hit?;
        let side = &mut self.sides[usize::from(instr)];
        side.stats.misses += 1;
        self.stats.stlb.hits += 1;
        side.insert(size, vpn, vaddr, frame);
        Some(frame | (vaddr & (size.bytes() - 1)))
    }

    /// Installs the walked translation of page `vpn` of `size` (frame at
    /// physical address `frame_addr`) in the STLB and the first level
    /// (as the page of its last hit, unless that array has 0 entries).
    pub fn fill(&mut self, instr: bool, size: PageSize, vpn: u64, frame_addr: u64) {
        self.forget_last();
        self.any_huge |= size == PageSize::Huge;
        let tagged = vpn | self.asid;
        if !(size == PageSize::Huge && self.stlb_small_only) {
            self.stlb.insert(size, tagged, frame_addr);
        }
        self.sides[usize::from(instr)].insert(size, tagged, vpn << size.bits(), frame_addr);
    }

    /// Drops the translation of page `vpn` of `size` everywhere.
    pub fn invalidate(&mut self, size: PageSize, vpn: u64) {
        self.forget_last();
        let vpn = vpn | self.asid;
        for side in &mut self.sides {
            for a in &mut side.arrays {
                a.invalidate(size, vpn);
            }
        }
        self.stlb.invalidate(size, vpn);
        // INVLPG drops every paging-structure cache entry (Intel SDM
        // 4.10.4.1).
        if let Some(p) = &mut self.psc {
            p.flush();
        }
    }

    /// Drops every translation (a context switch without ASIDs, or a
    /// large unmap).
    pub fn flush(&mut self) {
        self.forget_last();
        for side in &mut self.sides {
            for a in &mut side.arrays {
                a.flush();
            }
        }
        self.stlb.flush();
        if let Some(p) = &mut self.psc {
            p.flush();
        }
    }

    /// Whether walks go through the caches (`walk = "hierarchy"`).
    pub fn walks_through_caches(&self) -> bool {
        self.psc.is_some()
    }

    /// The page-table levels the walk of `vaddr`, mapped by a page of
    /// `size`, reads after the paging-structure caches (4 = PML4 ... 1 =
    /// PT; see [`super::page_walk`]), filling those caches; `None` with
    /// flat walks.
    pub fn walk_levels(
        &mut self,
        vaddr: u64,
        size: PageSize,
    ) -> Option<std::ops::RangeInclusive<u32>> {
        let asid = self.asid;
        self.psc.as_mut().map(|p| p.walk(vaddr, size, asid))
    }

    /// Counts a walk's page-table load served by level `served` (0 = L1D,
    /// 1 = L2, 2 = LLC, 3 and above = below the LLC: the L3 victim cache
    /// or memory).
    pub fn count_walk_load(&mut self, served: usize) {
        self.stats.walk_loads[served.min(3)] += 1;
    }

    /// Valid STLB entries of pages of `size`.
    pub fn stlb_entries(&self, size: PageSize) -> usize {
        self.stlb.entries_of(size)
    }

    /// Which page sizes the STLB holds.
    pub fn stlb_page_sizes(&self) -> StlbPageSizes {
        if self.stlb_small_only {
            StlbPageSizes::Small
        } else {
            StlbPageSizes::Both
        }
    }
}

#[cfg(test)]
mod tests;
