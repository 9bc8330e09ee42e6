//! The LRU stack: for each reference, the number of distinct lines touched
//! since the previous reference to the same line (its stack distance).
//!
//! Each line's last access time is a *time slot*; a bitmap holds one bit
//! per slot, set when a line's last access is there (a live mark), and the
//! line map ([`LineMap`]) gives each line its slot. The distance of a
//! reference is the number of live marks after its line's slot:
//!
//! * within the slot's block of 512 slots (8 words, one cache line of the
//!   bitmap): popcounts;
//! * after that block: the number of lines held minus the live marks of
//!   the blocks up to it, from a [`Fenwick`] tree of per-block counts
//!   (O(log(slots / 512)) on an array 512 times smaller than the slots).
//!
//! The block that receives new marks (the *open* block) keeps its count
//! outside the tree until it fills, so a reuse within the last few hundred
//! references (most of a real program's) touches no tree at all.
//!
//! Slots are compacted when they run out: each line's slot becomes its
//! rank among the live marks (a walk of the map in bucket order, with word
//! prefix counts of the bitmap), so the table holds about four slots per
//! line held, not one per reference, and stays cache-resident.

use crate::fenwick::Fenwick;
use crate::line_map::{LineMap, Slot};

/// log2 of the slots per block: one bitmap word (the baseline x86-64
/// target has no popcount instruction, so a block is one word to count).
const BLOCK_SHIFT: u32 = 6;
/// Slots per block.
const BLOCK: usize = 1 << BLOCK_SHIFT;
/// Bitmap words per block.
const BLOCK_WORDS: usize = BLOCK / 64;
/// Fewest time slots.
const MIN_SLOTS: usize = 1 << 12;
/// Slots per line held after a compaction.
const SLOTS_PER_LINE: usize = 4;

/// Stack distances over a stream of line references.
#[derive(Clone, Debug)]
pub(crate) struct LruStack {
    /// Line to its last access slot.
    map: LineMap,
    /// One bit per slot: set when it is some line's last access.
    bits: Vec<u64>,
    /// Live marks per block, exact for the blocks before the open one.
    closed: Fenwick,
    /// Live marks in the open block (the block of `now`).
    open: u32,
    /// The next slot to mark.
    now: usize,
}

impl LruStack {
    pub(crate) fn new() -> Self {
        LruStack {
            map: LineMap::new(),
            bits: vec![0; MIN_SLOTS / 64],
            closed: Fenwick::from_counts(&[0; MIN_SLOTS / BLOCK]),
            open: 0,
            now: 0,
        }
    }

    /// Lines held.
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// References `line`: its stack distance (0 when it was the most
    /// recently used line), or `None` on its first reference.
    #[inline(always)]
    pub(crate) fn access(&mut self, line: u64) -> Option<u64> {
        if self.now == self.bits.len() * 64 {
            self.compact();
        }
        let now = self.now as u32;
        match self.map.find(line) {
            Slot::Found(b) => {
                let tp = self.map.val(b) as usize;
                let d = self.after(tp);
                self.unmark(tp);
                self.map.set_val(b, now);
                self.mark();
                Some(d)
            }
            Slot::Vacant(b) => {
                self.map.insert_at(b, line, now);
                self.mark();
                None
            }
        }
    }

    /// A hint that `line` will be referenced soon (see
    /// [`LineMap::prefetch`]); changes nothing.
    #[inline(always)]
    pub(crate) fn prefetch(&self, line: u64) {
        self.map.prefetch(line);
    }

    /// Forgets `line` (its next reference will be a first reference).
    pub(crate) fn remove(&mut self, line: u64) {
        if let Some(tp) = self.map.remove(line) {
            self.unmark(tp as usize);
        }
    }

    /// Live marks after slot `tp` (itself live).
    #[inline(always)]
    fn after(&self, tp: usize) -> u64 {
        let w = tp >> 6;
        let block = tp >> BLOCK_SHIFT;
        let mut d = u64::from((self.bits[w] & (!0u64 << (tp & 63) << 1)).count_ones());
        for x in &self.bits[w + 1..(block + 1) * BLOCK_WORDS] {
            d += u64::from(x.count_ones());
        }
        if block < self.now >> BLOCK_SHIFT {
            // Every line held is marked once; those of blocks 0..=block
            // are in the tree (all closed).
            d += self.map.len() as u64 - self.closed.prefix(block);
        }
        d
    }

    #[inline(always)]
    fn unmark(&mut self, tp: usize) {
        self.bits[tp >> 6] &= !(1u64 << (tp & 63));
        let block = tp >> BLOCK_SHIFT;
        if block < self.now >> BLOCK_SHIFT {
            self.closed.dec(block);
        } else {
            self.open -= 1;
        }
    }

    /// Marks slot `now` and moves on, closing the open block when full.
    #[inline(always)]
    fn mark(&mut self) {
        let now = self.now;
        self.bits[now >> 6] |= 1u64 << (now & 63);
        self.open += 1;
        self.now += 1;
        if self.now & (BLOCK - 1) == 0 {
            self.closed.add(now >> BLOCK_SHIFT, self.open);
            self.open = 0;
        }
    }

    /// Renumbers each line's slot to its rank among the live marks, in a
    /// table of `SLOTS_PER_LINE` slots per line held.
    #[cold]
    #[inline(never)]
    fn compact(&mut self) {
        let words = self.now.div_ceil(64);
        let mut before = Vec::with_capacity(words);
        let mut acc = 0u32;
        for &x in &self.bits[..words] {
            before.push(acc);
            acc += x.count_ones();
        }
        let bits = &self.bits;
        self.map.for_each_val_mut(|v| {
            let t = *v as usize;
            let w = t >> 6;
            *v = before[w] + (bits[w] & ((1u64 << (t & 63)) - 1)).count_ones();
        });
        let live = self.map.len();
        let slots = (SLOTS_PER_LINE * live)
            .max(MIN_SLOTS)
            .next_multiple_of(BLOCK);
        let mut bits = vec![0u64; slots / 64];
        bits[..live / 64].fill(!0);
        if !live.is_multiple_of(64) {
            bits[live / 64] = (1u64 << (live % 64)) - 1;
        }
        self.bits = bits;
        let mut counts = vec![0u32; slots / BLOCK];
        counts[..live >> BLOCK_SHIFT].fill(BLOCK as u32);
        self.closed = Fenwick::from_counts(&counts);
        self.open = (live & (BLOCK - 1)) as u32;
        self.now = live;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Stack distance by scanning a move-to-front list.
    fn naive(trace: &[u64]) -> Vec<Option<u64>> {
        let mut stack: Vec<u64> = Vec::new();
        trace
            .iter()
            .map(|&l| {
                let d = stack.iter().position(|&x| x == l);
                if let Some(p) = d {
                    stack.remove(p);
                }
                stack.insert(0, l);
                d.map(|p| p as u64)
            })
            .collect()
    }

    proptest! {
        #[test]
        fn distances_match_a_move_to_front_list(
            trace in prop::collection::vec(0u64..300, 0..20_000),
        ) {
            let mut s = LruStack::new();
            let got: Vec<_> = trace.iter().map(|&l| s.access(l)).collect();
            prop_assert_eq!(got, naive(&trace));
        }

        #[test]
        fn distances_match_over_many_compactions(
            trace in prop::collection::vec((0u64..3000, 0u64..8), 0..20_000),
        ) {
            // Lines from a wide range (the stack compacts many times and
            // distances cross many blocks) mixed with a hot set of 8.
            let trace: Vec<u64> = trace
                .into_iter()
                .map(|(l, h)| if l % 3 == 0 { h } else { 100 + l * 977 })
                .collect();
            let mut s = LruStack::new();
            let got: Vec<_> = trace.iter().map(|&l| s.access(l)).collect();
            prop_assert_eq!(got, naive(&trace));
        }

        #[test]
        fn removal_forgets_a_line(
            trace in prop::collection::vec((0u64..2000, 0u8..8), 0..6_000),
        ) {
            let mut s = LruStack::new();
            let mut stack: Vec<u64> = Vec::new();
            for (l, op) in trace {
                // Mostly a small set, sometimes a wide one (compactions).
                let l = if op < 6 { l % 50 } else { l };
                if op == 0 {
                    s.remove(l);
                    stack.retain(|&x| x != l);
                } else {
                    let d = stack.iter().position(|&x| x == l);
                    if let Some(p) = d {
                        stack.remove(p);
                    }
                    stack.insert(0, l);
                    prop_assert_eq!(s.access(l), d.map(|p| p as u64));
                }
                prop_assert_eq!(s.len(), stack.len());
            }
        }
    }
}
