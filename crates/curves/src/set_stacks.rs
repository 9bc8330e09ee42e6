//! Per-set LRU stacks of bounded depth: for each reference, its stack
//! distance within its set, up to the associativity of interest.
//!
//! A reference at set distance `p` (`p` other lines of its set touched
//! since its previous reference) hits in every `w`-way LRU cache with
//! `w > p` of the same sets, so one pass with stacks `max_ways` deep gives
//! the misses of every way count `1..=max_ways` at once. Each set is a
//! move-to-front array of tags, most recent first.

use cachepart_units::TooLarge;

use crate::error::CurveError;

/// Marks an empty way (line numbers are below 2^61).
const EMPTY: u64 = u64::MAX;

/// Bounded LRU stacks for a number of sets.
#[derive(Clone, Debug)]
pub(crate) struct SetStacks {
    ways: usize,
    tags: Vec<u64>,
    /// `hist[p]`: references found at depth `p`; `hist[ways]`: not found.
    hist: Vec<u64>,
}

/// Bytes of the tags of `sets` stacks `ways` deep (one `u64` per way).
pub(crate) fn tag_bytes(sets: u64, ways: u64) -> u128 {
    u128::from(sets) * u128::from(ways) * 8
}

impl SetStacks {
    /// Empty stacks; an error if their tags would not fit in memory (the
    /// caller checks the total of all its stacks first with
    /// [`tag_bytes`]; this catches a failed allocation all the same).
    pub(crate) fn new(sets: usize, ways: usize) -> Result<Self, CurveError> {
        let n = sets.checked_mul(ways);
        let bytes = tag_bytes(sets as u64, ways as u64);
        let mut tags = Vec::new();
        if n.is_none_or(|n| tags.try_reserve_exact(n).is_err()) {
            return Err(CurveError::TooLarge(TooLarge {
                what: "the per-set LRU stacks".into(),
                why: format!("{sets} sets x {ways} ways x 8 B; the allocation failed"),
                bytes,
                limit: cachepart_units::host_memory::host_memory_bytes(),
            }));
        }
        tags.resize(sets * ways, EMPTY);
        Ok(SetStacks {
            ways,
            tags,
            hist: vec![0; ways + 1],
        })
    }

    /// References `tag` in set `set`.
    #[inline(always)]
    pub(crate) fn access(&mut self, set: usize, tag: u64) {
        let w = self.ways;
        let row = &mut self.tags[set * w..set * w + w];
        if row[0] == tag {
            self.hist[0] += 1;
            return;
        }
        let p = row.iter().position(|&t| t == tag).unwrap_or(w);
        let end = p.min(w - 1);
        row.copy_within(0..end, 1);
        row[0] = tag;
        self.hist[p] += 1;
    }

    /// Adds the depth histogram into `into` (length `ways + 1`).
    pub(crate) fn add_hist(&self, into: &mut [u64]) {
        for (a, b) in into.iter_mut().zip(&self.hist) {
            *a += b;
        }
    }
}

/// Misses of every way count `1..=ways` from a depth histogram.
pub(crate) fn misses_by_ways(hist: &[u64]) -> Vec<u64> {
    let ways = hist.len() - 1;
    (1..=ways).map(|w| hist[w..].iter().sum()).collect()
}

/// The set of a line among `sets` sets (a mask for a power of two).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SetIndex {
    sets: u64,
    mask: Option<u64>,
}

impl SetIndex {
    pub(crate) fn new(sets: u64) -> Self {
        SetIndex {
            sets,
            mask: sets.is_power_of_two().then(|| sets - 1),
        }
    }

    #[inline(always)]
    pub(crate) fn of(&self, line: u64) -> u64 {
        match self.mask {
            Some(m) => line & m,
            None => line % self.sets,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depths_within_one_set() {
        let mut s = SetStacks::new(1, 2).unwrap();
        for t in [1, 2, 1, 3, 2, 2] {
            s.access(0, t);
        }
        // 1 new, 2 new, 1 at depth 1, 3 new, 2 evicted (depth >= 2), 2 at 0.
        assert_eq!(s.hist, vec![1, 1, 4]);
        assert_eq!(misses_by_ways(&s.hist), vec![5, 4]);
        assert_eq!(SetIndex::new(6).of(13), 1);
        assert_eq!(SetIndex::new(8).of(13), 5);
    }
}
