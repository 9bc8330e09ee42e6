//! Tests of one TLB array ([`super::TlbArray`]).

use super::*;
use proptest::prelude::*;

/// The plain rules, written out without any layout: per entry a tag, a
/// frame address and the stamp of its last use; a lookup compares every
/// way (the last match wins) and stamps the way it finds; an insertion
/// takes the first way holding the tag or no entry, else the first way
/// of the smallest stamp.
struct Reference {
    ways: usize,
    sets: u64,
    tags: Vec<u64>,
    phys: Vec<u64>,
    stamp: Vec<u64>,
    clock: u64,
}

impl Reference {
    fn new(entries: usize, ways: usize) -> Reference {
        Reference {
            ways,
            sets: (entries / ways.max(1)) as u64,
            tags: vec![INVALID; entries],
            phys: vec![0; entries],
            stamp: vec![0; entries],
            clock: 0,
        }
    }

    fn set(&self, vpn: u64) -> std::ops::Range<usize> {
        let base = (vpn % self.sets.max(1)) as usize * self.ways;
        base..base + self.ways
    }

    fn lookup(&mut self, size: PageSize, vpn: u64) -> Option<u64> {
        let t = tag(size, vpn);
        let way = self.set(vpn).rfind(|&i| self.tags[i] == t)?;
        self.clock += 1;
        self.stamp[way] = self.clock;
        Some(self.phys[way])
    }

    fn insert(&mut self, size: PageSize, vpn: u64, phys: u64) {
        let t = tag(size, vpn);
        let set = self.set(vpn);
        if set.is_empty() {
            return;
        }
        let way = set
            .clone()
            .find(|&i| self.tags[i] == t || self.tags[i] == INVALID)
            .unwrap_or_else(|| set.min_by_key(|&i| self.stamp[i]).unwrap());
        self.clock += 1;
        self.tags[way] = t;
        self.phys[way] = phys;
        self.stamp[way] = self.clock;
    }

    fn invalidate(&mut self, size: PageSize, vpn: u64) {
        let t = tag(size, vpn);
        for i in self.set(vpn) {
            if self.tags[i] == t {
                self.tags[i] = INVALID;
            }
        }
    }

    fn entries_of(&self, size: PageSize) -> usize {
        let huge = u64::from(size == PageSize::Huge);
        self.tags
            .iter()
            .filter(|&&t| t != INVALID && t & 1 == huge)
            .count()
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Lookup(bool, u64),
    Insert(bool, u64, u64),
    Invalidate(bool, u64),
    Flush,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (any::<bool>(), 0u64..48).prop_map(|(h, v)| Op::Lookup(h, v)),
        4 => (any::<bool>(), 0u64..48, 0u64..1 << 20).prop_map(|(h, v, p)| Op::Insert(h, v, p << 12)),
        1 => (any::<bool>(), 0u64..48).prop_map(|(h, v)| Op::Invalidate(h, v)),
        1 => Just(Op::Flush),
    ]
}

fn size(huge: bool) -> PageSize {
    if huge {
        PageSize::Huge
    } else {
        PageSize::Small
    }
}

proptest! {
    /// The branch-free searches agree with the plain rules: the first
    /// way of the tag, and for an insertion the first way of the tag or
    /// of no entry, else the first way of the smallest stamp.
    #[test]
    fn searches_agree_with_the_plain_rules(
        ways in prop_oneof![Just(4usize), Just(8), Just(12), 1usize..=16],
        cells in prop::collection::vec((0u64..6, 0u64..20), 16),
        t in 0u64..6,
    ) {
        // Tag 5 stands for no entry; tags may repeat only in the
        // insertion's set (the search's tags come deduplicated).
        let tags: Vec<u64> = cells[..ways].iter().map(|&(x, _)| if x == 5 { INVALID } else { x }).collect();
        let stamps: Vec<u64> = cells[..ways].iter().map(|&(_, s)| s).collect();
        let want = tags.iter().position(|&x| x == t || x == INVALID).unwrap_or_else(|| {
            (0..ways).min_by_key(|&w| stamps[w]).unwrap()
        });
        prop_assert_eq!(insert_way(&tags, &stamps, t), want);
        let mut seen = Vec::new();
        let unique: Vec<u64> = tags.iter().map(|&x| {
            if seen.contains(&x) { INVALID } else { seen.push(x); x }
        }).collect();
        prop_assert_eq!(find_way(&unique, t), unique.iter().position(|&x| x == t));
    }

    /// Any sequence of lookups, insertions (of pages present or not),
    /// invalidations and flushes gives the answers and the occupancy of
    /// the plain model, for the usual geometries, odd associativities,
    /// sets of 16 ways and more and an array of 0 entries.
    #[test]
    fn the_array_is_the_plain_model(
        geometry in prop_oneof![
            Just((64u32, 4u32)), Just((32, 4)), Just((8, 8)), Just((1536, 12)),
            Just((24, 12)), Just((6, 3)), Just((2, 1)), Just((0, 4)), Just((5, 5)),
            Just((32, 16)), Just((17, 17)), Just((40, 20)),
        ],
        ops in prop::collection::vec(op(), 1..400),
    ) {
        let (entries, ways) = geometry;
        let mut a = TlbArray::new("t", TlbArrayConfig::new(entries, ways)).unwrap();
        let mut r = Reference::new(entries as usize, if entries == 0 { 0 } else { ways as usize });
        for op in ops {
            match op {
                Op::Lookup(h, v) => prop_assert_eq!(a.lookup(size(h), v), r.lookup(size(h), v)),
                Op::Insert(h, v, p) => {
                    a.insert(size(h), v, p);
                    r.insert(size(h), v, p);
                }
                Op::Invalidate(h, v) => {
                    a.invalidate(size(h), v);
                    r.invalidate(size(h), v);
                }
                Op::Flush => {
                    a.flush();
                    r.tags.fill(INVALID);
                }
            }
            for s in [PageSize::Small, PageSize::Huge] {
                prop_assert_eq!(a.entries_of(s), r.entries_of(s));
            }
        }
        prop_assert_eq!(a.occupancy(), r.entries_of(PageSize::Small) + r.entries_of(PageSize::Huge));
    }
}

#[test]
fn lru_within_a_set() {
    // 1 set, 2 ways.
    let mut a = TlbArray::new("t", TlbArrayConfig::new(2, 2)).unwrap();
    a.insert(PageSize::Small, 1, 0x1000);
    a.insert(PageSize::Small, 2, 0x2000);
    assert_eq!(a.lookup(PageSize::Small, 1), Some(0x1000));
    a.insert(PageSize::Small, 3, 0x3000);
    assert_eq!(a.lookup(PageSize::Small, 2), None);
    assert_eq!(a.lookup(PageSize::Small, 1), Some(0x1000));
    // Sizes are told apart.
    assert_eq!(a.lookup(PageSize::Huge, 1), None);
    a.invalidate(PageSize::Small, 1);
    assert_eq!(a.lookup(PageSize::Small, 1), None);
    assert_eq!(a.occupancy(), 1);
    a.insert(PageSize::Huge, 1, 0x20_0000);
    assert_eq!(
        (a.entries_of(PageSize::Small), a.entries_of(PageSize::Huge)),
        (1, 1)
    );
    assert!(TlbArray::new("t", TlbArrayConfig::new(1536, 12)).is_ok());
    assert!(TlbArray::new("t", TlbArrayConfig::new(48, 4)).is_err());
}

#[test]
fn an_array_of_no_entries_never_hits() {
    let mut a = TlbArray::new("t", TlbArrayConfig::new(0, 0)).unwrap();
    a.insert(PageSize::Small, 1, 0x1000);
    assert_eq!(a.lookup(PageSize::Small, 1), None);
    a.invalidate(PageSize::Small, 1);
    a.flush();
    assert_eq!(a.occupancy(), 0);
}
