//! A [`Cache`](super::Cache) with LRU replacement against a plain model
//! (per set, a list of ways holding a block, a dirty bit and the time of
//! its last use), over random lookups, write-backs and invalidations with
//! random way masks, on plain and sliced geometries of 1 to 20 ways.

use super::*;
use proptest::prelude::*;

/// A way of the model: block, dirty, time of last use.
type Way = Option<(u64, bool, u64)>;

struct Model {
    sets: Vec<Vec<Way>>,
    now: u64,
}

impl Model {
    /// Puts `block` into `set` (an invalid way of `mask` first, else the
    /// way of `mask` used longest ago); returns the victim.
    fn fill(&mut self, set: usize, block: u64, dirty: bool, mask: u64) -> Option<Victim> {
        let ways = &mut self.sets[set];
        let allowed = || (0..ways.len()).filter(|&w| mask >> w & 1 != 0);
        let way = allowed()
            .find(|&w| ways[w].is_none())
            .or_else(|| allowed().min_by_key(|&w| ways[w].map(|(_, _, t)| t)))
            .unwrap();
        let victim = ways[way].map(|(block, dirty, _)| Victim {
            block,
            dirty,
            unused_prefetch: false,
        });
        self.now += 1;
        ways[way] = Some((block, dirty, self.now));
        victim
    }

    fn find(&mut self, set: usize, block: u64) -> Option<&mut (u64, bool, u64)> {
        self.sets[set].iter_mut().flatten().find(|l| l.0 == block)
    }
}

#[derive(Clone, Debug)]
enum Op {
    Line(u64, bool, u64),
    WriteBack(u64, u64),
    Invalidate(u64),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let block = 0u64..600;
    let op = prop_oneof![
        8 => (block.clone(), any::<bool>(), prop_oneof![Just(u64::MAX), any::<u64>()])
            .prop_map(|(b, w, m)| Op::Line(b, w, m)),
        2 => (block.clone(), prop_oneof![Just(u64::MAX), any::<u64>()])
            .prop_map(|(b, m)| Op::WriteBack(b, m)),
        1 => block.prop_map(Op::Invalidate),
    ];
    prop::collection::vec(op, 1..1500)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Hits, victims, dirty bits and contents follow the model.
    #[test]
    fn lru_cache_follows_a_plain_model(
        ops in ops(),
        ways in prop_oneof![1u32..=20, Just(4), Just(8), Just(16)],
        sets_log in 0u32..4,
        slices in prop_oneof![Just(1u32), Just(2), Just(4)],
    ) {
        let sets = (1u64 << sets_log) * u64::from(slices);
        let cfg = CacheConfig::lru(sets * u64::from(ways) * 64, ways, 64).with_slices(slices);
        let mut c = Cache::new(&cfg).unwrap();
        let full = c.full_mask();
        let g = *c.geometry();
        let mut m = Model { sets: vec![vec![None; ways as usize]; sets as usize], now: 0 };
        for op in ops {
            match op {
                Op::Line(b, write, mask) => {
                    // An empty mask stands for all ways.
                    let mask = if mask & full == 0 { full } else { mask & full };
                    // Every other lookup takes the plain path's route: the
                    // repeated-hit check, then the lookup past it.
                    let out = if m.now.is_multiple_of(2) {
                        c.line(b, write, mask)
                    } else if c.repeat_hit(b, write) {
                        LineOutcome { hit: true, victim: None, first_use: false }
                    } else {
                        c.line_not_repeated(b, write, mask)
                    };
                    let set = g.set_of(b);
                    m.now += 1;
                    let now = m.now;
                    let want = match m.find(set, b) {
                        Some(l) => {
                            l.1 |= write;
                            l.2 = now;
                            None
                        }
                        None => Some(m.fill(set, b, write, mask)),
                    };
                    prop_assert_eq!(out.hit, want.is_none());
                    prop_assert_eq!(out.victim, want.flatten());
                }
                Op::WriteBack(b, mask) => {
                    let mask = if mask & full == 0 { full } else { mask & full };
                    let got = c.write_back(b, mask);
                    let set = g.set_of(b);
                    let want = match m.find(set, b) {
                        Some(l) => {
                            l.1 = true;
                            None
                        }
                        None => m.fill(set, b, true, mask),
                    };
                    prop_assert_eq!(got, want);
                }
                Op::Invalidate(b) => {
                    let set = g.set_of(b);
                    let want = m.sets[set]
                        .iter_mut()
                        .find(|l| l.is_some_and(|l| l.0 == b))
                        .and_then(|l| l.take())
                        .map(|l| l.1);
                    prop_assert_eq!(c.invalidate(b), want);
                }
            }
        }
        for (set, ways) in m.sets.iter().enumerate() {
            for l in ways.iter().flatten() {
                prop_assert_eq!(g.set_of(l.0), set);
                prop_assert_eq!(c.is_dirty(l.0), Some(l.1));
            }
        }
        prop_assert_eq!(
            c.blocks().count(),
            m.sets.iter().flatten().flatten().count()
        );
    }
}
