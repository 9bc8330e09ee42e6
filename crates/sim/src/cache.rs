//! One set-associative cache level: tags, dirty bits, a replacement
//! policy, way masks and counters.
//!
//! The cache sees **line numbers** (blocks) of already-translated
//! addresses: whoever owns address translation (none yet: virtual
//! addresses; physical ones once paging exists) hands it addresses, and
//! the cache only does bit selection on them. PolicyState is write-back and
//! write-allocate: a write marks the line dirty and a dirty victim is
//! reported to the caller, which writes it back below.
//!
//! Two entry points:
//! * [`Cache::line`] looks up one line and fills it on a miss, without
//!   counting a reference (the caller decides what a reference is);
//! * [`Cache::access`] is cachegrind's reference: an access of `size`
//!   bytes looks up every line it spans, counts one reference, and misses
//!   if any line missed.
//!
//! Fills go only into the ways of the given mask; hits are found in any
//! way (Intel CAT semantics). Invalid ways of the mask are filled before
//! the policy is asked for a victim.
//!
//! Owner tracking (for per-application LLC occupancy, as Intel CMT
//! reports it): after [`Cache::set_owner_tracking`], every fill is
//! tagged with the current owner ([`Cache::set_owner`], set by whoever
//! runs an application on a core) and per-owner line counts are kept
//! incrementally ([`Cache::occupancy_of`]). Off by default: no per-line
//! owner array exists and fills pay one predictable branch.
//!
//! A cache may carry an exclusive victim cache below it
//! ([`Cache::set_victim`], the Power5's L3: see [`crate::victim`]); the
//! cache never looks at it itself, its user (the
//! [`Hierarchy`](crate::Hierarchy)) does, on the cache's misses and
//! evictions.

use crate::error::GeometryError;
use crate::geometry::{CacheConfig, Geometry};
use crate::replacement::{ways_of, PolicyState, Replacement};
use crate::stats::{AccessKind, LevelStats};
use crate::victim::VictimCache;
#[cfg(test)]
use cachepart_units::Kind as _;

/// Tag of an invalid line (no block number reaches it: addresses are at
/// most 64 bits and lines at least 4 bytes).
const INVALID: u64 = u64::MAX;

/// Owner of a line filled before owner tracking began.
pub const NO_OWNER: u16 = u16::MAX;
mod frame_marks;
mod lines;
mod owners;
mod set;

pub use frame_marks::{line_frames, FrameMarks};

use set::{find, SetState};

/// A line evicted to make room for a fill.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Victim {
    /// Its block (line) number.
    pub block: u64,
    /// Whether it was dirty (so must be written back).
    pub dirty: bool,
    /// Whether it was a prefetched line no demand access used.
    pub unused_prefetch: bool,
}

/// The outcome of a line lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineOutcome {
    /// Whether the line was present.
    pub hit: bool,
    /// The line evicted by the fill, if a valid one was.
    pub victim: Option<Victim>,
    /// A hit on a prefetched line this access is the first to use.
    pub first_use: bool,
}

/// A set-associative cache level with replacement policy `R`.
#[derive(Clone, Debug)]
pub struct Cache<R = PolicyState> {
    geom: Geometry,
    ways: usize,
    full: u64,
    tags: Vec<u64>,
    /// Per set: the most recent block, dirty bits, valid count.
    sets: Vec<SetState>,
    repl: R,
    stats: LevelStats,
    /// Per line, the owner that filled it (empty: tracking off).
    owners: Vec<u16>,
    /// Per owner, the lines it holds.
    owner_lines: Vec<u64>,
    /// The owner of the next fills.
    owner: u16,
    /// The victim cache below this one, if any.
    victim: Option<Box<VictimCache>>,
    /// The frames that may have lines in the hierarchy this cache is the
    /// last level of, if its owner keeps them ([`Cache::keep_frame_marks`]).
    frames: Option<Box<FrameMarks>>,
}

/// Host bytes a cache of geometry `geom` under `policy` allocates when it
/// is built: per line its tag (and, when `owners`, the owner the LLC
/// tracks), per set its [`SetState`], and the replacement state. The
/// platform's memory check adds these up before any cache is built.
pub(crate) fn host_bytes(
    geom: &Geometry,
    policy: crate::replacement::PolicyKind,
    owners: bool,
) -> u128 {
    let lines = geom.lines() as u128;
    let sets = u128::from(geom.sets());
    let per_line = std::mem::size_of::<u64>()
        + if owners {
            std::mem::size_of::<u16>()
        } else {
            0
        };
    lines * per_line as u128
        + sets * std::mem::size_of::<SetState>() as u128
        + policy.host_bytes(sets, u128::from(geom.ways()))
}

impl Cache<PolicyState> {
    /// An empty cache as configured.
    pub fn new(cfg: &CacheConfig) -> Result<Self, GeometryError> {
        let geom = cfg.geometry()?;
        let policy = cfg
            .policy
            .build(geom.sets() as usize, geom.ways() as usize, cfg.seed);
        Ok(Cache::with_policy(geom, policy))
    }
}

impl<R: Replacement> Cache<R> {
    /// An empty cache of geometry `geom` driven by `repl` (which must be
    /// sized for the same sets and ways).
    pub fn with_policy(geom: Geometry, repl: R) -> Self {
        let lines = geom.lines();
        Cache {
            geom,
            ways: geom.ways() as usize,
            full: geom.full_mask(),
            tags: vec![INVALID; lines],
            sets: vec![SetState::EMPTY; geom.sets() as usize],
            repl,
            stats: LevelStats::default(),
            owners: Vec::new(),
            owner_lines: Vec::new(),
            owner: NO_OWNER,
            victim: None,
            frames: None,
        }
    }

    /// Installs (or removes) the victim cache below this one; returns the
    /// one it replaces.
    pub fn set_victim(&mut self, v: Option<VictimCache>) -> Option<VictimCache> {
        std::mem::replace(&mut self.victim, v.map(Box::new)).map(|b| *b)
    }

    /// Keeps (from now on) the marks of the frames that may have lines in
    /// the hierarchy this cache is the last level of (see
    /// [`FrameMarks`]); off by default.
    pub fn keep_frame_marks(&mut self) {
        self.frames.get_or_insert_with(Box::default);
    }

    /// The frame marks, if kept ([`Cache::keep_frame_marks`]).
    #[inline(always)]
    pub fn frame_marks(&self) -> Option<&FrameMarks> {
        self.frames.as_deref()
    }

    /// The frame marks, if kept, to mark frames.
    #[inline(always)]
    pub fn frame_marks_mut(&mut self) -> Option<&mut FrameMarks> {
        self.frames.as_deref_mut()
    }

    /// The victim cache below this one.
    #[inline(always)]
    pub fn victim(&self) -> Option<&VictimCache> {
        self.victim.as_deref()
    }

    /// The victim cache below this one, to change.
    #[inline(always)]
    pub fn victim_mut(&mut self) -> Option<&mut VictimCache> {
        self.victim.as_deref_mut()
    }
    /// The geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    /// The mask of all ways.
    pub fn full_mask(&self) -> u64 {
        self.full
    }

    /// The replacement policy and its state.
    pub fn policy(&self) -> &R {
        &self.repl
    }

    /// The counters.
    pub fn stats(&self) -> &LevelStats {
        &self.stats
    }

    /// Zeroes the counters (the contents stay).
    pub fn reset_stats(&mut self) {
        self.stats = LevelStats::default();
    }

    /// Counts one reference of `kind` (for callers of [`Cache::line`]).
    #[inline]
    pub fn record(&mut self, kind: AccessKind, miss: bool) {
        self.stats.record(kind, miss);
    }

    /// [`Cache::line`] of `block` when it is its set's most recent block
    /// (a hit that changes nothing but the dirty bit of a `write`):
    /// `true`; else `false`, with nothing done.
    #[inline(always)]
    pub fn repeat_hit(&mut self, block: u64, write: bool) -> bool {
        let set = self.geom.set_of(block);
        let st = &mut self.sets[set];
        if st.mru_block != block {
            return false;
        }
        let way = usize::from(st.mru_way);
        if write {
            st.mark_dirty(way);
        }
        self.repl.on_repeat_hit(set, way);
        true
    }

    /// [`Cache::repeat_hit`] that also takes the line's prefetch mark:
    /// `None` when `block` is not its set's most recent block (nothing
    /// done), else whether it was a prefetched line not used before (it is
    /// used now).
    #[inline(always)]
    pub fn repeat_hit_taking_mark(&mut self, block: u64, write: bool) -> Option<bool> {
        let set = self.geom.set_of(block);
        let st = &mut self.sets[set];
        if st.mru_block != block {
            return None;
        }
        let way = usize::from(st.mru_way);
        if write {
            st.mark_dirty(way);
        }
        let first_use = st.take_prefetched(way);
        self.repl.on_repeat_hit(set, way);
        Some(first_use)
    }

    /// Looks up block `block`; on a hit updates the policy, on a miss
    /// fills it into a way of `mask` (an invalid one if any, else the
    /// policy's victim). A `write` leaves the line dirty. Counts evictions
    /// but no reference.
    #[inline(always)]
    pub fn line(&mut self, block: u64, write: bool, mask: u64) -> LineOutcome {
        let set = self.geom.set_of(block);
        let st = &mut self.sets[set];
        if st.mru_block == block {
            let way = usize::from(st.mru_way);
            if write {
                st.mark_dirty(way);
            }
            let first_use = st.take_prefetched(way);
            self.repl.on_repeat_hit(set, way);
            return LineOutcome {
                hit: true,
                victim: None,
                first_use,
            };
        }
        self.line_past_mru(set, block, write, mask)
    }

    /// [`Cache::line`] of a block that is not its set's most recent block
    /// (its caller has just seen [`Cache::repeat_hit`] return `false`):
    /// the same outcome, without looking at the most recent block again.
    #[inline(always)]
    pub fn line_not_repeated(&mut self, block: u64, write: bool, mask: u64) -> LineOutcome {
        let set = self.geom.set_of(block);
        debug_assert!(self.sets[set].mru_block != block, "a repeated block");
        self.line_past_mru(set, block, write, mask)
    }

    /// [`Cache::line`] of `block` in `set` once its most recent block is
    /// known to be another: the search, then a hit or a fill.
    #[inline(always)]
    fn line_past_mru(&mut self, set: usize, block: u64, write: bool, mask: u64) -> LineOutcome {
        let base = set * self.ways;
        let st = &mut self.sets[set];
        let tags = &self.tags[base..base + self.ways];
        if let Some(way) = find(st, tags, block) {
            if write {
                st.mark_dirty(way);
            }
            st.mru_block = block;
            st.mru_way = way as u8;
            let first_use = st.take_prefetched(way);
            self.repl.on_hit(set, way);
            return LineOutcome {
                hit: true,
                victim: None,
                first_use,
            };
        }
        let victim = self.fill(set, block, write, mask);
        LineOutcome {
            hit: false,
            victim,
            first_use: false,
        }
    }

    /// Puts `block` into `set`, in a way of `mask`. A full set (the common
    /// case once warm) goes straight to the policy, which learns of the
    /// fill in the same step that chooses the victim; the rest is out of
    /// line ([`Cache::fill_not_full`]).
    #[inline(always)]
    fn fill(&mut self, set: usize, block: u64, write: bool, mask: u64) -> Option<Victim> {
        if usize::from(self.sets[set].valid) < self.ways {
            return self.fill_not_full(set, block, write, mask);
        }
        let mask = mask & self.full;
        debug_assert!(mask != 0, "fill with an empty way mask");
        // Counted apart from the dirty evictions (the two counts next to
        // each other make one vector add, twice the instructions).
        self.stats.evictions += 1;
        let way = self.repl.replace(set, mask);
        self.replace_at(set, way, block, write)
    }

    /// Puts `block` into `way` of `set` in place of the line there (a
    /// victim chosen by the policy, which knows of the fill).
    #[inline(always)]
    fn replace_at(&mut self, set: usize, way: usize, block: u64, write: bool) -> Option<Victim> {
        let i = set * self.ways + way;
        let old = std::mem::replace(&mut self.tags[i], block);
        let st = &mut self.sets[set];
        st.set_signature(way, block);
        let dirty = st.is_dirty(way);
        let unused_prefetch = st.take_prefetched(way);
        st.set_dirty(way, write);
        st.mru_block = block;
        st.mru_way = way as u8;
        self.stats.dirty_evictions += u64::from(dirty);
        if !self.owners.is_empty() {
            self.retag(i, true, Some(self.owner));
        }
        Some(Victim {
            block: old,
            dirty,
            unused_prefetch,
        })
    }

    /// [`Cache::fill`] of a set with an invalid way: the first invalid way
    /// of `mask` if any, else the policy's victim.
    #[cold]
    #[inline(never)]
    fn fill_not_full(&mut self, set: usize, block: u64, write: bool, mask: u64) -> Option<Victim> {
        let mask = mask & self.full;
        debug_assert!(mask != 0, "fill with an empty way mask");
        let base = set * self.ways;
        let tags = &self.tags[base..base + self.ways];
        let Some(way) = ways_of(mask).find(|&w| tags[w] == INVALID) else {
            // Every way of the mask is valid: the victim is a line.
            self.stats.evictions += 1;
            let way = self.repl.replace(set, mask);
            return self.replace_at(set, way, block, write);
        };
        self.repl.on_fill(set, way);
        let i = base + way;
        self.tags[i] = block;
        let st = &mut self.sets[set];
        st.set_signature(way, block);
        st.valid += 1;
        // An invalid way is clean and holds no prefetch mark.
        st.set_dirty(way, write);
        st.mru_block = block;
        st.mru_way = way as u8;
        if !self.owners.is_empty() {
            self.retag(i, false, Some(self.owner));
        }
        None
    }

    /// One reference of `size` bytes at `addr`, cachegrind's way: every
    /// line the access spans is looked up (and filled), one reference of
    /// `kind` is counted, and it misses if any line missed. Returns
    /// whether it missed. Victims are dropped (counted only).
    #[inline(always)]
    pub fn access(&mut self, addr: u64, size: u32, kind: AccessKind, mask: u64) -> bool {
        let bits = self.geom.line_bits();
        let first = addr >> bits;
        let last = addr.wrapping_add(u64::from(size.max(1)) - 1) >> bits;
        let write = kind == AccessKind::Write;
        let mut miss = !self.line(first, write, mask).hit;
        let mut b = first;
        while b != last {
            b = b.wrapping_add(1);
            miss |= !self.line(b, write, mask).hit;
        }
        self.stats.record(kind, miss);
        miss
    }

    /// The set and way holding `block`.
    #[inline]
    fn find(&self, block: u64) -> Option<(usize, usize)> {
        let set = self.geom.set_of(block);
        let base = set * self.ways;
        find(&self.sets[set], &self.tags[base..base + self.ways], block).map(|w| (set, w))
    }
}

#[cfg(test)]
mod model_tests;
#[cfg(test)]
mod tests;
