//! Replacement policies behind one small trait, one file each.
//!
//! A [`Replacement`] keeps its own per-line state and answers three
//! events of a [`Cache`](crate::Cache): a hit, a fill, and "which way
//! to evict". Victims are chosen only among the ways of a **way mask**
//! (Intel CAT semantics: a core fills only the ways of its mask, but hits
//! in any way), and only when all those ways hold valid lines: the cache
//! itself fills invalid ways first.
//!
//! [`PolicyKind`] names the policies (kebab-case, as in configuration
//! files) and [`PolicyState`] is the enum a configured cache holds.

mod lru;
mod random;
mod recency;
mod srrip;

pub use lru::Lru;
pub use random::RandomPolicy;
pub use srrip::Srrip;

#[cfg(test)]
use cachepart_units::Kind as _;
use serde::{Deserialize, Serialize};

/// Per-line replacement state and victim choice.
///
/// `set` is the set index and `way` the way within the set; `mask` has
/// bit `w` set for each way `w` that may be evicted (never empty, never
/// above the cache's ways).
pub trait Replacement {
    /// The line at (`set`, `way`) was hit.
    fn on_hit(&mut self, set: usize, way: usize);
    /// The line at (`set`, `way`) was hit again, and it is the line of the
    /// set that was hit or filled last. Policies whose state cannot change
    /// on such a hit (LRU: it is already the most recent) skip the work.
    #[inline]
    fn on_repeat_hit(&mut self, set: usize, way: usize) {
        self.on_hit(set, way);
    }
    /// A new line was filled into (`set`, `way`).
    fn on_fill(&mut self, set: usize, way: usize);
    /// The way of `set`, among those in `mask`, to evict; all of them hold
    /// valid lines.
    fn victim(&mut self, set: usize, mask: u64) -> usize;
    /// [`Replacement::victim`] followed by [`Replacement::on_fill`] of the
    /// way chosen (a miss replacing a valid line): returns that way.
    /// Policies may do both in one step.
    #[inline]
    fn replace(&mut self, set: usize, mask: u64) -> usize {
        let way = self.victim(set, mask);
        self.on_fill(set, way);
        way
    }
    /// The line at (`set`, `way`) was invalidated.
    fn on_invalidate(&mut self, _set: usize, _way: usize) {}
}

/// The names of the replacement policies.
#[cachepart_units::kind]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyKind {
    /// Exact least-recently-used.
    #[default]
    Lru,
    /// Static re-reference interval prediction, 2-bit RRPV, insertion at 2.
    Srrip,
    /// Uniformly random among the allowed ways, from a seeded stream.
    Random,
}

impl PolicyKind {
    /// Host bytes the policy's state takes for `sets` x `ways` lines:
    /// LRU a word per set up to 16 ways and a byte per line above, SRRIP a
    /// byte per line, random nothing per line.
    pub fn host_bytes(self, sets: u128, ways: u128) -> u128 {
        match self {
            PolicyKind::Lru if ways <= recency::MAX_WAYS as u128 => sets * 8,
            PolicyKind::Lru | PolicyKind::Srrip => sets * ways,
            PolicyKind::Random => 0,
        }
    }

    /// A fresh policy for `sets` x `ways` lines; `seed` feeds random.
    pub fn build(self, sets: usize, ways: usize, seed: u64) -> PolicyState {
        match self {
            PolicyKind::Lru => PolicyState::Lru(Lru::new(sets, ways)),
            PolicyKind::Srrip => PolicyState::Srrip(Srrip::new(sets, ways)),
            PolicyKind::Random => PolicyState::Random(RandomPolicy::new(seed)),
        }
    }
}

/// A configured policy: one of the [`PolicyKind`]s with its state.
///
/// The variant is a plain tag byte (`repr(u8)`), so that dispatching on it
/// is one compare; LRU's hit and replacement are inlined into the cache,
/// the other policies' are calls.
#[derive(Clone, Debug)]
#[repr(u8)]
pub enum PolicyState {
    /// See [`Lru`].
    Lru(Lru),
    /// See [`Srrip`].
    Srrip(Srrip),
    /// See [`RandomPolicy`].
    Random(RandomPolicy),
}

impl PolicyState {
    /// Which policy this is.
    pub fn kind(&self) -> PolicyKind {
        match self {
            PolicyState::Lru(_) => PolicyKind::Lru,
            PolicyState::Srrip(_) => PolicyKind::Srrip,
            PolicyState::Random(_) => PolicyKind::Random,
        }
    }
}

impl PolicyState {
    /// [`Replacement::on_hit`] of the policies other than LRU.
    #[inline(never)]
    fn on_hit_other(&mut self, set: usize, way: usize) {
        match self {
            PolicyState::Lru(p) => p.on_hit(set, way),
            PolicyState::Srrip(p) => p.on_hit(set, way),
            PolicyState::Random(p) => p.on_hit(set, way),
        }
    }

    /// [`Replacement::on_repeat_hit`] of the policies other than LRU.
    #[inline(never)]
    fn on_repeat_hit_other(&mut self, set: usize, way: usize) {
        match self {
            PolicyState::Lru(p) => p.on_repeat_hit(set, way),
            PolicyState::Srrip(p) => p.on_repeat_hit(set, way),
            PolicyState::Random(p) => p.on_repeat_hit(set, way),
        }
    }

    /// [`Replacement::replace`] of the policies other than LRU.
    #[inline(never)]
    fn replace_other(&mut self, set: usize, mask: u64) -> usize {
        match self {
            PolicyState::Lru(p) => p.replace(set, mask),
            PolicyState::Srrip(p) => p.replace(set, mask),
            PolicyState::Random(p) => p.replace(set, mask),
        }
    }
}

impl Replacement for PolicyState {
    #[inline(always)]
    fn on_hit(&mut self, set: usize, way: usize) {
        match self {
            PolicyState::Lru(p) => p.on_hit(set, way),
            other => other.on_hit_other(set, way),
        }
    }

    /// Nothing for LRU (one compare of the tag); a call for the others.
    #[inline(always)]
    fn on_repeat_hit(&mut self, set: usize, way: usize) {
        if !matches!(self, PolicyState::Lru(_)) {
            self.on_repeat_hit_other(set, way);
        }
    }

    #[inline]
    fn on_fill(&mut self, set: usize, way: usize) {
        match self {
            PolicyState::Lru(p) => p.on_fill(set, way),
            PolicyState::Srrip(p) => p.on_fill(set, way),
            PolicyState::Random(p) => p.on_fill(set, way),
        }
    }

    #[inline]
    fn victim(&mut self, set: usize, mask: u64) -> usize {
        match self {
            PolicyState::Lru(p) => p.victim(set, mask),
            PolicyState::Srrip(p) => p.victim(set, mask),
            PolicyState::Random(p) => p.victim(set, mask),
        }
    }

    #[inline(always)]
    fn replace(&mut self, set: usize, mask: u64) -> usize {
        match self {
            PolicyState::Lru(p) => p.replace(set, mask),
            other => other.replace_other(set, mask),
        }
    }

    #[inline]
    fn on_invalidate(&mut self, set: usize, way: usize) {
        match self {
            PolicyState::Lru(p) => p.on_invalidate(set, way),
            PolicyState::Srrip(p) => p.on_invalidate(set, way),
            PolicyState::Random(p) => p.on_invalidate(set, way),
        }
    }
}

/// Iterates over the set bits of `mask`, lowest first.
#[inline]
pub(crate) fn ways_of(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if mask == 0 {
            None
        } else {
            let w = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            Some(w)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_each_kind() {
        for k in PolicyKind::all() {
            assert_eq!(k.build(4, 4, 1).kind(), k);
        }
        assert_eq!(PolicyKind::Srrip.name(), "srrip");
    }

    #[test]
    fn ways_of_lists_set_bits() {
        assert_eq!(ways_of(0b1011_0000).collect::<Vec<_>>(), vec![4, 5, 7]);
        assert_eq!(ways_of(0).count(), 0);
        assert_eq!(ways_of(u64::MAX).count(), 64);
    }
}
