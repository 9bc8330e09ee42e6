//! An exclusive victim cache below the shared LLC: the IBM Power5's
//! off-chip L3 (platform section `[l3-victim]`, see docs/sim.md).
//!
//! This module owns the L3's configuration ([`VictimConfig`]), its checks
//! against the LLC it sits below ([`VictimConfig::check`]), its tags and
//! replacement ([`VictimCache`]) and its counters ([`VictimStats`],
//! [`VictimCounts`]). The [`Cache`](crate::Cache) that is the LLC carries
//! it ([`Cache::set_victim`](crate::Cache::set_victim)), so every core
//! that is lent the LLC reaches the same L3; the
//! [`Hierarchy`](crate::Hierarchy) moves lines between the two.
//!
//! Semantics (the Power5's, as Tam et al. and IBM describe it):
//!
//! * every line the LLC evicts, clean or dirty, is inserted in the L3
//!   (keeping its dirty bit);
//! * an LLC miss looks the line up in the L3: a hit returns it to the LLC
//!   (dirty if it was) and removes it from the L3 (exclusive); a miss
//!   goes to memory and the line fills the LLC only;
//! * a dirty line the L3 evicts is written back to memory.
//!
//! **Sectors.** The L3's lines may be larger than the LLC's (Power5: 256
//! B against 128 B). An L3 line is then a *sectored* line: one tag for
//! `line-bytes` and one present bit and one dirty bit per LLC-line-sized
//! sector. An LLC victim is inserted in its sector (allocating the L3
//! line if its tag is absent, which evicts a whole L3 line); an LLC miss
//! hits the L3 only if its own sector is present: a line whose tag is
//! present but whose other half is not counts as a miss (the hardware
//! would not have that half's data either, as only LLC victims fill the
//! L3). Taking the last present sector frees the L3 line. Replacement
//! is LRU over L3 lines, updated by insertions (a hit removes the sector
//! and leaves the line's age alone).
//!
//! **Partitioning by colors.** The L3 has no way masks; its set index is
//! plain bit selection within each slice (as the LLC's, see
//! [`geometry`](crate::geometry)), so the page-color bits of the LLC,
//! when they lie within the L3's per-slice index, pick the same share of
//! the L3's sets: an app confined to some colors only ever lands in
//! those colors' L3 sets (Tam et al.: "each partition in the L2 has a
//! direct mapping to a corresponding partition in the L3 victim cache";
//! on the Power5 16 partitions of 2.25 MB). [`VictimConfig::check`]
//! refuses geometries where this does not hold.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::geometry::{CacheConfig, Geometry};

/// Tag of an invalid L3 line.
const INVALID: u64 = u64::MAX;

/// Host bytes the L3 keeps per line (block, present and dirty sectors,
/// stamp), for the platform's memory check.
pub(crate) const HOST_BYTES_PER_LINE: u64 = 4 * std::mem::size_of::<u64>() as u64;

/// The L3 victim cache as a platform file writes it:
/// `[l3-victim] size-bytes = 37748736, ways = 12, line-bytes = 256,
/// slices = 3, cycles = 90`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct VictimConfig {
    /// Capacity in bytes.
    pub size_bytes: u64,
    /// Associativity.
    pub ways: u32,
    /// Line size in bytes: a multiple of the LLC's (at most 64 LLC lines).
    pub line_bytes: u32,
    /// Slices the sets are split into by an address hash (1: none).
    #[serde(default = "one")]
    pub slices: u32,
    /// Load-to-use latency of an L3 hit, cycles (the whole latency, as
    /// Tam et al.'s Table I gives it; it replaces the memory latency).
    pub cycles: u32,
}

fn one() -> u32 {
    1
}

/// A refused `[l3-victim]` section: the field and why.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("l3-victim.{field}: {reason}")]
pub struct VictimError {
    /// The field (`line-bytes`, `ways`, ...).
    pub field: &'static str,
    /// What is wrong with it.
    pub reason: String,
}

fn err(field: &'static str, reason: impl Into<String>) -> VictimError {
    VictimError {
        field,
        reason: reason.into(),
    }
}

impl VictimConfig {
    /// The checked geometry of the L3, below an LLC of geometry `llc`,
    /// with pages of `page_bytes`: the line is a multiple of the LLC's
    /// (at most 64 sectors) and at most a page, the geometry is valid,
    /// and the LLC's page-color bits lie within the L3's per-slice index
    /// (so colors partition the L3 too).
    pub fn check(&self, llc: &CacheConfig, page_bytes: u64) -> Result<Geometry, VictimError> {
        if self.ways == 0 || self.ways > 64 {
            return Err(err("ways", format!("{} ways: needs 1 to 64", self.ways)));
        }
        if self.cycles == 0 {
            return Err(err("cycles", "must be positive"));
        }
        let line = self.line_bytes;
        if line < llc.line_bytes
            || !line.is_multiple_of(llc.line_bytes)
            || !(line / llc.line_bytes).is_power_of_two()
            || line / llc.line_bytes > 64
        {
            return Err(err(
                "line-bytes",
                format!(
                    "{line} B is not 1, 2, 4, ... or 64 times the LLC's line ({} B)",
                    llc.line_bytes
                ),
            ));
        }
        if u64::from(line) > page_bytes {
            return Err(err(
                "line-bytes",
                format!("{line} B is larger than a page ({page_bytes} B): colors could not partition the L3"),
            ));
        }
        let set_bytes = u64::from(self.ways) * u64::from(line);
        if self.size_bytes == 0 || !self.size_bytes.is_multiple_of(set_bytes) {
            return Err(err(
                "size-bytes",
                format!(
                    "{} B is not a positive multiple of ways x line-bytes = {set_bytes} B",
                    self.size_bytes
                ),
            ));
        }
        let geom =
            Geometry::sliced(self.size_bytes, self.ways, line, self.slices).map_err(|e| {
                let field = if self.slices != 1 {
                    "slices"
                } else {
                    "size-bytes"
                };
                err(field, e.to_string())
            })?;
        let llc_geom = llc
            .geometry()
            .map_err(|e| err("line-bytes", format!("the LLC is invalid: {e}")))?;
        let llc_end = llc_geom.line_bits() + llc_geom.sets_per_slice().trailing_zeros();
        let l3_end = geom.line_bits() + geom.sets_per_slice().trailing_zeros();
        let page_bits = page_bytes.trailing_zeros();
        if llc_end > page_bits && l3_end < llc_end {
            return Err(err(
                "size-bytes",
                format!(
                    "the L3's set index (address bits below {l3_end}) does not cover the LLC's color bits ({page_bits}..{llc_end}): colors would not partition it"
                ),
            ));
        }
        Ok(geom)
    }
}

/// One core's (or app's) view of the L3: its LLC misses that hit or
/// missed there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VictimCounts {
    /// LLC misses served by the L3.
    pub hits: u64,
    /// LLC misses the L3 did not hold (served by memory).
    pub misses: u64,
}

impl VictimCounts {
    /// Whether nothing was counted (no L3, or no LLC miss yet).
    pub fn is_zero(&self) -> bool {
        self.hits == 0 && self.misses == 0
    }
}

/// The L3's own counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VictimStats {
    /// Lookups that found their sector.
    pub hits: u64,
    /// Lookups that did not.
    pub misses: u64,
    /// LLC victims inserted (sectors).
    pub inserts: u64,
    /// L3 lines evicted to make room.
    pub evictions: u64,
    /// Dirty sectors written back to memory (by evictions and flushes).
    pub writebacks: u64,
}

/// The L3 victim cache: sectored lines, LRU, no way masks.
#[derive(Clone, Debug)]
pub struct VictimCache {
    geom: Geometry,
    ways: usize,
    /// log2 of the LLC lines (sectors) per L3 line.
    sector_bits: u32,
    cycles: u32,
    /// Per line: the L3 block number, or [`INVALID`].
    tags: Vec<u64>,
    /// Per line: present sectors.
    present: Vec<u64>,
    /// Per line: dirty sectors.
    dirty: Vec<u64>,
    /// Per line: the insertion clock of its last insertion (LRU).
    stamp: Vec<u64>,
    clock: u64,
    stats: VictimStats,
}

impl VictimCache {
    /// An empty L3 as configured, below an LLC of geometry `llc` with
    /// pages of `page_bytes` (checked by [`VictimConfig::check`]).
    pub fn new(
        cfg: &VictimConfig,
        llc: &CacheConfig,
        page_bytes: u64,
    ) -> Result<VictimCache, VictimError> {
        let geom = cfg.check(llc, page_bytes)?;
        let lines = geom.lines();
        Ok(VictimCache {
            geom,
            ways: geom.ways() as usize,
            sector_bits: (cfg.line_bytes / llc.line_bytes).trailing_zeros(),
            cycles: cfg.cycles,
            tags: vec![INVALID; lines],
            present: vec![0; lines],
            dirty: vec![0; lines],
            stamp: vec![0; lines],
            clock: 0,
            stats: VictimStats::default(),
        })
    }

    /// The L3's geometry (its blocks are `line-bytes` wide).
    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    /// Load-to-use latency of a hit, cycles.
    pub fn cycles(&self) -> u32 {
        self.cycles
    }

    /// The counters.
    pub fn stats(&self) -> &VictimStats {
        &self.stats
    }

    /// The L3 block and sector bit of LLC line `block`.
    #[inline]
    fn split(&self, block: u64) -> (u64, u64) {
        let mask = (1u64 << self.sector_bits) - 1;
        (block >> self.sector_bits, 1 << (block & mask))
    }

    /// The line index holding L3 block `b`, if any.
    fn find(&self, b: u64) -> Option<usize> {
        let base = self.geom.set_of(b) * self.ways;
        (base..base + self.ways).find(|&i| self.tags[i] == b)
    }

    /// The L3 set LLC line `block` maps to.
    pub fn set_of(&self, block: u64) -> usize {
        self.geom.set_of(block >> self.sector_bits)
    }

    /// Whether LLC line `block` is held.
    pub fn contains(&self, block: u64) -> bool {
        let (b, bit) = self.split(block);
        self.find(b).is_some_and(|i| self.present[i] & bit != 0)
    }

    /// Looks up LLC line `block` after an LLC miss: on a hit removes it
    /// (exclusive) and returns whether it was dirty; `None` on a miss.
    #[inline]
    pub fn take(&mut self, block: u64) -> Option<bool> {
        let taken = self.invalidate(block);
        if taken.is_some() {
            self.stats.hits += 1;
        } else {
            self.stats.misses += 1;
        }
        taken
    }

    /// Inserts LLC victim `block` (`dirty` if it was); returns the dirty
    /// sectors of the L3 line evicted for it, which go to memory.
    #[inline]
    pub fn insert(&mut self, block: u64, dirty: bool) -> u64 {
        let (b, bit) = self.split(block);
        self.stats.inserts += 1;
        self.clock += 1;
        if let Some(i) = self.find(b) {
            self.present[i] |= bit;
            if dirty {
                self.dirty[i] |= bit;
            }
            self.stamp[i] = self.clock;
            return 0;
        }
        let base = self.geom.set_of(b) * self.ways;
        let i = (base..base + self.ways)
            .find(|&i| self.tags[i] == INVALID)
            .unwrap_or_else(|| {
                (base..base + self.ways)
                    .min_by_key(|&i| self.stamp[i])
                    .expect("an L3 set has at least one way")
            });
        let mut written = 0;
        if self.tags[i] != INVALID {
            self.stats.evictions += 1;
            written = u64::from(self.dirty[i].count_ones());
            self.stats.writebacks += written;
        }
        self.tags[i] = b;
        self.present[i] = bit;
        self.dirty[i] = if dirty { bit } else { 0 };
        self.stamp[i] = self.clock;
        written
    }

    /// Drops LLC line `block` if held; returns whether it was dirty
    /// (`None`: absent).
    pub fn invalidate(&mut self, block: u64) -> Option<bool> {
        let (b, bit) = self.split(block);
        let i = self.find(b).filter(|&i| self.present[i] & bit != 0)?;
        let dirty = self.dirty[i] & bit != 0;
        self.present[i] &= !bit;
        self.dirty[i] &= !bit;
        if self.present[i] == 0 {
            self.tags[i] = INVALID;
        }
        Some(dirty)
    }

    /// Empties the L3; returns the dirty sectors (written to memory).
    pub fn flush(&mut self) -> u64 {
        let dirty: u64 = self.dirty.iter().map(|d| u64::from(d.count_ones())).sum();
        self.stats.writebacks += dirty;
        self.tags.fill(INVALID);
        self.present.fill(0);
        self.dirty.fill(0);
        dirty
    }

    /// LLC lines (sectors) held.
    pub fn occupancy(&self) -> u64 {
        self.present.iter().map(|p| u64::from(p.count_ones())).sum()
    }

    /// LLC lines (sectors) held in L3 set `set`.
    pub fn occupancy_of_set(&self, set: usize) -> u64 {
        let base = set * self.ways;
        self.present[base..base + self.ways]
            .iter()
            .map(|p| u64::from(p.count_ones()))
            .sum()
    }
}

#[cfg(test)]
mod tests;
