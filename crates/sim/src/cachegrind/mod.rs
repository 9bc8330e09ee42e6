//! The cachegrind-compatible simulator and cachegrind's summary counts.
//!
//! [`CachegrindSim`] simulates I1, D1 and a unified LL as `valgrind
//! --tool=cachegrind --cache-sim=yes --I1=... --D1=... --LL=...` does: LRU
//! caches in move-to-front order (`mtf`), a reference that straddles two
//! lines looked up in both and counted as one miss, a modify counted as one
//! read, data references clamped to the smallest line size, and no
//! write-back traffic. It is a model of its own, much leaner than one
//! core's [`Hierarchy`] in [`Mode::Cachegrind`], which gives the same
//! counts (checked against each other in `tests`, and against valgrind in
//! `tests/cachegrind.rs`). [`CachegrindSummary`] (`summary`) holds the
//! nine totals cachegrind prints. [`ParallelCachegrind`] (`parallel`)
//! gives the same totals on several threads, each simulating the lines of
//! its [`Partition`] (`partition`, `part`).
//!
//! [`Hierarchy`]: crate::hierarchy::Hierarchy
//! [`Mode::Cachegrind`]: crate::hierarchy::Mode::Cachegrind

mod mtf;
mod parallel;
#[cfg(test)]
mod parallel_tests;
mod part;
mod partition;
mod pipeline;
mod scatter;
#[cfg(test)]
mod scatter_tests;
mod summary;
#[cfg(test)]
mod tests;

use cachepart_trace::{Event, Kind, Record};
use serde::{Deserialize, Serialize};

use crate::cache::Cache;
use crate::error::{Result, SimError};
use crate::geometry::CacheConfig;
use crate::hierarchy::{Hierarchy, HierarchyConfig, Inclusion, Mode};
use crate::replacement::PolicyKind;
use mtf::MtfCache;
pub use parallel::{ParallelCachegrind, CHUNK_RECORDS};
pub use partition::Partition;
pub use scatter::{Scattered, Scatterer};
pub use summary::{CachegrindSummary, EVENTS};

/// One core of the general model in cachegrind mode with `cfg`'s I1 and
/// D1 (its LL is the caller's): the configuration whose checks
/// [`CachegrindSim::new`] repeats and whose counts it equals.
pub(crate) fn general_config(cfg: &CachegrindConfig) -> HierarchyConfig {
    HierarchyConfig {
        l1i: cfg.i1,
        l1d: cfg.d1,
        l2: None,
        mode: Mode::Cachegrind,
        inclusion: Inclusion::NonInclusive,
    }
}

/// cachegrind's three caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct CachegrindConfig {
    /// `--I1=size,ways,line`.
    pub i1: CacheConfig,
    /// `--D1=size,ways,line`.
    pub d1: CacheConfig,
    /// `--LL=size,ways,line`.
    pub ll: CacheConfig,
}

impl CachegrindConfig {
    /// LRU caches of the given `(size, ways, line)` geometries.
    pub fn lru(i1: (u64, u32, u32), d1: (u64, u32, u32), ll: (u64, u32, u32)) -> Self {
        CachegrindConfig {
            i1: CacheConfig::lru(i1.0, i1.1, i1.2),
            d1: CacheConfig::lru(d1.0, d1.1, d1.2),
            ll: CacheConfig::lru(ll.0, ll.1, ll.2),
        }
    }

    /// The valgrind options that select this geometry.
    pub fn valgrind_args(&self) -> [String; 3] {
        [
            format!("--I1={}", self.i1.valgrind_arg()),
            format!("--D1={}", self.d1.valgrind_arg()),
            format!("--LL={}", self.ll.valgrind_arg()),
        ]
    }
}

/// A one-core, two-level cachegrind-compatible simulator.
#[derive(Clone, Debug)]
pub struct CachegrindSim {
    i1: MtfCache,
    d1: MtfCache,
    ll: MtfCache,
    /// The smallest line size: cachegrind clamps data references to it.
    data_clamp: u32,
    totals: CachegrindSummary,
    /// Instructions: fetches plus the gaps of records that carry them.
    instructions: u64,
}

impl CachegrindSim {
    /// Empty caches as configured; fails on a geometry cachegrind refuses
    /// (the same checks and words as one core's [`Hierarchy`] in
    /// [`Mode::Cachegrind`]), on a replacement policy other than LRU and
    /// on a sliced cache (cachegrind has neither).
    pub fn new(cfg: &CachegrindConfig) -> Result<Self> {
        for (level, c) in [("I1", &cfg.i1), ("D1", &cfg.d1), ("LL", &cfg.ll)] {
            if c.policy != PolicyKind::Lru || c.slices != 1 {
                return Err(SimError::Unsupported(format!(
                    "cachegrind mode: {level} must be an unsliced LRU cache, as cachegrind's are"
                )));
            }
        }
        // the checks and refusals of the general model, word for word
        let ll = Cache::new(&cfg.ll).map_err(|source| SimError::Geometry {
            level: "LL",
            source,
        })?;
        Hierarchy::new(&general_config(cfg), &ll)?;
        let geometry = |c: &CacheConfig, level| {
            c.geometry()
                .map_err(|source| SimError::Geometry { level, source })
        };
        let (i1, d1, llg) = (
            geometry(&cfg.i1, "L1I")?,
            geometry(&cfg.d1, "L1D")?,
            *ll.geometry(),
        );
        Ok(CachegrindSim {
            i1: MtfCache::new(&i1),
            d1: MtfCache::new(&d1),
            ll: MtfCache::new(&llg),
            data_clamp: i1.line().min(d1.line()).min(llg.line()),
            totals: CachegrindSummary::default(),
            instructions: 0,
        })
    }

    /// Simulates one record.
    pub fn access(&mut self, rec: Record) {
        self.run([rec]);
    }

    /// Simulates every record. The counters live in locals during the
    /// loop (the hot path has no panicking index, so they stay in
    /// registers).
    pub fn run<I: IntoIterator<Item = Record>>(&mut self, records: I) {
        let mut t = self.totals;
        let mut instructions = self.instructions;
        let clamp = self.data_clamp;
        let (i1, d1, ll) = (&mut self.i1, &mut self.d1, &mut self.ll);
        for rec in records {
            // the kinds by how common they are: instruction fetches, data
            // references, escapes
            let code = rec.kind_code();
            if code == Kind::Ifetch as u64 {
                let (addr, size) = (rec.addr_unchecked(), rec.size_unchecked() as u32);
                instructions += rec.gap_u64() + 1;
                t.ir += 1;
                if i1.misses(addr, size) {
                    t.i1mr += 1;
                    t.ilmr += u64::from(ll.misses(addr, size));
                }
            } else if code != Kind::Escape as u64 {
                instructions += rec.gap_u64();
                let addr = rec.addr_unchecked();
                let size = (rec.size_unchecked() as u32).min(clamp);
                // a modify and a dependent load count as reads
                let write = code == Kind::Store as u64;
                let miss = d1.misses(addr, size);
                let ll_miss = miss && ll.misses(addr, size);
                if write {
                    t.dw += 1;
                    t.d1mw += u64::from(miss);
                    t.dlmw += u64::from(ll_miss);
                } else {
                    t.dr += 1;
                    t.d1mr += u64::from(miss);
                    t.dlmr += u64::from(ll_miss);
                }
            } else {
                match rec.as_event() {
                    Some(Event::InstrGap(n)) => instructions += n,
                    Some(Event::Flush) => {
                        i1.flush();
                        d1.flush();
                        ll.flush();
                    }
                    _ => {}
                }
            }
        }
        self.totals = t;
        self.instructions = instructions;
    }

    /// Instructions executed: the fetches, plus the instructions that
    /// records and gap events say ran without a record of their own.
    pub fn instructions(&self) -> u64 {
        self.instructions
    }

    /// The totals as cachegrind prints them.
    pub fn summary(&self) -> CachegrindSummary {
        self.totals
    }
}
