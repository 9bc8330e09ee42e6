//! Tests of the cache level ([`super::Cache`]).

use super::*;
use crate::replacement::PolicyKind;

fn cache(size: u64, ways: u32, policy: PolicyKind) -> Cache {
    Cache::new(&CacheConfig::lru(size, ways, 64).with_policy(policy)).unwrap()
}

#[test]
fn lru_set_behaves_like_a_stack() {
    // 1 set, 2 ways.
    let mut c = cache(128, 2, PolicyKind::Lru);
    let all = c.full_mask();
    assert!(!c.line(1, false, all).hit);
    assert!(!c.line(2, false, all).hit);
    assert!(c.line(1, false, all).hit);
    let out = c.line(3, false, all);
    assert_eq!(
        out.victim,
        Some(Victim {
            block: 2,
            dirty: false,
            unused_prefetch: false,
        })
    );
    assert!(c.contains(1) && c.contains(3) && !c.contains(2));
}

#[test]
fn dirty_bits_of_all_64_ways() {
    // One set of 64 ways: every way's dirty bit, the top one included,
    // is its own, survives hits, and leaves with its line.
    let mut c = cache(64 * 64, 64, PolicyKind::Lru);
    let all = c.full_mask();
    for b in 0..64u64 {
        c.line(b, b % 3 == 0 || b == 63, all);
    }
    for b in 0..64u64 {
        assert_eq!(c.is_dirty(b), Some(b % 3 == 0 || b == 63), "block {b}");
    }
    c.line(5, true, all); // a write hit dirties only its line
    assert_eq!(c.is_dirty(5), Some(true));
    assert_eq!(c.is_dirty(4), Some(false));
    assert_eq!(c.invalidate(63), Some(true));
    c.line(100, false, all); // fills the invalidated way, clean
    assert_eq!(c.is_dirty(100), Some(false));
    // LRU order: 0..62 (without 5), then 5, then 100. Evict them all.
    let mut dirty = 0;
    for b in 200..264u64 {
        let v = c.line(b, false, all).victim.unwrap();
        dirty += u64::from(v.dirty);
        let want = match b - 200 {
            i @ 0..=4 => i,
            i @ 5..=61 => i + 1,
            62 => 5,
            _ => 100,
        };
        assert_eq!(v.block, want);
        assert_eq!(v.dirty, want % 3 == 0 || want == 5, "block {want}");
    }
    assert_eq!(dirty, c.stats().dirty_evictions);
    assert_eq!(dirty, 22);
    assert_eq!(c.flush(), 0);
}

#[test]
fn write_back_counts_dirty_evictions() {
    let mut c = cache(128, 2, PolicyKind::Lru);
    let all = c.full_mask();
    c.line(1, true, all);
    c.line(2, false, all);
    let v = c.line(3, false, all).victim.unwrap();
    assert_eq!(
        v,
        Victim {
            block: 1,
            dirty: true,
            unused_prefetch: false,
        }
    );
    assert_eq!(c.stats().dirty_evictions, 1);
    assert_eq!(c.stats().evictions, 1);
    // A write-back allocates dirty.
    assert_eq!(c.write_back(9, all).map(|v| v.block), Some(2));
    assert_eq!(c.is_dirty(9), Some(true));
    assert_eq!(c.stats().writeback_misses, 1);
    assert_eq!(c.flush(), 1);
    assert_eq!(c.occupancy(all), 0);
}

#[test]
fn straddling_access_counts_one_miss() {
    // 64-byte lines, 16 sets.
    let mut c = cache(4096, 4, PolicyKind::Lru);
    let all = c.full_mask();
    assert!(c.access(60, 8, AccessKind::Read, all));
    assert_eq!(c.stats().refs(AccessKind::Read), 1);
    assert_eq!(c.stats().misses(AccessKind::Read), 1);
    assert!(c.contains(0) && c.contains(1));
    // One of two lines missing is still one miss.
    c.invalidate(1);
    assert!(c.access(60, 8, AccessKind::Read, all));
    assert!(!c.access(60, 8, AccessKind::Read, all));
    assert_eq!(c.stats().misses(AccessKind::Read), 2);
}

#[test]
fn fills_respect_the_way_mask_and_hits_do_not() {
    for policy in PolicyKind::all() {
        // 1 set, 4 ways.
        let mut c = cache(256, 4, policy);
        for b in 0..4 {
            c.line(b, false, 0b1111);
        }
        // Filling under mask 0b0011 only ever replaces ways 0 and 1,
        // so blocks 2 and 3 (in ways 2 and 3) survive.
        for b in 10..50 {
            assert!(!c.line(b, false, 0b0011).hit, "{policy:?}");
            assert!(c.contains(2) && c.contains(3), "{policy:?}");
        }
        // Hits are found outside the mask.
        assert!(c.line(3, false, 0b0011).hit);
        assert_eq!(c.occupancy(0b1100), 2);
    }
}

#[test]
fn invalid_ways_of_the_mask_fill_first() {
    let mut c = cache(256, 4, PolicyKind::Random);
    c.line(7, false, 0b1000);
    c.line(8, false, 0b1100);
    assert_eq!(c.occupancy(0b1100), 2);
    assert_eq!(c.occupancy(0b0011), 0);
}

#[test]
fn owners_are_counted_incrementally() {
    // 4 sets, 2 ways.
    let mut c = cache(512, 2, PolicyKind::Lru);
    let all = c.full_mask();
    assert_eq!(c.occupancy_of(0), 0);
    c.line(100, false, all); // before tracking: nobody's
    c.set_owner_tracking(2);
    c.set_owner(0);
    for b in 0..4 {
        c.line(b, false, all);
    }
    c.set_owner(1);
    for b in 4..8 {
        c.line(b, false, all);
    }
    // Set 0 held 100, 0, then 4 evicted 100 (nobody's); 8 lines in
    // all, 4 each.
    assert_eq!((c.occupancy_of(0), c.occupancy_of(1)), (4, 4));
    c.set_owner(1);
    c.line(8, false, all); // set 0: evicts 0 (owner 0)
    assert_eq!((c.occupancy_of(0), c.occupancy_of(1)), (3, 5));
    c.invalidate(8);
    assert_eq!(c.occupancy_of(1), 4);
    assert_eq!(c.occupancy_of(7), 0);
    c.flush();
    assert_eq!(c.occupancy_of(1), 0);
}

use proptest::prelude::*;

/// Accesses over 64 lines-worth of sets, some straddling two lines.
fn accesses() -> impl Strategy<Value = Vec<(u64, u32)>> {
    prop::collection::vec((0u64..(1 << 14), 1u32..=16), 1..2000)
}

fn misses(sets: u64, ways: u32, mask: u64, t: &[(u64, u32)]) -> Vec<bool> {
    let mut c = Cache::new(&CacheConfig::lru(sets * u64::from(ways) * 64, ways, 64)).unwrap();
    t.iter()
        .map(|&(a, s)| c.access(a, s, AccessKind::Read, mask))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// LRU's inclusion (stack) property: with the set count fixed
    /// (1 set: fully associative), a cache with one more way holds a
    /// superset of the lines, so every access that hits with `w` ways
    /// hits with `w + 1`, and misses never rise.
    #[test]
    fn lru_misses_never_rise_with_more_ways(t in accesses(), sets_log in 0u32..5, w in 1u32..12) {
        let sets = 1 << sets_log;
        let small = misses(sets, w, u64::MAX, &t);
        let big = misses(sets, w + 1, u64::MAX, &t);
        for (s, b) in small.iter().zip(&big) {
            prop_assert!(*s || !*b, "a hit with {} ways missed with {}", w, w + 1);
        }
    }

    /// Per-owner counts always equal a recount of the lines, and sum
    /// to at most the lines of the cache.
    #[test]
    fn owner_counts_match_a_recount(t in prop::collection::vec((0u64..512, 0u16..3, any::<bool>()), 1..1500)) {
        let mut c = cache(2048, 4, PolicyKind::Lru);
        c.set_owner_tracking(3);
        for &(b, o, inv) in &t {
            c.set_owner(o);
            if inv { c.invalidate(b); } else { c.line(b, false, c.full_mask()); }
        }
        let mut recount = [0u64; 3];
        for (i, &tag) in c.tags.iter().enumerate() {
            if tag != INVALID { recount[usize::from(c.owners[i])] += 1; }
        }
        prop_assert_eq!(recount, [c.occupancy_of(0), c.occupancy_of(1), c.occupancy_of(2)]);
        prop_assert!(recount.iter().sum::<u64>() <= c.geometry().lines() as u64);
    }

    /// Filling only the ways of a `k`-bit mask of an 8-way LRU cache
    /// behaves exactly like a `k`-way cache of the same sets.
    #[test]
    fn lru_mask_of_k_ways_is_a_k_way_cache(t in accesses(), mask in 1u64..256) {
        let k = mask.count_ones();
        prop_assert_eq!(misses(8, 8, mask, &t), misses(8, k, u64::MAX, &t));
    }
}
