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

/// The way of `tags` (one set, at most 64 ways) holding `block`: every
/// way is compared, without a branch per way (a block is in at most one
/// way, so this is the first match). The usual associativities (4, 8 and
/// 16 ways) get a search of fixed width, unrolled by the compiler.
#[inline(always)]
fn find_way(tags: &[u64], block: u64) -> Option<usize> {
    match tags.len() {
        4 => find_way_fixed::<4>(tags, block),
        8 => find_way_fixed::<8>(tags, block),
        16 => find_way_fixed::<16>(tags, block),
        _ => find_way_any(tags, block),
    }
}

/// [`find_way`] of a set of exactly `N` ways.
#[inline(always)]
fn find_way_fixed<const N: usize>(tags: &[u64], block: u64) -> Option<usize> {
    let Ok(tags) = <&[u64; N]>::try_from(tags) else {
        return find_way_any(tags, block);
    };
    let mut hits = 0u64;
    for (w, &t) in tags.iter().enumerate() {
        hits |= u64::from(t == block) << w;
    }
    (hits != 0).then(|| hits.trailing_zeros() as usize)
}

/// [`find_way`] of a set of any width.
#[inline(always)]
fn find_way_any(tags: &[u64], block: u64) -> Option<usize> {
    let mut hits = 0u64;
    for (w, &t) in tags.iter().enumerate() {
        hits |= u64::from(t == block) << w;
    }
    (hits != 0).then(|| hits.trailing_zeros() as usize)
}

/// The state of one set that is not per line, with its dirty bits, kept
/// together so that a lookup touches one host cache line for all of it
/// (32 bytes, aligned: never split across two host lines).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct SetState {
    /// The block hit or filled last (looked at first), or [`INVALID`].
    mru_block: u64,
    /// Dirty ways: bit `w` for way `w` (at most 64 ways).
    dirty: u64,
    /// Ways holding a prefetched line no demand access has used yet.
    prefetched: u64,
    /// Valid lines, to skip the search for an invalid way once full.
    valid: u8,
    /// The way of `mru_block`.
    mru_way: u8,
}

impl SetState {
    const EMPTY: SetState = SetState {
        mru_block: INVALID,
        dirty: 0,
        prefetched: 0,
        valid: 0,
        mru_way: 0,
    };

    #[inline(always)]
    fn is_dirty(&self, way: usize) -> bool {
        self.dirty >> way & 1 != 0
    }

    #[inline(always)]
    fn set_dirty(&mut self, way: usize, dirty: bool) {
        self.dirty = self.dirty & !(1 << way) | u64::from(dirty) << way;
    }

    #[inline(always)]
    fn mark_dirty(&mut self, way: usize) {
        self.dirty |= 1 << way;
    }

    /// Whether `way` held an unused prefetched line; it is used now.
    #[inline(always)]
    fn take_prefetched(&mut self, way: usize) -> bool {
        if self.prefetched == 0 {
            return false;
        }
        let was = self.prefetched >> way & 1 != 0;
        self.prefetched &= !(1 << way);
        was
    }
}

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
        }
    }

    /// Installs (or removes) the victim cache below this one; returns the
    /// one it replaces.
    pub fn set_victim(&mut self, v: Option<VictimCache>) -> Option<VictimCache> {
        std::mem::replace(&mut self.victim, v.map(Box::new)).map(|b| *b)
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

    /// Starts tracking which of `n_owners` owners (ids `0..n_owners`)
    /// filled each line; lines already present count for nobody. Zero
    /// owners turns tracking off.
    pub fn set_owner_tracking(&mut self, n_owners: usize) {
        if n_owners == 0 {
            self.owners = Vec::new();
            self.owner_lines = Vec::new();
        } else {
            self.owners = vec![NO_OWNER; self.tags.len()];
            self.owner_lines = vec![0; n_owners];
        }
    }

    /// The owner of the lines filled from now on (ids at or above the
    /// tracked count, such as [`NO_OWNER`], count for nobody).
    #[inline]
    pub fn set_owner(&mut self, owner: u16) {
        self.owner = owner;
    }

    /// Lines filled by `owner` and still present (0 when not tracked).
    pub fn occupancy_of(&self, owner: u16) -> u64 {
        self.owner_lines
            .get(usize::from(owner))
            .copied()
            .unwrap_or(0)
    }

    /// Line `i` changes hands: from its old owner (if valid) to `new`.
    #[cold]
    fn retag(&mut self, i: usize, was_valid: bool, new: Option<u16>) {
        if was_valid {
            if let Some(n) = self.owner_lines.get_mut(usize::from(self.owners[i])) {
                *n -= 1;
            }
        }
        let new = new.unwrap_or(NO_OWNER);
        self.owners[i] = new;
        if let Some(n) = self.owner_lines.get_mut(usize::from(new)) {
            *n += 1;
        }
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
        let base = set * self.ways;
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
        let tags = &self.tags[base..base + self.ways];
        if let Some(way) = find_way(tags, block) {
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

    /// Puts `block` into `set`, in a way of `mask` (out of line: the hit
    /// path stays small).
    #[inline(never)]
    fn fill(&mut self, set: usize, block: u64, write: bool, mask: u64) -> Option<Victim> {
        let mask = mask & self.full;
        debug_assert!(mask != 0, "fill with an empty way mask");
        let base = set * self.ways;
        let invalid = if usize::from(self.sets[set].valid) < self.ways {
            let tags = &self.tags[base..base + self.ways];
            ways_of(mask).find(|&w| tags[w] == INVALID)
        } else {
            None
        };
        let way = match invalid {
            Some(w) => {
                self.sets[set].valid += 1;
                w
            }
            None => self.repl.victim(set, mask),
        };
        let i = base + way;
        let old = self.tags[i];
        let st = &mut self.sets[set];
        let victim = if old == INVALID {
            None
        } else {
            let dirty = st.is_dirty(way);
            self.stats.evictions += 1;
            self.stats.dirty_evictions += u64::from(dirty);
            Some(Victim {
                block: old,
                dirty,
                unused_prefetch: st.take_prefetched(way),
            })
        };
        st.set_dirty(way, write);
        st.mru_block = block;
        st.mru_way = way as u8;
        if !self.owners.is_empty() {
            self.retag(i, old != INVALID, Some(self.owner));
        }
        self.tags[i] = block;
        self.repl.on_fill(set, way);
        victim
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
    fn find(&self, block: u64) -> Option<(usize, usize)> {
        let set = self.geom.set_of(block);
        let base = set * self.ways;
        find_way(&self.tags[base..base + self.ways], block).map(|w| (set, w))
    }

    /// Marks `block`, if present, as a prefetched line no demand access
    /// has used: the next hit on it reports [`LineOutcome::first_use`], or
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
    pub fn write_back(&mut self, block: u64, mask: u64) -> Option<Victim> {
        self.stats.writebacks_in += 1;
        if let Some((set, way)) = self.find(block) {
            self.sets[set].mark_dirty(way);
            return None;
        }
        self.stats.writeback_misses += 1;
        let set = self.geom.set_of(block);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replacement::PolicyKind;

    fn cache(size: u64, ways: u32, policy: PolicyKind) -> Cache {
        Cache::new(&CacheConfig::lru(size, ways, 64).with_policy(policy)).unwrap()
    }

    #[test]
    fn lru_set_behaves_like_a_stack() {
        // 1 set, 2 ways.
        let mut c = cache(128, 2, PolicyKind::Lru);
        let all = c.full_mask();
        assert!(!c.line(1, false, all).hit);
        assert!(!c.line(2, false, all).hit);
        assert!(c.line(1, false, all).hit);
        let out = c.line(3, false, all);
        assert_eq!(
            out.victim,
            Some(Victim {
                block: 2,
                dirty: false,
                unused_prefetch: false,
            })
        );
        assert!(c.contains(1) && c.contains(3) && !c.contains(2));
    }

    #[test]
    fn dirty_bits_of_all_64_ways() {
        // One set of 64 ways: every way's dirty bit, the top one included,
        // is its own, survives hits, and leaves with its line.
        let mut c = cache(64 * 64, 64, PolicyKind::Lru);
        let all = c.full_mask();
        for b in 0..64u64 {
            c.line(b, b % 3 == 0 || b == 63, all);
        }
        for b in 0..64u64 {
            assert_eq!(c.is_dirty(b), Some(b % 3 == 0 || b == 63), "block {b}");
        }
        c.line(5, true, all); // a write hit dirties only its line
        assert_eq!(c.is_dirty(5), Some(true));
        assert_eq!(c.is_dirty(4), Some(false));
        assert_eq!(c.invalidate(63), Some(true));
        c.line(100, false, all); // fills the invalidated way, clean
        assert_eq!(c.is_dirty(100), Some(false));
        // LRU order: 0..62 (without 5), then 5, then 100. Evict them all.
        let mut dirty = 0;
        for b in 200..264u64 {
            let v = c.line(b, false, all).victim.unwrap();
            dirty += u64::from(v.dirty);
            let want = match b - 200 {
                i @ 0..=4 => i,
                i @ 5..=61 => i + 1,
                62 => 5,
                _ => 100,
            };
            assert_eq!(v.block, want);
            assert_eq!(v.dirty, want % 3 == 0 || want == 5, "block {want}");
        }
        assert_eq!(dirty, c.stats().dirty_evictions);
        assert_eq!(dirty, 22);
        assert_eq!(c.flush(), 0);
    }

    #[test]
    fn write_back_counts_dirty_evictions() {
        let mut c = cache(128, 2, PolicyKind::Lru);
        let all = c.full_mask();
        c.line(1, true, all);
        c.line(2, false, all);
        let v = c.line(3, false, all).victim.unwrap();
        assert_eq!(
            v,
            Victim {
                block: 1,
                dirty: true,
                unused_prefetch: false,
            }
        );
        assert_eq!(c.stats().dirty_evictions, 1);
        assert_eq!(c.stats().evictions, 1);
        // A write-back allocates dirty.
        assert_eq!(c.write_back(9, all).map(|v| v.block), Some(2));
        assert_eq!(c.is_dirty(9), Some(true));
        assert_eq!(c.stats().writeback_misses, 1);
        assert_eq!(c.flush(), 1);
        assert_eq!(c.occupancy(all), 0);
    }

    #[test]
    fn straddling_access_counts_one_miss() {
        // 64-byte lines, 16 sets.
        let mut c = cache(4096, 4, PolicyKind::Lru);
        let all = c.full_mask();
        assert!(c.access(60, 8, AccessKind::Read, all));
        assert_eq!(c.stats().refs(AccessKind::Read), 1);
        assert_eq!(c.stats().misses(AccessKind::Read), 1);
        assert!(c.contains(0) && c.contains(1));
        // One of two lines missing is still one miss.
        c.invalidate(1);
        assert!(c.access(60, 8, AccessKind::Read, all));
        assert!(!c.access(60, 8, AccessKind::Read, all));
        assert_eq!(c.stats().misses(AccessKind::Read), 2);
    }

    #[test]
    fn fills_respect_the_way_mask_and_hits_do_not() {
        for policy in PolicyKind::all() {
            // 1 set, 4 ways.
            let mut c = cache(256, 4, policy);
            for b in 0..4 {
                c.line(b, false, 0b1111);
            }
            // Filling under mask 0b0011 only ever replaces ways 0 and 1,
            // so blocks 2 and 3 (in ways 2 and 3) survive.
            for b in 10..50 {
                assert!(!c.line(b, false, 0b0011).hit, "{policy:?}");
                assert!(c.contains(2) && c.contains(3), "{policy:?}");
            }
            // Hits are found outside the mask.
            assert!(c.line(3, false, 0b0011).hit);
            assert_eq!(c.occupancy(0b1100), 2);
        }
    }

    #[test]
    fn invalid_ways_of_the_mask_fill_first() {
        let mut c = cache(256, 4, PolicyKind::Random);
        c.line(7, false, 0b1000);
        c.line(8, false, 0b1100);
        assert_eq!(c.occupancy(0b1100), 2);
        assert_eq!(c.occupancy(0b0011), 0);
    }

    #[test]
    fn owners_are_counted_incrementally() {
        // 4 sets, 2 ways.
        let mut c = cache(512, 2, PolicyKind::Lru);
        let all = c.full_mask();
        assert_eq!(c.occupancy_of(0), 0);
        c.line(100, false, all); // before tracking: nobody's
        c.set_owner_tracking(2);
        c.set_owner(0);
        for b in 0..4 {
            c.line(b, false, all);
        }
        c.set_owner(1);
        for b in 4..8 {
            c.line(b, false, all);
        }
        // Set 0 held 100, 0, then 4 evicted 100 (nobody's); 8 lines in
        // all, 4 each.
        assert_eq!((c.occupancy_of(0), c.occupancy_of(1)), (4, 4));
        c.set_owner(1);
        c.line(8, false, all); // set 0: evicts 0 (owner 0)
        assert_eq!((c.occupancy_of(0), c.occupancy_of(1)), (3, 5));
        c.invalidate(8);
        assert_eq!(c.occupancy_of(1), 4);
        assert_eq!(c.occupancy_of(7), 0);
        c.flush();
        assert_eq!(c.occupancy_of(1), 0);
    }

    use proptest::prelude::*;

    /// Accesses over 64 lines-worth of sets, some straddling two lines.
    fn accesses() -> impl Strategy<Value = Vec<(u64, u32)>> {
        prop::collection::vec((0u64..(1 << 14), 1u32..=16), 1..2000)
    }

    fn misses(sets: u64, ways: u32, mask: u64, t: &[(u64, u32)]) -> Vec<bool> {
        let mut c = Cache::new(&CacheConfig::lru(sets * u64::from(ways) * 64, ways, 64)).unwrap();
        t.iter()
            .map(|&(a, s)| c.access(a, s, AccessKind::Read, mask))
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// LRU's inclusion (stack) property: with the set count fixed
        /// (1 set: fully associative), a cache with one more way holds a
        /// superset of the lines, so every access that hits with `w` ways
        /// hits with `w + 1`, and misses never rise.
        #[test]
        fn lru_misses_never_rise_with_more_ways(t in accesses(), sets_log in 0u32..5, w in 1u32..12) {
            let sets = 1 << sets_log;
            let small = misses(sets, w, u64::MAX, &t);
            let big = misses(sets, w + 1, u64::MAX, &t);
            for (s, b) in small.iter().zip(&big) {
                prop_assert!(*s || !*b, "a hit with {} ways missed with {}", w, w + 1);
            }
        }

        /// Per-owner counts always equal a recount of the lines, and sum
        /// to at most the lines of the cache.
        #[test]
        fn owner_counts_match_a_recount(t in prop::collection::vec((0u64..512, 0u16..3, any::<bool>()), 1..1500)) {
            let mut c = cache(2048, 4, PolicyKind::Lru);
            c.set_owner_tracking(3);
            for &(b, o, inv) in &t {
                c.set_owner(o);
                if inv { c.invalidate(b); } else { c.line(b, false, c.full_mask()); }
            }
            let mut recount = [0u64; 3];
            for (i, &tag) in c.tags.iter().enumerate() {
                if tag != INVALID { recount[usize::from(c.owners[i])] += 1; }
            }
            prop_assert_eq!(recount, [c.occupancy_of(0), c.occupancy_of(1), c.occupancy_of(2)]);
            prop_assert!(recount.iter().sum::<u64>() <= c.geometry().lines() as u64);
        }

        /// Filling only the ways of a `k`-bit mask of an 8-way LRU cache
        /// behaves exactly like a `k`-way cache of the same sets.
        #[test]
        fn lru_mask_of_k_ways_is_a_k_way_cache(t in accesses(), mask in 1u64..256) {
            let k = mask.count_ones();
            prop_assert_eq!(misses(8, 8, mask, &t), misses(8, k, u64::MAX, &t));
        }
    }
}
