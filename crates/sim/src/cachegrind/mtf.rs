//! The tag store of the cachegrind-compatible simulator: one LRU cache as
//! valgrind's `cg_sim.c` keeps it, each set's blocks in most-recently-used
//! order. A hit moves its block to the front; a miss shifts the set down
//! one way (the last block falls out) and puts the new block first.
//!
//! This is all cachegrind's model needs: no dirty bits, owners, masks or
//! replacement policy object, so the common case (a hit on the set's most
//! recent block) is one load and one compare. Commoner still is a lookup
//! of the very block looked up last (the next instruction fetch in the
//! same line, mostly): that block is the most recent of its set, so the
//! lookup is a hit that changes nothing, and the cache answers it from
//! the block number it keeps, without touching the set. The general
//! [`Cache`] gives the same counts more slowly; `super::tests` checks the
//! two against each other.
//!
//! [`Cache`]: crate::cache::Cache

use crate::geometry::Geometry;

/// No block: block numbers are addresses shifted right by at least four
/// bits, so they never reach `u64::MAX`.
const EMPTY: u64 = u64::MAX;

/// One LRU cache in move-to-front order.
#[derive(Clone, Debug)]
pub(super) struct MtfCache {
    /// `sets x ways` block numbers, set by set, most recent first.
    tags: Box<[u64]>,
    ways: usize,
    set_mask: u64,
    line_bits: u32,
    /// The block looked up last ([`EMPTY`] after a flush), the most recent
    /// of its set.
    last: u64,
}

impl MtfCache {
    /// An empty cache of an unsliced geometry.
    pub(super) fn new(g: &Geometry) -> Self {
        debug_assert_eq!(g.slices(), 1);
        MtfCache {
            tags: vec![EMPTY; g.lines()].into_boxed_slice(),
            ways: g.ways() as usize,
            set_mask: g.sets() - 1,
            line_bits: g.line_bits(),
            last: EMPTY,
        }
    }

    /// The line size's bit count.
    pub(super) fn line_bits(&self) -> u32 {
        self.line_bits
    }

    /// Looks `block` up and makes it the most recent of its set; `true`
    /// on a miss. Written without a panicking index, so that the caller's
    /// counters can stay in registers across the loop.
    #[inline(always)]
    fn block_misses(&mut self, block: u64) -> bool {
        let base = (block & self.set_mask) as usize * self.ways;
        let Some(set) = self.tags.get_mut(base..base + self.ways) else {
            return true; // never: the set index is masked to the sets
        };
        if set.first() == Some(&block) {
            return false;
        }
        let (end, hit) = match set.iter().skip(1).position(|&t| t == block) {
            Some(i) => (i + 1, true),
            None => (set.len().saturating_sub(1), false),
        };
        // the block found (or the least recent, to be replaced) comes first
        if let Some(moved) = set.get_mut(..=end) {
            moved.rotate_right(1);
        }
        if let Some(first) = set.first_mut() {
            *first = block;
        }
        !hit
    }

    /// cachegrind's reference of `size` bytes (at least one) at `addr`:
    /// every line it touches is looked up, and it misses if any of them
    /// missed. A reference that runs past the top of the address space
    /// goes on at line 0.
    #[inline(always)]
    pub(super) fn misses(&mut self, addr: u64, size: u32) -> bool {
        let first = addr >> self.line_bits;
        let last = addr.wrapping_add(u64::from(size.max(1)) - 1) >> self.line_bits;
        if first == last {
            if first == self.last {
                return false;
            }
            self.last = first;
            return self.block_misses(first);
        }
        self.last = last;
        let mut miss = self.block_misses(first);
        let mut b = first;
        let blocks = u64::MAX >> self.line_bits;
        while b != last {
            b = b.wrapping_add(1) & blocks;
            miss |= self.block_misses(b);
        }
        miss
    }

    /// Empties every set.
    pub(super) fn flush(&mut self) {
        self.tags.fill(EMPTY);
        self.last = EMPTY;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(size: u64, ways: u32, line: u32) -> MtfCache {
        MtfCache::new(&Geometry::new(size, ways, line).unwrap())
    }

    #[test]
    fn evicts_the_least_recently_used_block_of_its_set() {
        // 2 sets of 2 ways, 16-byte lines: blocks 0, 2, 4 share set 0
        let mut c = cache(64, 2, 16);
        assert!(c.misses(0x00, 4));
        assert!(c.misses(0x20, 4));
        assert!(!c.misses(0x00, 4)); // 0 becomes the most recent
        assert!(c.misses(0x40, 4)); // evicts block 2, not 0
        assert!(!c.misses(0x00, 4));
        assert!(c.misses(0x20, 4));
        assert!(c.misses(0x10, 4), "set 1 is untouched by set 0's traffic");
    }

    #[test]
    fn a_straddling_reference_misses_if_either_line_missed() {
        let mut c = cache(256, 4, 16);
        assert!(c.misses(0x00, 1));
        assert!(!c.misses(0x00, 1));
        assert!(c.misses(0x0e, 4), "0x10's line is new");
        assert!(!c.misses(0x0e, 4), "both lines are present now");
        c.flush();
        assert!(c.misses(0x0e, 4));
    }

    #[test]
    fn the_block_looked_up_last_hits_until_another_lookup_or_a_flush() {
        // 2 sets of 1 way, 16-byte lines: blocks 0 and 2 share set 0
        let mut c = cache(32, 1, 16);
        assert!(c.misses(0x00, 4));
        assert!(!c.misses(0x04, 4), "the same block again");
        assert!(c.misses(0x10, 4), "block 1, set 1");
        assert!(!c.misses(0x00, 4), "set 1's lookup left set 0 alone");
        assert!(c.misses(0x20, 4), "block 2 evicts block 0");
        assert!(
            c.misses(0x00, 4),
            "block 0 was evicted, not kept as the last"
        );
        assert!(!c.misses(0x0e, 4), "blocks 0 and 1 are both there");
        assert!(!c.misses(0x10, 1), "block 1, the last of the two");
        c.flush();
        assert!(c.misses(0x10, 1), "a flush forgets the last block too");
    }

    #[test]
    fn a_reference_past_the_top_of_the_address_space_wraps_to_line_0() {
        let mut c = cache(256, 4, 16);
        assert!(c.misses(u64::MAX - 1, 4));
        assert!(!c.misses(0, 2), "line 0 was looked up");
        assert!(!c.misses(u64::MAX - 15, 16));
    }
}
