//! Page walks through the cache hierarchy: the walker's paging-structure
//! caches and the page-table loads a walk issues.
//!
//! With `walk = "hierarchy"` on the TLB config ([`WalkMode`]), a TLB miss
//! walks x86-64's 4-level page table (PML4, PDPT, PD, PT; 3 levels for a
//! 2 MiB page, whose PD entry maps the page). Each level read is an
//! 8-byte data load at the physical address of the entry
//! ([`AddressSpace::table_entry`](super::AddressSpace::table_entry) places
//! the tables: [`TablePlacement`], in a reserved region, on pages of any
//! color or, with `memory.page-table-colors = "owner"` ([`TableColors`]),
//! of the owning app's colors), which the core sends through its L1D, L2 and the LLC like
//! any load: Intel's page-miss handler looks its loads up in the L1D
//! (Haswell and later count them as `PAGE_WALKER_LOADS.DTLB_L1/L2/L3/MEMORY`),
//! so walks cost what their misses cost and pollute the caches they touch.
//!
//! The walker skips the upper levels through its **paging-structure
//! caches** ([`PagingStructureCaches`], Intel SDM vol. 3A section 4.10.3):
//! a PML4 cache keyed by virtual address bits 47:39 (gives the PDPT), a
//! PDPTE cache keyed by bits 47:30 (gives the PD) and a PDE cache keyed by
//! bits 47:21 (gives the PT). The walk starts from the deepest hit: a PDE
//! hit issues only the PT load, a PDPTE hit the PD and PT loads, a PML4
//! hit three loads, a miss everywhere four. No PDE-cache entry is made
//! for a PD entry that maps a 2 MiB page (SDM 4.10.3.1), so a 2 MiB walk
//! issues at best its PD load. Each cache is an LRU [`TlbArray`] tagged
//! with the address-space id, like the TLBs, and flushed with them (and
//! by every single-page invalidation: `INVLPG` drops all paging-structure
//! cache entries, SDM 4.10.4.1).
//!
//! Intel does not publish the caches' sizes. The defaults (PML4 2
//! entries, PDPTE 4, PDE 32, fully associative) are the Intel-like sizes
//! academic MMU models use (Barr, Cox and Rixner, "Translation caching:
//! skip, don't walk (the page table)", ISCA 2010; Bhattacharjee,
//! "Large-reach memory management unit caches", MICRO 2013).

use serde::{Deserialize, Serialize};

use super::error::MemoryError;
use super::page::PageSize;
use super::tlb_array::{TlbArray, TlbArrayConfig};

mod tables;

pub use tables::{TableColors, TablePlacement, TABLE_REGION};

/// Which page sizes the second-level TLB holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StlbPageSizes {
    /// Both 4 KiB and 2 MiB translations (Skylake; the default).
    #[default]
    #[serde(rename = "both")]
    Both,
    /// 4 KiB translations only (Sandy Bridge): a 2 MiB translation that
    /// misses the first level walks, and is never put in the STLB.
    #[serde(rename = "4k")]
    Small,
}

/// How a page walk is modelled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WalkMode {
    /// A fixed cost (`page-walk-cycles`) and no memory traffic (the
    /// default).
    #[default]
    Flat,
    /// Page-table loads through the core's caches, after the
    /// paging-structure caches (see the module docs); the walk costs
    /// `page-walk-cycles` plus its loads' latencies beyond the L1D.
    Hierarchy,
}

/// Sizes of the three paging-structure caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct PscConfig {
    /// PML4-entry cache (keyed by virtual address bits 47:39).
    #[serde(default = "pml4")]
    pub pml4: TlbArrayConfig,
    /// PDPT-entry cache (bits 47:30).
    #[serde(default = "pdpt")]
    pub pdpt: TlbArrayConfig,
    /// PD-entry cache (bits 47:21; only PD entries that point to a page
    /// table).
    #[serde(default = "pd")]
    pub pd: TlbArrayConfig,
}

fn pml4() -> TlbArrayConfig {
    TlbArrayConfig::new(2, 2)
}
fn pdpt() -> TlbArrayConfig {
    TlbArrayConfig::new(4, 4)
}
fn pd() -> TlbArrayConfig {
    TlbArrayConfig::new(32, 32)
}

impl Default for PscConfig {
    fn default() -> Self {
        PscConfig {
            pml4: pml4(),
            pdpt: pdpt(),
            pd: pd(),
        }
    }
}

/// Page-table levels, leaf first: level `l` (1 = PT, 2 = PD, 3 = PDPT,
/// 4 = PML4) indexes its table with virtual address bits
/// `shift(l) + 8 ..= shift(l)`.
pub const fn level_shift(level: u32) -> u32 {
    12 + 9 * (level - 1)
}

/// The walker's paging-structure caches (PML4, PDPTE, PDE), as
/// [`TlbArray`]s of virtual-address prefixes (the physical address they
/// hold is unused: the table placement is a function of the prefix).
#[derive(Clone, Debug)]
pub struct PagingStructureCaches {
    /// Index 0: PDE cache (level 2), 1: PDPTE cache (level 3), 2: PML4
    /// cache (level 4).
    arrays: [TlbArray; 3],
}

impl PagingStructureCaches {
    /// Empty caches as configured.
    pub fn new(cfg: &PscConfig) -> Result<PagingStructureCaches, MemoryError> {
        Ok(PagingStructureCaches {
            arrays: [
                TlbArray::new("psc.pd", cfg.pd)?,
                TlbArray::new("psc.pdpt", cfg.pdpt)?,
                TlbArray::new("psc.pml4", cfg.pml4)?,
            ],
        })
    }

    /// The levels a walk of `vaddr` (mapped by a page of `size`) reads, in
    /// walk order (4 = PML4 first), after the caches: the first level
    /// read is one below the deepest cache hit. Fills the caches with the
    /// entries the walk reads. `asid` tags the entries (as in the TLBs).
    pub fn walk(&mut self, vaddr: u64, size: PageSize, asid: u64) -> std::ops::RangeInclusive<u32> {
        // The leaf level: PT for 4 KiB, PD for 2 MiB.
        let leaf = if size == PageSize::Huge { 2 } else { 1 };
        // Deepest cache that may help: the one of the level above the leaf.
        let mut top = 4;
        for level in (leaf + 1)..=4 {
            let key = (vaddr >> level_shift(level)) | asid;
            if self.arrays[level as usize - 2]
                .lookup(PageSize::Small, key)
                .is_some()
            {
                top = level - 1;
                break;
            }
        }
        // Fill an entry for every non-leaf level read.
        for level in (leaf + 1)..=top {
            let key = (vaddr >> level_shift(level)) | asid;
            self.arrays[level as usize - 2].insert(PageSize::Small, key, 0);
        }
        leaf..=top
    }

    /// Drops every entry.
    pub fn flush(&mut self) {
        for a in &mut self.arrays {
            a.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upper_levels_hit_after_the_first_walk() {
        let mut c = PagingStructureCaches::new(&PscConfig::default()).unwrap();
        // A cold walk reads all four levels, the next in the same 2 MiB
        // region only the PT.
        assert_eq!(c.walk(0x7f00_0000_1000, PageSize::Small, 0), 1..=4);
        assert_eq!(c.walk(0x7f00_0000_5000, PageSize::Small, 0), 1..=1);
        // Another 2 MiB region of the same 1 GiB: PD and PT.
        assert_eq!(c.walk(0x7f00_0020_0000, PageSize::Small, 0), 1..=2);
        // Another 1 GiB of the same 512 GiB: PDPT, PD, PT.
        assert_eq!(c.walk(0x7f00_4000_0000, PageSize::Small, 0), 1..=3);
        // A 2 MiB page: its PD entry maps the page, never cached.
        assert_eq!(c.walk(0x7f00_4020_0000, PageSize::Huge, 0), 2..=2);
        assert_eq!(c.walk(0x7f00_4020_0000, PageSize::Huge, 0), 2..=2);
        // Another address space misses everything.
        assert_eq!(c.walk(0x7f00_0000_1000, PageSize::Small, 1 << 40), 1..=4);
        c.flush();
        assert_eq!(c.walk(0x7f00_0000_1000, PageSize::Small, 0), 1..=4);
        // The PDE cache holds 32 regions: the 33rd evicts the first (LRU).
        for r in 0..33u64 {
            c.walk(r << 21, PageSize::Small, 0);
        }
        assert_eq!(c.walk(0, PageSize::Small, 0), 1..=2);
        assert_eq!(c.walk(32 << 21, PageSize::Small, 0), 1..=1);
    }

    #[test]
    fn bad_geometry_is_named() {
        let cfg = PscConfig {
            pd: TlbArrayConfig::new(24, 8),
            ..PscConfig::default()
        };
        assert!(matches!(
            PagingStructureCaches::new(&cfg),
            Err(MemoryError::TlbGeometry { name: "psc.pd", .. })
        ));
    }
}
