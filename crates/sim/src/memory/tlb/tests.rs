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

/// A first-level array of 0 entries never hits, not even through the page
/// of the last hit: an STLB hit's refill and a walk's fill leave no last
/// page there.
#[test]
fn an_empty_first_level_never_hits() {
    let cfg = TlbConfig {
        l1d_4k: TlbArrayConfig::new(0, 0),
        ..TlbConfig::default()
    };
    let mut t = Tlb::new(&cfg).unwrap();
    assert_eq!(t.lookup(false, 0x5008), None);
    t.fill(false, PageSize::Small, 5, 0x9000);
    for _ in 0..3 {
        assert_eq!(t.lookup(false, 0x5010), Some(0x9010));
    }
    let s = t.stats();
    assert_eq!((s.l1d.hits, s.l1d.misses, s.stlb.hits), (0, 4, 3));
    // With entries, the fill's page is the last page: hits from then on.
    let mut t = Tlb::new(&TlbConfig::default()).unwrap();
    assert_eq!(t.lookup(false, 0x5008), None);
    t.fill(false, PageSize::Small, 5, 0x9000);
    assert_eq!(t.lookup(false, 0x5010), Some(0x9010));
    assert_eq!(t.lookup(false, 0x5018), Some(0x9018));
    let s = t.stats();
    assert_eq!((s.l1d.hits, s.l1d.misses, s.stlb.hits), (2, 1, 0));
}

/// Before any hit, no address is on the last page, the top of the
/// address space (a sign-extended record address) included.
#[test]
fn no_address_is_on_the_last_page_before_a_hit() {
    let mut t = Tlb::new(&TlbConfig::default()).unwrap();
    for vaddr in [
        0,
        0x5008,
        u64::MAX,
        u64::MAX - 4095,
        1 << 47,
        0xffff_8000_0000_0000,
    ] {
        assert_eq!(t.lookup_last(false, vaddr), None, "{vaddr:#x}");
        assert_eq!(t.lookup_last(true, vaddr), None, "{vaddr:#x}");
    }
    let s = t.stats();
    assert_eq!((s.l1d.hits, s.l1i.hits), (0, 0));
}

#[derive(Clone, Copy, Debug)]
enum Op {
    /// A lookup (`instr`, address number), filled on a miss.
    Lookup(bool, u64),
    Invalidate(u64),
    Flush,
    Asid(u32),
}

/// Address number `a`'s virtual address (4 KiB and a few bytes apart,
/// over 8 regions of 2 MiB) and the size of the page that maps it: as in
/// a page table, one size per 2 MiB region (every third region huge), so
/// no two translations overlap.
fn address(a: u64) -> (u64, PageSize) {
    let vaddr = a * 0x1008;
    let size = if (vaddr >> 21).is_multiple_of(3) {
        PageSize::Huge
    } else {
        PageSize::Small
    };
    (vaddr, size)
}

proptest! {
    /// The page of the last first-level hit is only a shortcut: a TLB
    /// that forgets it before every lookup (so every lookup searches the
    /// arrays) answers and counts the same, over random lookups with
    /// fills, invalidations, flushes and address-space switches (pages of
    /// both sizes that never overlap, as a page table maps them), with
    /// small arrays, a 4 KiB-only STLB and first-level arrays of 0 entries.
    #[test]
    fn the_last_page_changes_nothing(
        geometry in prop_oneof![
            Just((TlbArrayConfig::new(8, 2), TlbArrayConfig::new(4, 2), TlbArrayConfig::new(16, 4), false)),
            Just((TlbArrayConfig::new(0, 0), TlbArrayConfig::new(4, 4), TlbArrayConfig::new(16, 4), false)),
            Just((TlbArrayConfig::new(4, 4), TlbArrayConfig::new(0, 0), TlbArrayConfig::new(8, 2), true)),
            Just((TlbArrayConfig::new(64, 4), TlbArrayConfig::new(32, 4), TlbArrayConfig::new(1536, 12), false)),
        ],
        ops in prop::collection::vec(prop_oneof![
            12 => (any::<bool>(), 0u64..4000).prop_map(|(i, a)| Op::Lookup(i, a)),
            1 => (0u64..4000).prop_map(Op::Invalidate),
            1 => Just(Op::Flush),
            1 => (0u32..3).prop_map(Op::Asid),
        ], 1..600),
    ) {
        let (small, huge, stlb, small_only) = geometry;
        let cfg = TlbConfig {
            l1d_4k: small,
            l1i_4k: small,
            l1d_2m: huge,
            l1i_2m: huge,
            stlb,
            stlb_page_sizes: if small_only { StlbPageSizes::Small } else { StlbPageSizes::Both },
            ..TlbConfig::default()
        };
        let mut t = Tlb::new(&cfg).unwrap();
        let mut r = Tlb::new(&cfg).unwrap();
        for op in ops {
            match op {
                Op::Lookup(instr, a) => {
                    let (vaddr, size) = address(a);
                    r.forget_last();
                    let got = t.lookup(instr, vaddr);
                    prop_assert_eq!(got, r.lookup(instr, vaddr));
                    if got.is_none() {
                        let vpn = size.page_of(vaddr);
                        let frame = (vpn + 1) << 21;
                        t.fill(instr, size, vpn, frame);
                        r.fill(instr, size, vpn, frame);
                    }
                }
                Op::Invalidate(a) => {
                    let (vaddr, size) = address(a);
                    t.invalidate(size, size.page_of(vaddr));
                    r.invalidate(size, size.page_of(vaddr));
                }
                Op::Flush => {
                    t.flush();
                    r.flush();
                }
                Op::Asid(a) => {
                    t.set_asid(a);
                    r.set_asid(a);
                }
            }
            prop_assert_eq!(t.stats(), r.stats());
        }
    }
}

proptest! {
    /// [`Tlb::stlb_hit`] is [`Tlb::l1_missed`] when the STLB holds the
    /// page and changes nothing when it does not: a TLB whose first-level
    /// misses try it first answers and counts as one that calls
    /// `l1_missed` directly, over random lookups and fills of both sizes.
    #[test]
    fn stlb_hit_is_l1_missed_on_a_hit_and_nothing_else(
        ops in prop::collection::vec((any::<bool>(), 0u64..3000, 0u8..8), 1..1500),
    ) {
        let cfg = TlbConfig { stlb: TlbArrayConfig::new(32, 4), ..TlbConfig::default() };
        let mut a = Tlb::new(&cfg).unwrap();
        let mut b = Tlb::new(&cfg).unwrap();
        for &(instr, page, k) in &ops {
            // Pages of 2 MiB lie above every 4 KiB page used here (from
            // 128 MiB).
            let huge = k == 0;
            let (size, vpn) = if huge { (PageSize::Huge, 64 + page / 512) } else { (PageSize::Small, page) };
            let vaddr = (vpn << size.bits()) | (page & 0xff) << 3;
            let ra = match a.lookup_l1(instr, vaddr) {
                Some(p) => Some(p),
                None => a.l1_missed(instr, vaddr),
            };
            let rb = match b.lookup_l1(instr, vaddr) {
                Some(p) => Some(p),
                None => {
                    let before = b.stats();
                    match b.stlb_hit(instr, vaddr) {
                        Some(p) => Some(p),
                        None => {
                            prop_assert_eq!(b.stats(), before);
                            b.l1_missed(instr, vaddr)
                        }
                    }
                }
            };
            prop_assert_eq!(ra, rb);
            if ra.is_none() {
                a.fill(instr, size, vpn, vpn << 24);
                b.fill(instr, size, vpn, vpn << 24);
            }
        }
        prop_assert_eq!(a.stats(), b.stats());
    }
}
