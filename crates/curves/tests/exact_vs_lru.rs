//! The exact curves equal a brute-force LRU simulation at every size: a
//! fully associative cache of `n` lines for every `n`, an `S`-set cache at
//! every way count, and a page-colored cache at every color and way count.

use std::collections::HashMap;

use cachepart_curves::{
    colored, fully_associative, set_associative, shards, ColorGeometry, Options, SetAssoc,
    ShardsConfig,
};
use cachepart_trace::{Kind, Record};
use proptest::prelude::*;

/// A reference LRU cache: `sets` sets of `ways` lines, each a vector most
/// recent first.
struct Lru {
    sets: Vec<Vec<u64>>,
    ways: usize,
    misses: u64,
}

impl Lru {
    fn new(sets: usize, ways: usize) -> Self {
        Lru {
            sets: vec![Vec::new(); sets],
            ways,
            misses: 0,
        }
    }

    fn access(&mut self, set: usize, line: u64) {
        let s = &mut self.sets[set];
        match s.iter().position(|&l| l == line) {
            Some(p) => {
                s.remove(p);
            }
            None => {
                self.misses += 1;
                if s.len() == self.ways {
                    s.pop();
                }
            }
        }
        s.insert(0, line);
    }
}

/// Every line reference of `recs` (data only, or with fetches), split at
/// line boundaries, written independently of the crate's own feed.
fn line_refs(recs: &[Record], line: u64, ifetch: bool) -> Vec<u64> {
    let mut out = Vec::new();
    for r in recs {
        let k = r.kind();
        if k == Kind::Escape || (k == Kind::Ifetch && !ifetch) {
            continue;
        }
        let first = r.addr() / line;
        let last = (r.addr() + u64::from(r.size()) - 1) / line;
        out.extend(first..=last);
    }
    out
}

/// Small random traces: addresses over a few pages, so that lines and
/// sets collide often; some accesses cross lines; some fetches.
fn trace() -> impl Strategy<Value = Vec<Record>> {
    let rec = (0u64..24, 0u64..4096, 1u32..17, 0u8..10, 0u32..4).prop_map(
        |(page, off, size, kind, gap)| {
            let kind = match kind {
                0..=4 => Kind::Load,
                5..=7 => Kind::Store,
                8 => Kind::Modify,
                _ => Kind::Ifetch,
            };
            Record::access(kind, 0x40_0000 + page * 4096 + off, size, gap).unwrap()
        },
    );
    prop::collection::vec(rec, 0..600)
}

fn instructions(recs: &[Record]) -> u64 {
    recs.iter().map(|r| r.instructions()).sum()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn fully_associative_equals_lru_at_every_size(recs in trace(), ifetch in any::<bool>(), line_shift in 4u32..8) {
        let line = 1u64 << line_shift;
        let opts = Options::default().with_line_bytes(line).with_ifetch(ifetch);
        let h = fully_associative(recs.iter().copied(), &opts).unwrap();
        let refs = line_refs(&recs, line, ifetch);
        prop_assert_eq!(h.accesses, refs.len() as u64);
        prop_assert_eq!(h.instructions, instructions(&recs));
        let curve = h.curve_every_line();
        let distinct = refs.iter().collect::<std::collections::HashSet<_>>().len();
        prop_assert_eq!(curve.len(), distinct.max(1).max(h.counts.len()));
        for n in 1..=distinct + 2 {
            let mut lru = Lru::new(1, n);
            for &l in &refs {
                lru.access(0, l);
            }
            prop_assert_eq!(h.misses_at_lines(n as u64), lru.misses, "{} lines", n);
            if n <= curve.len() {
                prop_assert_eq!(curve.misses[n - 1], lru.misses);
                prop_assert_eq!(curve.sizes_bytes[n - 1], n as u64 * line);
            }
        }
        // SHARDS at rate 1 samples every line: the exact curve.
        let est = shards(recs.iter().copied(), &opts, &ShardsConfig::fixed_rate(1.0)).unwrap();
        let sizes: Vec<u64> = (1..=distinct as u64 + 2).map(|n| n * line).collect();
        if !sizes.is_empty() {
            prop_assert_eq!(est.curve(&sizes).unwrap(), h.curve(&sizes).unwrap());
        }
    }

    #[test]
    fn set_associative_equals_lru_at_every_way_count(recs in trace(), sets in 1u64..12, max_ways in 1u32..10) {
        let opts = Options::default();
        let c = set_associative(recs.iter().copied(), &opts, &SetAssoc { sets, max_ways }).unwrap();
        let refs = line_refs(&recs, 64, false);
        prop_assert_eq!(c.accesses, refs.len() as u64);
        prop_assert_eq!(c.len(), max_ways as usize);
        for w in 1..=max_ways as usize {
            let mut lru = Lru::new(sets as usize, w);
            for &l in &refs {
                lru.access((l % sets) as usize, l);
            }
            prop_assert_eq!(c.misses[w - 1], lru.misses, "{} ways", w);
            prop_assert_eq!(c.sizes_bytes[w - 1], sets * w as u64 * 64);
        }
    }

    #[test]
    fn colored_equals_lru_at_every_color_and_way_count(
        recs in trace(),
        colors in 1u64..6,
        page_shift in 7u32..13,
        ways in 1u32..6,
    ) {
        let line = 64u64;
        let page = 1u64 << page_shift;
        let per_color = page / line;
        let geom = ColorGeometry { sets: colors * per_color, ways, page_bytes: page };
        let opts = Options::default();
        let cc = colored(recs.iter().copied(), &opts, &geom, None).unwrap();
        prop_assert_eq!(cc.colors as u64, colors);
        let refs = line_refs(&recs, line, false);
        // The documented rule: pages numbered in first-touch order, page k
        // gets color k mod c, a line goes to set color * (P/L) + (line mod P/L).
        let mut order: HashMap<u64, u64> = HashMap::new();
        let ords: Vec<u64> = refs
            .iter()
            .map(|&l| {
                let n = order.len() as u64;
                *order.entry(l * line / page).or_insert(n)
            })
            .collect();
        for c in 1..=colors {
            for w in 1..=ways {
                let mut lru = Lru::new((c * per_color) as usize, w as usize);
                for (&l, &o) in refs.iter().zip(&ords) {
                    lru.access(((o % c) * per_color + l % per_color) as usize, l);
                }
                prop_assert_eq!(cc.misses[c as usize - 1][w as usize - 1], lru.misses, "{} colors {} ways", c, w);
            }
            let by_ways = cc.by_ways(c as u32).unwrap();
            prop_assert_eq!(&by_ways.misses, &cc.misses[c as usize - 1]);
        }
        let by_colors = cc.by_colors(ways).unwrap();
        prop_assert_eq!(by_colors.sizes_bytes[0], page * ways as u64);
    }
}

#[test]
fn all_colors_with_identity_pages_is_the_set_associative_cache() {
    // Pages touched in address order 0, 1, 2, ... get colors 0, 1, 2, ...
    // mod C: the identity mapping, so the full colored cache is the plain
    // set-associative one.
    let recs: Vec<Record> = (0..64u64)
        .chain((0..64).rev())
        .chain(0..64)
        .map(|p| Record::access(Kind::Load, p * 4096 + (p % 7) * 64, 8, 0).unwrap())
        .collect();
    let opts = Options::default();
    let geom = ColorGeometry {
        sets: 256,
        ways: 4,
        page_bytes: 4096,
    };
    let cc = colored(recs.iter().copied(), &opts, &geom, Some(&[4])).unwrap();
    let sa = set_associative(
        recs.iter().copied(),
        &opts,
        &SetAssoc {
            sets: 256,
            max_ways: 4,
        },
    )
    .unwrap();
    assert_eq!(cc.misses[0], sa.misses);
}
