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

    /// The ages of `set` when the cache has exactly `N` ways.
    #[inline(always)]
    fn ages_fixed<const N: usize>(&mut self, set: usize) -> &mut [u8; N] {
        debug_assert_eq!(self.ways, N);
        let a = &mut self.age[set * N..(set + 1) * N];
        a.try_into().expect("N ways a set")
    }

    /// Makes `way` the most recent of `set`. The usual associativities
    /// (4, 8 and 16 ways) work on the ages as one or two machine words
    /// ([`touch_words`]).
    #[inline(always)]
    fn touch(&mut self, set: usize, way: usize) {
        match self.ways {
            4 => touch_word4(self.ages_fixed::<4>(set), way),
            8 => touch_words(self.ages_fixed::<8>(set), way),
            16 => touch_words(self.ages_fixed::<16>(set), way),
            _ => touch_ages(self.ages(set), way),
        }
    }

    /// The way of age `ways - 1` in `set` (the least recent of all).
    #[inline(always)]
    fn oldest(&mut self, set: usize) -> usize {
        let oldest = (self.ways - 1) as u8;
        match self.ways {
            8 => way_of_age_words(self.ages_fixed::<8>(set), oldest),
            16 => way_of_age_words(self.ages_fixed::<16>(set), oldest),
            _ => way_of_age(self.ages(set), oldest),
        }
    }
}

/// A byte of 1 in every byte of a word.
const ONES: u64 = 0x0101_0101_0101_0101;

/// Moves `way` to age 0 in `ages`, aging by one every younger way.
#[inline(always)]
fn touch_ages(ages: &mut [u8], way: usize) {
    let p = ages[way];
    for a in ages.iter_mut() {
        *a += u8::from(*a < p);
    }
    ages[way] = 0;
}

/// [`touch_ages`] eight ways at a time, in a 64-bit word (`N` a multiple
/// of 8). Ages are below 64, so for each byte `a`, `0x7f + p - a` neither
/// borrows from the next byte nor leaves bit 7 clear unless `a >= p`: bit
/// 7 of each byte is `a < p`, the byte's increment.
#[inline(always)]
fn touch_words<const N: usize>(ages: &mut [u8; N], way: usize) {
    let p = u64::from(ages[way]);
    let limit = ONES * (0x7f + p);
    for chunk in ages.chunks_exact_mut(8) {
        let bytes: &mut [u8; 8] = chunk.try_into().expect("8 ages");
        let w = u64::from_le_bytes(*bytes);
        let older = (limit - w) >> 7 & ONES;
        *bytes = (w + older).to_le_bytes();
    }
    ages[way] = 0;
}

/// [`touch_words`] of a 4-way set, in a 32-bit word.
#[inline(always)]
fn touch_word4(ages: &mut [u8; 4], way: usize) {
    const ONES4: u32 = 0x0101_0101;
    let p = u32::from(ages[way]);
    let w = u32::from_le_bytes(*ages);
    let older = (ONES4 * (0x7f + p) - w) >> 7 & ONES4;
    *ages = (w + older).to_le_bytes();
    ages[way] = 0;
}

/// [`Lru::replace`] with every way allowed, eight ways at a time (`N` a
/// multiple of 8): the way of age `N - 1`, every age up by one (ages stay
/// below 65, so no byte carries into the next), and that way's age 0.
#[inline(always)]
fn replace_words<const N: usize>(ages: &mut [u8; N]) -> usize {
    let way = way_of_age_words(ages, (N - 1) as u8);
    for chunk in ages.chunks_exact_mut(8) {
        let bytes: &mut [u8; 8] = chunk.try_into().expect("8 ages");
        *bytes = (u64::from_le_bytes(*bytes) + ONES).to_le_bytes();
    }
    ages[way] = 0;
    way
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

/// [`way_of_age`] eight ways at a time (`N` a multiple of 8; `age` is in
/// the set, which holds each age once): the lowest zero byte of the ages
/// XOR `age`, found with the usual word trick (bytes below the first zero
/// byte are never flagged).
#[inline(always)]
fn way_of_age_words<const N: usize>(ages: &[u8; N], age: u8) -> usize {
    let want = ONES * u64::from(age);
    let mut base = 0;
    for chunk in ages.chunks_exact(8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("8 ages")) ^ want;
        let zero = x.wrapping_sub(ONES) & !x & ONES << 7;
        if zero != 0 {
            return base + (zero.trailing_zeros() / 8) as usize;
        }
        base += 8;
    }
    // Not reached: the set holds every age.
    way_of_age(ages, age)
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
        // `mask` has no bit above the ways: all of them is `ways` bits.
        let all = u64::MAX >> (64 - self.ways);
        if mask == all {
            self.oldest(set)
        } else {
            let ages = self.ages(set);
            ways_of(mask)
                .max_by_key(|&w| ages[w])
                .expect("victim mask is never empty")
        }
    }

    /// With every way allowed, the victim is the way of age `ways - 1`,
    /// and making it the most recent ages every other way by one: all ages
    /// go up by one (eight at a time in a word) and the victim's becomes 0.
    #[inline]
    fn replace(&mut self, set: usize, mask: u64) -> usize {
        let all = u64::MAX >> (64 - self.ways);
        if mask != all {
            let way = self.victim(set, mask);
            self.touch(set, way);
            return way;
        }
        match self.ways {
            4 => {
                let a = self.ages_fixed::<4>(set);
                let way = way_of_age(a, 3);
                *a = (u32::from_le_bytes(*a) + 0x0101_0101).to_le_bytes();
                a[way] = 0;
                way
            }
            8 => replace_words(self.ages_fixed::<8>(set)),
            16 => replace_words(self.ages_fixed::<16>(set)),
            _ => {
                let oldest = (self.ways - 1) as u8;
                let ages = self.ages(set);
                let way = way_of_age(ages, oldest);
                ages.iter_mut().for_each(|a| *a += 1);
                ages[way] = 0;
                way
            }
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
        Replace(u64),
    }

    fn ops(ways: usize) -> impl Strategy<Value = Vec<Op>> {
        let op = prop_oneof![
            6 => (0..ways).prop_map(Op::Use),
            1 => (0..ways).prop_map(Op::Invalidate),
            3 => (1u64..(1u64 << ways)).prop_map(Op::Victim),
            3 => prop_oneof![Just(u64::MAX >> (64 - ways)), 1u64..(1u64 << ways)].prop_map(Op::Replace),
        ];
        prop::collection::vec(op, 0..400)
    }

    proptest! {
        /// Ages give the victims of timestamps, whatever the mix of uses,
        /// invalidations, replacements and masks (victims asked only among valid ways,
        /// as the cache does), and stay a permutation.
        #[test]
        fn ages_agree_with_timestamps(
            (ways, ops) in prop_oneof![1usize..=12, Just(16)].prop_flat_map(|w| (Just(w), ops(w)))
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
                let mut sorted = lru.age[ways..].to_vec();
                sorted.sort_unstable();
                prop_assert_eq!(sorted, (0..ways as u8).collect::<Vec<_>>());
            }
            prop_assert_eq!(&lru.age[..ways], &(0..ways as u8).collect::<Vec<_>>()[..]);
        }
    }
}
