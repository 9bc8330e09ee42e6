//! Exact LRU: each set keeps the recency order of its ways; the victim
//! is the allowed way used longest ago.
//!
//! A set of at most 16 ways keeps its order in one 64-bit word, a nibble
//! per age (see [`recency`](super::recency)): the common miss, a fill of
//! a full set with every way allowed, is a shift of that word. Wider sets
//! keep one byte per way, its age (0 for the way used last, `ways - 1`
//! for the way used longest ago). Ages are a permutation of `0..ways` in
//! every set. A use moves a way to age 0 and ages by one every way that
//! was younger; an invalidation moves the way to the oldest age (an
//! invalid way is never a victim: the cache fills invalid ways first).
//! Either form is small (8 bytes a set up to 16 ways, a byte per way
//! above), so a simulated LLC's recency state stays in the host's caches.

use super::recency::{self, Width, MAX_WAYS};
use super::{ways_of, Replacement};

/// Exact least-recently-used replacement (per-set recency order).
#[derive(Clone, Debug)]
pub struct Lru {
    ways: usize,
    /// The mask of all ways.
    all: u64,
    /// The recency words' constants (sets of at most 16 ways).
    width: Width,
    /// Per set, its recency word (sets of at most 16 ways; else empty).
    stacks: Vec<u64>,
    /// Per set and way, its age (sets of more than 16 ways; else empty).
    age: Vec<u8>,
}

impl Lru {
    /// State for `sets` x `ways` lines.
    ///
    /// # Panics
    ///
    /// When `ways` is not in `1..=64`; a checked [`crate::Geometry`]
    /// never has more.
    pub fn new(sets: usize, ways: usize) -> Self {
        assert!(
            (1..=64).contains(&ways),
            "LRU supports 1 to 64 ways, not {ways}"
        );
        let width = Width::new(ways.min(MAX_WAYS));
        let (stacks, age) = if ways <= MAX_WAYS {
            (vec![width.fresh(); sets], Vec::new())
        } else {
            (Vec::new(), (0..sets).flat_map(|_| 0..ways as u8).collect())
        };
        Lru {
            ways,
            all: u64::MAX >> (64 - ways),
            width,
            stacks,
            age,
        }
    }

    /// Whether sets keep their order in a word.
    #[inline(always)]
    fn in_words(&self) -> bool {
        self.ways <= MAX_WAYS
    }

    #[inline(always)]
    fn ages(&mut self, set: usize) -> &mut [u8] {
        &mut self.age[set * self.ways..(set + 1) * self.ways]
    }

    /// The age of every way of `set`, in way order.
    #[cfg(test)]
    fn ages_of(&self, set: usize) -> Vec<u8> {
        if self.in_words() {
            (0..self.ways)
                .map(|w| recency::age(self.stacks[set], w) as u8)
                .collect()
        } else {
            self.age[set * self.ways..(set + 1) * self.ways].to_vec()
        }
    }
}

/// Moves `way` to age 0 in `ages`, aging by one every younger way.
#[inline(always)]
fn touch_ages(ages: &mut [u8], way: usize) {
    let p = ages[way];
    for a in ages.iter_mut() {
        *a += u8::from(*a < p);
    }
    ages[way] = 0;
}

/// The first way of `ages` of age `age` (branch-free: every way is
/// compared).
#[inline(always)]
fn way_of_age(ages: &[u8], age: u8) -> usize {
    let mut at = 0u64;
    for (w, &a) in ages.iter().enumerate() {
        at |= u64::from(a == age) << w;
    }
    at.trailing_zeros() as usize
}

impl Lru {
    /// [`Replacement::on_hit`] of a set of more than 16 ways.
    #[inline(never)]
    fn touch_wide(&mut self, set: usize, way: usize) {
        touch_ages(self.ages(set), way);
    }

    /// [`Replacement::replace`] of all but the common case (a set of at
    /// most 16 ways with every way allowed).
    #[inline(never)]
    fn replace_rest(&mut self, set: usize, mask: u64) -> usize {
        if self.in_words() {
            let s = &mut self.stacks[set];
            let way = self.width.oldest_of(*s, mask);
            *s = recency::touch(*s, way);
            return way;
        }
        if mask != self.all {
            let way = self.victim(set, mask);
            self.touch_wide(set, way);
            return way;
        }
        let oldest = (self.ways - 1) as u8;
        let ages = self.ages(set);
        let way = way_of_age(ages, oldest);
        ages.iter_mut().for_each(|a| *a += 1);
        ages[way] = 0;
        way
    }
}

impl Replacement for Lru {
    #[inline(always)]
    fn on_hit(&mut self, set: usize, way: usize) {
        if self.in_words() {
            let s = &mut self.stacks[set];
            *s = recency::touch(*s, way);
        } else {
            self.touch_wide(set, way);
        }
    }

    #[inline]
    fn on_repeat_hit(&mut self, _set: usize, _way: usize) {}

    #[inline]
    fn on_fill(&mut self, set: usize, way: usize) {
        self.on_hit(set, way);
    }

    #[inline]
    fn victim(&mut self, set: usize, mask: u64) -> usize {
        if self.in_words() {
            let s = self.stacks[set];
            return if mask == self.all {
                self.width.oldest(s)
            } else {
                self.width.oldest_of(s, mask)
            };
        }
        let ages = self.ages(set);
        ways_of(mask)
            .max_by_key(|&w| ages[w])
            .expect("victim mask is never empty")
    }

    /// With every way allowed, the victim is the way used longest ago,
    /// and making it the most recent ages every other way by one: a shift
    /// of the set's recency word (or, above 16 ways, every age up by one
    /// and the victim's 0).
    #[inline(always)]
    fn replace(&mut self, set: usize, mask: u64) -> usize {
        if self.in_words() && mask == self.all {
            let s = &mut self.stacks[set];
            let (next, way) = self.width.replace_oldest(*s);
            *s = next;
            return way;
        }
        self.replace_rest(set, mask)
    }

    fn on_invalidate(&mut self, set: usize, way: usize) {
        if self.in_words() {
            let s = &mut self.stacks[set];
            *s = self.width.demote(*s, way);
            return;
        }
        let oldest = (self.ways - 1) as u8;
        let ages = self.ages(set);
        let p = ages[way];
        for a in ages.iter_mut() {
            *a -= u8::from(*a > p);
        }
        ages[way] = oldest;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn evicts_least_recently_used_within_mask() {
        let mut p = Lru::new(1, 4);
        for w in 0..4 {
            p.on_fill(0, w);
        }
        p.on_hit(0, 0);
        assert_eq!(p.victim(0, 0b1111), 1);
        assert_eq!(p.victim(0, 0b1101), 2);
        assert_eq!(p.victim(0, 0b1001), 3);
        p.on_hit(0, 1);
        assert_eq!(p.victim(0, 0b1111), 2);
    }

    /// The oracle: a timestamp per line (0: invalid), the victim is the
    /// allowed valid way of the smallest stamp.
    struct Stamps {
        stamp: Vec<u64>,
        clock: u64,
    }

    impl Stamps {
        fn victim(&self, mask: u64) -> usize {
            ways_of(mask).min_by_key(|&w| self.stamp[w]).unwrap()
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Use(usize),
        Invalidate(usize),
        Victim(u64),
        Replace(u64),
    }

    fn ops(ways: usize) -> impl Strategy<Value = Vec<Op>> {
        let all = u64::MAX >> (64 - ways);
        let op = prop_oneof![
            6 => (0..ways).prop_map(Op::Use),
            1 => (0..ways).prop_map(Op::Invalidate),
            3 => (1u64..=all).prop_map(Op::Victim),
            3 => prop_oneof![Just(all), 1u64..=all].prop_map(Op::Replace),
        ];
        prop::collection::vec(op, 0..400)
    }

    proptest! {
        /// Ages give the victims of timestamps, whatever the mix of uses,
        /// invalidations, replacements and masks (victims asked only among valid ways,
        /// as the cache does), and stay a permutation.
        #[test]
        fn ages_agree_with_timestamps(
            (ways, ops) in prop_oneof![1usize..=20, Just(16), Just(64)].prop_flat_map(|w| (Just(w), ops(w)))
        ) {
            let mut lru = Lru::new(2, ways);
            let mut oracle = Stamps { stamp: vec![0; ways], clock: 1 };
            for op in ops {
                match op {
                    Op::Use(w) => {
                        lru.on_hit(1, w);
                        oracle.stamp[w] = oracle.clock;
                        oracle.clock += 1;
                    }
                    Op::Invalidate(w) => {
                        lru.on_invalidate(1, w);
                        oracle.stamp[w] = 0;
                    }
                    Op::Victim(mask) => {
                        let valid = ways_of(mask).filter(|&w| oracle.stamp[w] != 0);
                        let mask = valid.fold(0u64, |m, w| m | 1 << w);
                        if mask != 0 {
                            prop_assert_eq!(lru.victim(1, mask), oracle.victim(mask));
                        }
                    }
                    Op::Replace(mask) => {
                        // A replacement happens only once the allowed ways
                        // are valid; else a use stands in for the fill.
                        let valid = ways_of(mask).filter(|&w| oracle.stamp[w] != 0);
                        let valid = valid.fold(0u64, |m, w| m | 1 << w);
                        if valid == mask {
                            let w = oracle.victim(mask);
                            prop_assert_eq!(lru.replace(1, mask), w);
                            oracle.stamp[w] = oracle.clock;
                            oracle.clock += 1;
                        } else {
                            let w = mask.trailing_zeros() as usize;
                            lru.on_fill(1, w);
                            oracle.stamp[w] = oracle.clock;
                            oracle.clock += 1;
                        }
                    }
                }
                let mut sorted = lru.ages_of(1);
                sorted.sort_unstable();
                prop_assert_eq!(sorted, (0..ways as u8).collect::<Vec<_>>());
            }
            prop_assert_eq!(lru.ages_of(0), (0..ways as u8).collect::<Vec<_>>());
        }
    }
}
