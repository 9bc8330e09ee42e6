//! Tests of the L3 victim cache: its own semantics, its checks, and the
//! hierarchy moving lines through it.

use cachepart_trace::{Kind, Record};

use super::*;
use crate::cache::Cache;
use crate::hierarchy::{Hierarchy, HierarchyConfig, Served};

/// An LLC of 128-byte lines: 16 sets x 2 ways (4 KiB), no slices.
fn llc_cfg() -> CacheConfig {
    CacheConfig::lru(4096, 2, 128)
}

/// An L3 of 256-byte lines: 32 sets x 2 ways (16 KiB).
fn l3_cfg() -> VictimConfig {
    VictimConfig {
        size_bytes: 16384,
        ways: 2,
        line_bytes: 256,
        slices: 1,
        cycles: 90,
    }
}

/// Pages of 1 KiB, so that the LLC (2 KiB a way) has 2 colors.
const PAGE: u64 = 1024;

fn core_and_llc(l3: Option<VictimConfig>) -> (Hierarchy, Cache) {
    let l1 = CacheConfig::lru(256, 1, 128);
    let mut llc = Cache::new(&llc_cfg()).unwrap();
    llc.set_victim(l3.map(|c| VictimCache::new(&c, &llc_cfg(), PAGE).unwrap()));
    let h = Hierarchy::new(&HierarchyConfig::split_l1(l1), &llc).unwrap();
    (h, llc)
}

fn load(a: u64) -> Record {
    Record::access(Kind::Load, a, 8, 0).unwrap()
}

fn store(a: u64) -> Record {
    Record::access(Kind::Store, a, 8, 0).unwrap()
}

/// Addresses of the same LLC set (16 sets x 128 B: a stride of 2 KiB).
fn same_llc_set(i: u64) -> u64 {
    i * 2048
}

#[test]
fn llc_victims_fill_the_l3_exclusively_and_hits_take_them_back() {
    let (mut h, mut llc) = core_and_llc(Some(l3_cfg()));
    // Three lines of one 2-way LLC set: the third evicts the first.
    for i in 0..3 {
        assert_eq!(h.access(&mut llc, load(same_llc_set(i))), Served::Memory);
    }
    let b0 = same_llc_set(0) / 128;
    assert!(!llc.contains(b0));
    assert!(
        llc.victim().unwrap().contains(b0),
        "a clean LLC victim enters the L3"
    );
    assert_eq!(llc.victim().unwrap().occupancy(), 1);
    // Back to line 0: an L3 hit, the line leaves the L3 for the LLC; the
    // LLC's victim (line 1) goes to the L3 in its place.
    assert_eq!(h.access(&mut llc, load(same_llc_set(0))), Served::L3);
    assert!(llc.contains(b0));
    let l3 = llc.victim().unwrap();
    assert!(!l3.contains(b0), "exclusive: the hit removes the line");
    assert!(l3.contains(same_llc_set(1) / 128));
    let s = h.stats();
    assert_eq!((s.l3.hits, s.l3.misses), (1, 3));
    assert_eq!(s.mem.reads, 3, "the L3 hit read nothing from memory");
    assert_eq!(s.mem.writes, 0);
}

#[test]
fn a_missing_sector_is_a_miss_and_dirty_lines_are_written_back() {
    let (mut h, mut llc) = core_and_llc(Some(l3_cfg()));
    // A dirty line 0 evicted from L1 and then from the LLC.
    h.access(&mut llc, store(0));
    for i in 1..4 {
        h.access(&mut llc, load(same_llc_set(i)));
    }
    let l3 = llc.victim().unwrap();
    assert!(l3.contains(0));
    // Its L3 line (256 B) has the other half (block 1, address 128) absent:
    // a miss, from memory.
    assert!(!l3.contains(1));
    assert_eq!(h.access(&mut llc, load(128)), Served::Memory);
    // The dirty line comes back dirty (no write to memory so far).
    assert_eq!(h.access(&mut llc, load(0)), Served::L3);
    assert_eq!(llc.is_dirty(0), Some(true));
    assert_eq!(h.stats().mem.writes, 0);
    // Evict it again, then push it out of the L3: the L3 set of line 0
    // (32 sets x 256 B: a stride of 8 KiB) gets two other lines, each
    // through the LLC.
    let mut a = 8192;
    while llc.victim().unwrap().contains(0) || llc.contains(0) {
        h.access(&mut llc, load(a));
        a += 8192;
        assert!(a < 1 << 20, "line 0 never left the L3");
    }
    assert_eq!(h.stats().mem.writes, 1, "the dirty sector went to memory");
    assert_eq!(llc.victim().unwrap().stats().writebacks, 1);
}

#[test]
fn colors_partition_the_l3() {
    // 2 colors of 1 KiB pages: color = address bit 10. The L3's index
    // (256 B lines, 32 sets) covers bits 8..13, so color 0's lines only
    // land in the L3 sets whose index bit 2 is 0.
    let (mut h, mut llc) = core_and_llc(Some(l3_cfg()));
    let mut x = 12345u64;
    for _ in 0..20_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let page = (x >> 33) % 256;
        let off = (x >> 20) % (PAGE / 8) * 8; // aligned: never crosses a page
                                              // pages of color 0 only: page number even
        let a = page * 2 * PAGE + off;
        h.access(&mut llc, load(a));
    }
    let l3 = llc.victim().unwrap();
    assert!(l3.occupancy() > 0);
    for set in 0..32 {
        let n = l3.occupancy_of_set(set);
        if set & 4 != 0 {
            assert_eq!(n, 0, "set {set} is color 1's");
        }
    }
    assert!((0..32)
        .filter(|s| s & 4 == 0)
        .all(|s| l3.occupancy_of_set(s) > 0));
}

#[test]
fn without_an_l3_nothing_changes() {
    let run = |l3: Option<VictimConfig>| {
        let (mut h, mut llc) = core_and_llc(l3);
        let mut served = Vec::new();
        for i in 0..2000u64 {
            let a = (i * 7919 % 100) * 128; // 100 lines: more than the LLC holds
            served.push(h.access(&mut llc, if i % 3 == 0 { store(a) } else { load(a) }));
        }
        (h.stats(), *llc.stats(), served)
    };
    let (plain, plain_llc, plain_served) = run(None);
    assert!(plain.l3.is_zero());
    assert!(!plain_served.contains(&Served::L3));
    let (with, with_llc, with_served) = run(Some(l3_cfg()));
    // The LLC sees the same references either way; only where misses are
    // served changes.
    // (Dirty evictions differ: lines the L3 returns dirty stay dirty.)
    for k in crate::stats::AccessKind::ALL {
        assert_eq!(plain.llc.refs(k), with.llc.refs(k));
        assert_eq!(plain.llc.misses(k), with.llc.misses(k));
    }
    assert_eq!(plain.llc.evictions, with.llc.evictions);
    assert_eq!(plain_llc.total_misses(), with_llc.total_misses());
    assert_eq!(with.l3.hits + with.l3.misses, with.llc.total_misses());
    assert!(with.l3.hits > 0);
    assert_eq!(with.mem.reads, with.l3.misses);
    assert_eq!(
        with_served.iter().filter(|s| **s == Served::L3).count() as u64,
        with.l3.hits
    );
}

#[test]
fn bad_sections_name_their_field() {
    let field = |c: VictimConfig| c.check(&llc_cfg(), PAGE).unwrap_err().field;
    assert_eq!(
        field(VictimConfig {
            line_bytes: 64,
            ..l3_cfg()
        }),
        "line-bytes"
    );
    assert_eq!(
        field(VictimConfig {
            line_bytes: 384,
            ..l3_cfg()
        }),
        "line-bytes"
    );
    assert_eq!(
        field(VictimConfig {
            ways: 0,
            ..l3_cfg()
        }),
        "ways"
    );
    assert_eq!(
        field(VictimConfig {
            size_bytes: 16384 + 256,
            ..l3_cfg()
        }),
        "size-bytes"
    );
    assert_eq!(
        field(VictimConfig {
            cycles: 0,
            ..l3_cfg()
        }),
        "cycles"
    );
    // Too few sets to hold the LLC's color bit (bit 10): 2 sets of 256 B.
    assert_eq!(
        field(VictimConfig {
            size_bytes: 1024,
            ..l3_cfg()
        }),
        "size-bytes"
    );
    let e = VictimConfig {
        ways: 0,
        ..l3_cfg()
    }
    .check(&llc_cfg(), PAGE)
    .unwrap_err();
    assert!(e.to_string().starts_with("l3-victim.ways:"), "{e}");
    let unknown = toml::from_str::<VictimConfig>(
        "size-bytes = 16384\nways = 2\nline-bytes = 256\ncycles = 90\nlatency = 3\n",
    )
    .unwrap_err()
    .to_string();
    assert!(unknown.contains("latency"), "{unknown}");
}
