//! The recency order of one set of at most 16 ways in a 64-bit word:
//! nibble `i` (bits `4i..4i + 4`) holds the way of age `i` (0: used
//! last; `ways - 1`: used longest ago). The nibbles from `ways` up hold
//! `0xf`, which names no way of a set of fewer than 16 ways, so a search
//! for a way never finds them.
//!
//! Every operation is a handful of word operations: replacing the oldest
//! way is a shift, and moving a way to the front is a search for its
//! nibble (the usual zero-nibble trick) and a shift of the nibbles below
//! it. [`Lru`](super::Lru) keeps one such word per set.

/// The most ways a recency word holds.
pub(super) const MAX_WAYS: usize = 16;

/// A nibble of 1 in every nibble of a word.
const ONES: u64 = 0x1111_1111_1111_1111;

/// The top bit of every nibble.
const HIGHS: u64 = ONES << 3;

/// The constants of one set width.
#[derive(Clone, Copy, Debug)]
pub(super) struct Width {
    /// The nibbles of the ways (all ones at 16 ways).
    used: u64,
    /// The nibbles past the ways (`!used`, all `0xf`).
    unused: u64,
    /// The shift of the oldest way's nibble (`4 * (ways - 1)`).
    oldest: u32,
}

impl Width {
    /// The constants for `ways` ways (`1..=16`).
    pub(super) fn new(ways: usize) -> Width {
        debug_assert!((1..=MAX_WAYS).contains(&ways));
        let used = u64::MAX >> (64 - 4 * ways);
        Width {
            used,
            unused: !used,
            oldest: 4 * (ways as u32 - 1),
        }
    }

    /// The order of a fresh set: way `i` has age `i`.
    pub(super) fn fresh(self) -> u64 {
        let ways = self.oldest / 4 + 1;
        (0..ways).fold(!self.used, |s, w| s | u64::from(w) << (4 * w))
    }

    /// The way of age `ways - 1`.
    #[inline(always)]
    pub(super) fn oldest(self, stack: u64) -> usize {
        (stack >> self.oldest & 0xf) as usize
    }

    /// The oldest way made the most recent (every other way one older):
    /// the new order and that way.
    #[inline(always)]
    pub(super) fn replace_oldest(self, stack: u64) -> (u64, usize) {
        let way = self.oldest(stack);
        (stack << 4 & self.used | self.unused | way as u64, way)
    }

    /// The oldest way among those of `mask` (not empty, only ways of the
    /// set).
    #[inline]
    pub(super) fn oldest_of(self, stack: u64, mask: u64) -> usize {
        let mut shift = self.oldest;
        loop {
            let way = (stack >> shift & 0xf) as usize;
            if mask >> way & 1 != 0 || shift == 0 {
                return way;
            }
            shift -= 4;
        }
    }

    /// `way` moved to the oldest age; the ways older than it one younger
    /// each.
    pub(super) fn demote(self, stack: u64, way: usize) -> u64 {
        let below = (1u64 << (4 * age(stack, way))) - 1;
        let moved = stack & below | stack >> 4 & !below;
        let top = 0xf << self.oldest;
        moved & self.used & !top | (way as u64) << self.oldest | !self.used
    }
}

/// Top bits of nibbles of `stack` that may hold `way` (which must be in
/// it): the lowest one is `way`'s. The zero nibbles of `stack ^ way *
/// ONES` are flagged; a false flag needs a borrow from a zero nibble
/// below it.
#[inline(always)]
fn flags(stack: u64, way: usize) -> u64 {
    let x = stack ^ ONES.wrapping_mul(way as u64);
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// The age of `way` in `stack` (`way` must be in it).
#[inline(always)]
pub(super) fn age(stack: u64, way: usize) -> u32 {
    flags(stack, way).trailing_zeros() / 4
}

/// `way` made the most recent of `stack`: the ways younger than it one
/// older each.
#[inline(always)]
pub(super) fn touch(stack: u64, way: usize) -> u64 {
    // Bits of the nibbles up to and including `way`'s: every bit up to
    // the lowest flag.
    let flags = flags(stack, way);
    let upto = flags ^ flags.wrapping_sub(1);
    stack & !upto | stack << 4 & upto | way as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The ages of every way, from the word.
    fn ages(stack: u64, ways: usize) -> Vec<u32> {
        (0..ways).map(|w| age(stack, w)).collect()
    }

    /// The model: the ways, most recent first.
    fn nibbles(stack: u64, ways: usize) -> Vec<usize> {
        (0..ways)
            .map(|i| (stack >> (4 * i) & 0xf) as usize)
            .collect()
    }

    #[test]
    fn fresh_sets_age_ways_in_order() {
        for ways in 1..=MAX_WAYS {
            let w = Width::new(ways);
            let s = w.fresh();
            assert_eq!(nibbles(s, ways), (0..ways).collect::<Vec<_>>());
            assert_eq!(ages(s, ways), (0..ways as u32).collect::<Vec<_>>());
            assert_eq!(w.oldest(s), ways - 1);
        }
        assert_eq!(Width::new(4).fresh(), 0xffff_ffff_ffff_3210);
        assert_eq!(Width::new(16).fresh(), 0xfedc_ba98_7654_3210);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Touch(usize),
        Replace,
        Demote(usize),
        OldestOf(u64),
    }

    proptest! {
        /// Every operation does to the word what it does to a list of the
        /// ways, most recent first.
        #[test]
        fn word_follows_a_list(
            (ways, ops) in (1..=MAX_WAYS).prop_flat_map(|ways| (
                Just(ways),
                prop::collection::vec(prop_oneof![
                    (0..ways).prop_map(Op::Touch),
                    Just(Op::Replace),
                    (0..ways).prop_map(Op::Demote),
                    (1u64..1 << ways).prop_map(Op::OldestOf),
                ], 0..200),
            ))
        ) {
            let w = Width::new(ways);
            let mut s = w.fresh();
            let mut list: Vec<usize> = (0..ways).collect();
            for op in ops {
                match op {
                    Op::Touch(way) => {
                        s = touch(s, way);
                        list.retain(|&x| x != way);
                        list.insert(0, way);
                    }
                    Op::Replace => {
                        let (next, way) = w.replace_oldest(s);
                        s = next;
                        prop_assert_eq!(Some(way), list.pop());
                        list.insert(0, way);
                    }
                    Op::Demote(way) => {
                        s = w.demote(s, way);
                        list.retain(|&x| x != way);
                        list.push(way);
                    }
                    Op::OldestOf(mask) => {
                        let want = list.iter().rev().find(|&&x| mask >> x & 1 != 0);
                        prop_assert_eq!(Some(&w.oldest_of(s, mask)), want);
                    }
                }
                prop_assert_eq!(nibbles(s, ways), list.clone());
                prop_assert_eq!(s & !w.used, !w.used);
            }
        }
    }
}
