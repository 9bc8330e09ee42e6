//! Tests of one core's TLBs ([`super::Tlb`]).

use super::*;
use crate::memory::tlb_array::TlbArrayConfig;
use proptest::prelude::*;

#[test]
fn tagged_entries_never_match_another_space() {
    let mut t = Tlb::new(&TlbConfig::default()).unwrap();
    t.set_asid(1);
    assert_eq!(t.lookup(false, 0x5000), None);
    t.fill(false, PageSize::Small, 5, 0x9000);
    assert_eq!(t.lookup(false, 0x5008), Some(0x9008));
    // The last-page shortcut answers again, counted as a hit.
    assert_eq!(t.lookup(false, 0x5010), Some(0x9010));
    assert_eq!(t.stats().l1d.hits, 2);
    t.set_asid(2);
    assert_eq!(t.lookup(false, 0x5008), None);
    t.set_asid(1);
    assert_eq!(t.lookup(false, 0x5008), Some(0x9008));
    t.invalidate(PageSize::Small, 5);
    assert_eq!(t.lookup(false, 0x5008), None);
}

#[test]
fn skylake_defaults_build() {
    let t = Tlb::new(&TlbConfig::default()).unwrap();
    assert_eq!(t.stats().translations(), 0);
    let bad = TlbConfig {
        stlb: TlbArrayConfig::new(1000, 12),
        ..TlbConfig::default()
    };
    assert!(matches!(
        Tlb::new(&bad),
        Err(MemoryError::TlbGeometry { name: "stlb", .. })
    ));
}

#[test]
fn misses_walk_then_hit() {
    let mut t = Tlb::new(&TlbConfig::default()).unwrap();
    assert_eq!(t.lookup(false, 0x1234), None);
    t.fill(false, PageSize::Small, 1, 0x9000);
    assert_eq!(t.lookup(false, 0x1234), Some(0x9234));
    // A 2 MiB page covers the whole range.
    assert_eq!(t.lookup(true, 0x20_0042), None);
    t.fill(true, PageSize::Huge, 1, 0x4000_0000);
    assert_eq!(t.lookup(true, 0x3f_ffff), Some(0x401f_ffff));
    // The data side finds it in the STLB.
    assert_eq!(t.lookup(false, 0x20_0000), Some(0x4000_0000));
    let s = t.stats();
    assert_eq!(
        (s.l1d.hits, s.l1d.misses, s.l1i.hits, s.l1i.misses),
        (1, 2, 1, 1)
    );
    assert_eq!(
        (s.stlb.hits, s.stlb.misses, s.walks, s.walk_cycles),
        (1, 2, 2, 60)
    );
    t.invalidate(PageSize::Huge, 1);
    assert_eq!(t.lookup(false, 0x20_0000), None);
}

proptest! {
    /// hits + misses = translations at L1, the STLB is looked up once
    /// per L1 miss, and each STLB miss is one walk.
    #[test]
    fn counts_add_up(pages in prop::collection::vec((any::<bool>(), 0u64..4096, any::<bool>()), 1..2000)) {
        let cfg = TlbConfig { stlb: TlbArrayConfig::new(64, 4), ..TlbConfig::default() };
        let mut t = Tlb::new(&cfg).unwrap();
        for &(instr, page, huge) in &pages {
            let size = if huge { PageSize::Huge } else { PageSize::Small };
            let vaddr = page << size.bits();
            if t.lookup(instr, vaddr).is_none() {
                t.fill(instr, size, page, page << 30);
            }
        }
        let s = t.stats();
        prop_assert_eq!(s.translations(), pages.len() as u64);
        prop_assert_eq!(s.stlb.lookups(), s.l1i.misses + s.l1d.misses);
        prop_assert_eq!(s.walks, s.stlb.misses);
        prop_assert_eq!(s.walk_cycles, 30 * s.walks);
    }
}
