//! Each prefetcher, alone, on the access pattern it targets and on one it
//! does not: it must cut the misses of its own pattern, not help (nor
//! issue much on) random accesses, and a word with every bit set must
//! leave the hierarchy exactly as without prefetchers.

use cachepart_sim::cache::Cache;
use cachepart_sim::geometry::CacheConfig;
use cachepart_sim::hierarchy::{Hierarchy, HierarchyConfig, Inclusion, Mode};
use cachepart_sim::prefetch::{Kind as Pf, PrefetchPlatform, Prefetchers, Word};
use cachepart_trace::{Kind, Record};
use cachepart_units::Kind as _;

fn setup(word: Option<Word>) -> (Hierarchy, Cache) {
    let l = |size, ways| CacheConfig::lru(size, ways, 64);
    let h = HierarchyConfig {
        l1i: l(32 << 10, 8),
        l1d: l(32 << 10, 8),
        l2: Some(l(256 << 10, 8)),
        mode: Mode::WriteBack,
        inclusion: Inclusion::NonInclusive,
    };
    let llc = Cache::new(&l(2 << 20, 16)).unwrap();
    let mut core = Hierarchy::new(&h, &llc).unwrap();
    if let Some(w) = word {
        let platform = PrefetchPlatform {
            available: Pf::names().iter().map(|n| n.to_string()).collect(),
            streamer_degree: 2,
            streamer_distance: 16,
            ..PrefetchPlatform::default()
        };
        core.swap_prefetchers(Some(Box::new(Prefetchers::new(&platform, w, 6))));
    }
    (core, llc)
}

/// (L1D misses, L2 misses, memory reads, lines issued) of `recs` run
/// with only `on` enabled (None: no prefetcher at all).
fn run(on: Option<&[Pf]>, recs: &[Record]) -> (u64, u64, u64, u64) {
    let (mut core, mut llc) = setup(on.map(Word::only));
    for &r in recs {
        core.access(&mut llc, r);
    }
    let s = core.stats();
    let issued = core
        .prefetchers_mut()
        .map_or(0, |p| p.stats().total_issued());
    (
        s.l1d.total_misses(),
        s.l2.unwrap().total_misses(),
        s.mem.reads,
        issued,
    )
}

fn load(addr: u64) -> Record {
    Record::access(Kind::Load, addr, 8, 0).unwrap()
}

/// One load instruction at `ip` (a fetch record, then the load).
fn load_at(ip: u64, addr: u64) -> [Record; 2] {
    [Record::access(Kind::Ifetch, ip, 4, 0).unwrap(), load(addr)]
}

fn sequential() -> Vec<Record> {
    (0..200_000u64).map(|i| load(0x100_0000 + i * 8)).collect()
}

fn random() -> Vec<Record> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..100_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            load(0x100_0000 + (x % (64 << 20)) / 8 * 8)
        })
        .collect()
}

#[test]
fn next_line_cuts_l1_misses_of_a_sequential_sweep() {
    let base = run(None, &sequential());
    let pf = run(Some(&[Pf::L1NextLine]), &sequential());
    assert!(pf.0 * 2 < base.0, "L1D misses {} -> {}", base.0, pf.0);
    assert!(pf.3 > 0);
}

#[test]
fn the_streamer_cuts_l2_misses_of_a_sequential_sweep() {
    let base = run(None, &sequential());
    let pf = run(Some(&[Pf::L2Streamer]), &sequential());
    assert!(pf.1 * 4 < base.1, "L2 misses {} -> {}", base.1, pf.1);
    // the prefetched lines come from memory: traffic does not shrink
    assert!(
        pf.2 >= base.2 * 9 / 10,
        "memory reads {} -> {}",
        base.2,
        pf.2
    );
}

#[test]
fn adjacent_line_serves_the_other_half_of_each_pair() {
    // random 128-byte pairs, both lines read one after the other
    let recs: Vec<Record> = random()
        .into_iter()
        .flat_map(|r| {
            let pair = r.addr() / 128 * 128;
            [load(pair), load(pair + 64)]
        })
        .collect();
    let base = run(None, &recs);
    let pf = run(Some(&[Pf::L2Adjacent]), &recs);
    assert!(pf.1 * 10 < base.1 * 6, "L2 misses {} -> {}", base.1, pf.1);
}

#[test]
fn ip_stride_follows_one_loads_stride() {
    // one load instruction walking an array 256 bytes at a time (each
    // access its own line, so next-line prefetching would not help), and
    // another instruction reading randomly in between
    let mut recs = Vec::new();
    for (i, r) in random().into_iter().enumerate().take(50_000) {
        recs.extend(load_at(0x40_1000, 0x8000_0000 + i as u64 * 256));
        recs.extend(load_at(0x40_2000, r.addr()));
    }
    let base = run(None, &recs);
    let pf = run(Some(&[Pf::L1IpStride]), &recs);
    assert!(pf.0 * 10 < base.0 * 7, "L1D misses {} -> {}", base.0, pf.0);
    let nl = run(Some(&[Pf::L1NextLine]), &recs);
    assert!(
        nl.0 * 10 > base.0 * 9,
        "next-line should not help: {} -> {}",
        base.0,
        nl.0
    );
}

#[test]
fn no_prefetcher_helps_random_accesses() {
    let recs = random();
    let base = run(None, &recs);
    for k in Pf::all() {
        let pf = run(Some(&[k]), &recs);
        assert!(
            pf.0 * 100 >= base.0 * 97,
            "{k}: L1D misses {} -> {}",
            base.0,
            pf.0
        );
        assert!(
            pf.1 * 100 >= base.1 * 97,
            "{k}: L2 misses {} -> {}",
            base.1,
            pf.1
        );
    }
    // the stride and streamer prefetchers find nothing to follow
    assert!(run(Some(&[Pf::L2Streamer]), &recs).3 < 1000);
}

#[test]
fn every_bit_set_is_the_same_as_no_prefetcher() {
    for recs in [sequential(), random()] {
        let (mut a, mut la) = setup(None);
        let (mut b, mut lb) = setup(Some(Word::ALL_OFF));
        for &r in &recs {
            a.access(&mut la, r);
            b.access(&mut lb, r);
        }
        assert_eq!(a.stats(), b.stats());
        assert_eq!(b.prefetchers_mut().unwrap().stats().total_issued(), 0);
    }
}

#[test]
fn useful_and_useless_lines_are_counted() {
    let (mut core, mut llc) = setup(Some(Word::only(&[Pf::L1NextLine])));
    for r in sequential() {
        core.access(&mut llc, r);
    }
    let s = core.prefetchers_mut().unwrap().stats();
    let issued = s.issued[Pf::L1NextLine as usize];
    assert!(issued > 0);
    // nearly every next line of a sweep is used
    assert!(s.l1_useful * 10 >= issued * 9, "{s:?}");
    assert!(s.l1_useful + s.l1_useless <= issued, "{s:?}");
}

#[test]
fn the_translated_path_sees_first_uses_and_ips_too() {
    // access_at (the simulator's path, with a translated address) takes a
    // shortcut for repeated hits; with prefetchers on it must not hide the
    // first use of a prefetched line
    let (mut core, mut llc) = setup(Some(Word::only(&[Pf::L1NextLine])));
    for i in 0..10_000u64 {
        let a = 0x100_0000 + i * 64;
        core.access_at(&mut llc, load(a), a);
    }
    let s = core.prefetchers_mut().unwrap().stats();
    assert!(s.l1_useful >= 9_990, "{s:?}");
    assert!(
        core.stats().l1d.total_misses() < 10,
        "{:?}",
        core.stats().l1d
    );
}
