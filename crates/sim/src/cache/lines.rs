//! Operations on lines already present: prefetch and dirty marks,
//! probes, invalidation, write-backs from above, flushes and listings.

use super::set::{find, SetState};
use super::{Cache, Victim, INVALID, NO_OWNER};
use crate::replacement::{ways_of, Replacement};

impl<R: Replacement> Cache<R> {
    /// Marks `block`, if present, as a prefetched line no demand access
    /// has used: the next hit on it reports [`LineOutcome::first_use`](super::LineOutcome::first_use), or
    /// its eviction [`Victim::unused_prefetch`].
    pub fn mark_prefetched(&mut self, block: u64) {
        if let Some((set, way)) = self.find(block) {
            self.sets[set].prefetched |= 1 << way;
        }
    }

    /// Whether `block` is present (no state changes).
    pub fn contains(&self, block: u64) -> bool {
        self.find(block).is_some()
    }

    /// Whether `block` is present and dirty (`None` when absent).
    pub fn is_dirty(&self, block: u64) -> Option<bool> {
        self.find(block)
            .map(|(set, way)| self.sets[set].is_dirty(way))
    }

    /// Marks `block`, if present, dirty (without touching the policy: a
    /// line a victim cache returned dirty).
    pub fn mark_dirty(&mut self, block: u64) {
        if let Some((set, way)) = self.find(block) {
            self.sets[set].mark_dirty(way);
        }
    }

    /// Removes `block`; returns whether it was dirty (`None` when absent).
    pub fn invalidate(&mut self, block: u64) -> Option<bool> {
        let (set, way) = self.find(block)?;
        let i = set * self.ways + way;
        self.tags[i] = INVALID;
        let st = &mut self.sets[set];
        if st.mru_block == block {
            st.mru_block = INVALID;
        }
        st.valid -= 1;
        let dirty = st.is_dirty(way);
        st.set_dirty(way, false);
        st.prefetched &= !(1 << way);
        if !self.owners.is_empty() {
            self.retag(i, true, None);
        }
        self.repl.on_invalidate(set, way);
        Some(dirty)
    }

    /// A dirty line written back from the level above: marks `block` dirty
    /// if present (without touching the policy, as the line was not used),
    /// else allocates it dirty into a way of `mask`. Returns the victim of
    /// that allocation.
    #[inline(always)]
    pub fn write_back(&mut self, block: u64, mask: u64) -> Option<Victim> {
        self.stats.writebacks_in += 1;
        // The set is computed once (a sliced LLC hashes for it).
        let set = self.geom.set_of(block);
        let base = set * self.ways;
        if let Some(way) = find(&self.sets[set], &self.tags[base..base + self.ways], block) {
            self.sets[set].mark_dirty(way);
            return None;
        }
        self.stats.writeback_misses += 1;
        self.fill(set, block, true, mask)
    }

    /// Empties the cache; returns the number of dirty lines dropped
    /// (which the caller writes back).
    pub fn flush(&mut self) -> u64 {
        // Only valid lines are ever dirty (an invalidation cleans its way).
        let n = self
            .sets
            .iter()
            .map(|s| u64::from(s.dirty.count_ones()))
            .sum();
        for (i, t) in self.tags.iter_mut().enumerate() {
            if *t != INVALID {
                *t = INVALID;
                self.repl.on_invalidate(i / self.ways, i % self.ways);
            }
        }
        self.sets.fill(SetState::EMPTY);
        self.owners.fill(NO_OWNER);
        self.owner_lines.fill(0);
        n
    }

    /// The blocks present, in set and way order.
    pub fn blocks(&self) -> impl Iterator<Item = u64> + '_ {
        self.tags.iter().copied().filter(|&t| t != INVALID)
    }

    /// Valid lines held in the ways of `mask`.
    pub fn occupancy(&self, mask: u64) -> usize {
        self.tags
            .chunks_exact(self.ways)
            .map(|set| {
                ways_of(mask & self.full)
                    .filter(|&w| set[w] != INVALID)
                    .count()
            })
            .sum()
    }
}
