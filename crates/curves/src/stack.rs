//! The LRU stack: for each reference, the number of distinct lines touched
//! since the previous reference to the same line (its stack distance), in
//! O(log n).
//!
//! Each line's last access time is marked in a [`Fenwick`] tree over time
//! slots; the distance of a reference is the number of marks after its
//! line's mark. Times are compacted when the slots run out (live marks are
//! renumbered in order and the tree is rebuilt in O(slots)), so the tree
//! holds about twice as many slots as there are distinct lines, not one
//! per reference, and stays cache-resident for small footprints.

use crate::fenwick::Fenwick;
use crate::line_map::LineMap;

/// A slot with no live mark.
const DEAD: u32 = u32::MAX;

/// Fewest time slots.
const MIN_SLOTS: usize = 1 << 12;

/// Stack distances over a stream of line references.
#[derive(Clone, Debug)]
pub(crate) struct LruStack {
    map: LineMap,
    /// Per line id, its last access time slot.
    last: Vec<u32>,
    /// Per time slot below `now`, the id of the line marked there, or DEAD.
    slot: Vec<u32>,
    free: Vec<u32>,
    tree: Fenwick,
    now: usize,
}

impl LruStack {
    pub(crate) fn new() -> Self {
        LruStack {
            map: LineMap::new(),
            last: Vec::new(),
            slot: vec![DEAD; MIN_SLOTS],
            free: Vec::new(),
            tree: Fenwick::with_prefix_ones(MIN_SLOTS, 0),
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
        let LruStack {
            map, last, free, ..
        } = self;
        let found = map.get_or_insert(line, || match free.pop() {
            Some(id) => id,
            None => {
                last.push(DEAD);
                (last.len() - 1) as u32
            }
        });
        match found {
            Some(id) => {
                let tp = self.last[id as usize] as usize;
                let d = self.map.len() as u64 - self.tree.prefix(tp);
                self.tree.dec(tp);
                self.slot[tp] = DEAD;
                self.place(id);
                Some(d)
            }
            None => {
                let id = self.map.get(line).expect("just inserted");
                self.place(id);
                None
            }
        }
    }

    /// Forgets `line` (its next reference will be a first reference).
    pub(crate) fn remove(&mut self, line: u64) {
        if let Some(id) = self.map.remove(line) {
            let tp = self.last[id as usize] as usize;
            self.tree.dec(tp);
            self.slot[tp] = DEAD;
            self.free.push(id);
        }
    }

    #[inline(always)]
    fn place(&mut self, id: u32) {
        if self.now == self.tree.len() {
            self.compact();
        }
        self.tree.inc(self.now);
        self.slot[self.now] = id;
        self.last[id as usize] = self.now as u32;
        self.now += 1;
    }

    /// Renumbers live marks 0.. in time order into a tree with room for
    /// as many new references again.
    #[cold]
    fn compact(&mut self) {
        let mut n = 0;
        for t in 0..self.now {
            let id = self.slot[t];
            if id != DEAD {
                self.slot[n] = id;
                self.last[id as usize] = n as u32;
                n += 1;
            }
        }
        let slots = (2 * self.map.len()).max(MIN_SLOTS);
        self.slot.truncate(n);
        self.slot.resize(slots, DEAD);
        self.tree = Fenwick::with_prefix_ones(slots, n);
        self.now = n;
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
        fn removal_forgets_a_line(
            trace in prop::collection::vec((0u64..50, any::<bool>()), 0..3_000),
        ) {
            let mut s = LruStack::new();
            let mut stack: Vec<u64> = Vec::new();
            for (l, rm) in trace {
                if rm {
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
