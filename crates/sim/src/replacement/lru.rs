//! Exact LRU: each set keeps the recency order of its ways as one byte
//! per way (its age: 0 for the way used last, `ways - 1` for the way used
//! longest ago); the victim is the allowed way of greatest age.
//!
//! Ages are a permutation of `0..ways` in every set. A use moves a way to
//! age 0 and ages by one every way that was younger; an invalidation
//! moves the way to the oldest age (an invalid way is never a victim:
//! the cache fills invalid ways first). A byte per way keeps the state
//! small (16 bytes a set at 16 ways, an eighth of a timestamp per line),
//! so a simulated LLC's recency state stays in the host's caches.

use super::{ways_of, Replacement};

/// Exact least-recently-used replacement (per-set recency order).
#[derive(Clone, Debug)]
pub struct Lru {
    ways: usize,
    age: Vec<u8>,
}

impl Lru {
    /// State for `sets` x `ways` lines (recency is kept in one byte per
    /// way).
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
        let age = (0..sets).flat_map(|_| 0..ways as u8).collect();
        Lru { ways, age }
    }

    #[inline(always)]
    fn ages(&mut self, set: usize) -> &mut [u8] {
        &mut self.age[set * self.ways..(set + 1) * self.ways]
    }

    #[inline(always)]
    fn touch(&mut self, set: usize, way: usize) {
        let ages = self.ages(set);
        let p = ages[way];
        for a in ages.iter_mut() {
            *a += u8::from(*a < p);
        }
        ages[way] = 0;
    }
}

impl Replacement for Lru {
    #[inline]
    fn on_hit(&mut self, set: usize, way: usize) {
        self.touch(set, way);
    }

    #[inline]
    fn on_repeat_hit(&mut self, _set: usize, _way: usize) {}

    #[inline]
    fn on_fill(&mut self, set: usize, way: usize) {
        self.touch(set, way);
    }

    #[inline]
    fn victim(&mut self, set: usize, mask: u64) -> usize {
        let ways = self.ways;
        let ages = self.ages(set);
        if mask.count_ones() as usize == ways {
            let oldest = (ways - 1) as u8;
            let mut at = 0u64;
            for (w, &a) in ages.iter().enumerate() {
                at |= u64::from(a == oldest) << w;
            }
            at.trailing_zeros() as usize
        } else {
            ways_of(mask)
                .max_by_key(|&w| ages[w])
                .expect("victim mask is never empty")
        }
    }

    fn on_invalidate(&mut self, set: usize, way: usize) {
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
    }

    fn ops(ways: usize) -> impl Strategy<Value = Vec<Op>> {
        let op = prop_oneof![
            6 => (0..ways).prop_map(Op::Use),
            1 => (0..ways).prop_map(Op::Invalidate),
            3 => (1u64..(1u64 << ways)).prop_map(Op::Victim),
        ];
        prop::collection::vec(op, 0..400)
    }

    proptest! {
        /// Ages give the victims of timestamps, whatever the mix of uses,
        /// invalidations and masks (victims asked only among valid ways,
        /// as the cache does), and stay a permutation.
        #[test]
        fn ages_agree_with_timestamps(
            (ways, ops) in (1usize..=12).prop_flat_map(|w| (Just(w), ops(w)))
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
                }
                let mut sorted = lru.age[ways..].to_vec();
                sorted.sort_unstable();
                prop_assert_eq!(sorted, (0..ways as u8).collect::<Vec<_>>());
            }
            prop_assert_eq!(&lru.age[..ways], &(0..ways as u8).collect::<Vec<_>>()[..]);
        }
    }
}
