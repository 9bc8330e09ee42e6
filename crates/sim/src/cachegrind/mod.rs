//! The cachegrind-compatible simulator and cachegrind's summary counts.
//!
//! [`CachegrindSim`] is one core's [`Hierarchy`] in [`Mode::Cachegrind`]
//! with its own LL, configured like `valgrind --tool=cachegrind
//! --I1=... --D1=... --LL=...`. [`CachegrindSummary`] holds the nine
//! totals cachegrind prints (`Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw`),
//! computed from the simulator or parsed from a `cachegrind.out` file, so
//! the two can be compared field by field.

use std::fmt;

use cachepart_trace::Record;
use serde::{Deserialize, Serialize};

use crate::cache::Cache;
use crate::error::{Result, SimError};
use crate::geometry::CacheConfig;
use crate::hierarchy::{Hierarchy, HierarchyConfig, HierarchyStats, Inclusion, Mode};
use crate::stats::AccessKind;

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
    core: Hierarchy,
    ll: Cache,
}

impl CachegrindSim {
    /// Empty caches as configured; fails on a geometry cachegrind refuses.
    pub fn new(cfg: &CachegrindConfig) -> Result<Self> {
        let ll = Cache::new(&cfg.ll).map_err(|source| SimError::Geometry {
            level: "LL",
            source,
        })?;
        let h = HierarchyConfig {
            l1i: cfg.i1,
            l1d: cfg.d1,
            l2: None,
            mode: Mode::Cachegrind,
            inclusion: Inclusion::NonInclusive,
        };
        let core = Hierarchy::new(&h, &ll)?;
        Ok(CachegrindSim { core, ll })
    }

    /// Simulates one record.
    #[inline]
    pub fn access(&mut self, rec: Record) {
        self.core.access(&mut self.ll, rec);
    }

    /// Simulates every record.
    pub fn run<I: IntoIterator<Item = Record>>(&mut self, records: I) {
        self.core.run(&mut self.ll, records);
    }

    /// The per-core counters.
    pub fn stats(&self) -> HierarchyStats {
        self.core.stats()
    }

    /// The totals as cachegrind prints them.
    pub fn summary(&self) -> CachegrindSummary {
        CachegrindSummary::from_stats(&self.core.stats())
    }
}

/// cachegrind's totals (the `summary:` line of its output file).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct CachegrindSummary {
    pub ir: u64,
    pub i1mr: u64,
    pub ilmr: u64,
    pub dr: u64,
    pub d1mr: u64,
    pub dlmr: u64,
    pub dw: u64,
    pub d1mw: u64,
    pub dlmw: u64,
}

/// The event names, in cachegrind's order.
pub const EVENTS: [&str; 9] = [
    "Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw",
];

impl CachegrindSummary {
    /// The totals of a cachegrind-mode hierarchy.
    pub fn from_stats(s: &HierarchyStats) -> Self {
        use AccessKind::*;
        CachegrindSummary {
            ir: s.l1i.refs(Instr),
            i1mr: s.l1i.misses(Instr),
            ilmr: s.llc.misses(Instr),
            dr: s.l1d.refs(Read),
            d1mr: s.l1d.misses(Read),
            dlmr: s.llc.misses(Read),
            dw: s.l1d.refs(Write),
            d1mw: s.l1d.misses(Write),
            dlmw: s.llc.misses(Write),
        }
    }

    /// The values in [`EVENTS`] order.
    pub fn values(&self) -> [u64; 9] {
        [
            self.ir, self.i1mr, self.ilmr, self.dr, self.d1mr, self.dlmr, self.dw, self.d1mw,
            self.dlmw,
        ]
    }

    /// Reads the totals from the text of a `cachegrind.out` file: the
    /// `events:` line names the columns of the `summary:` line.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = |m: &str| SimError::CachegrindOutput(m.to_string());
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|rest| rest.split_whitespace().collect::<Vec<_>>())
        };
        let events = field("events:").ok_or_else(|| bad("no events: line"))?;
        let values = field("summary:").ok_or_else(|| bad("no summary: line"))?;
        if events.len() != values.len() {
            return Err(bad("events: and summary: lines differ in length"));
        }
        let mut out = [0u64; 9];
        for (slot, name) in out.iter_mut().zip(EVENTS) {
            let i = events
                .iter()
                .position(|e| *e == name)
                .ok_or_else(|| bad(&format!("no {name} event (was --cache-sim=yes given?)")))?;
            *slot = values[i]
                .parse()
                .map_err(|_| bad(&format!("bad {name} count {:?}", values[i])))?;
        }
        let [ir, i1mr, ilmr, dr, d1mr, dlmr, dw, d1mw, dlmw] = out;
        Ok(CachegrindSummary {
            ir,
            i1mr,
            ilmr,
            dr,
            d1mr,
            dlmr,
            dw,
            d1mw,
            dlmw,
        })
    }
}

impl fmt::Display for CachegrindSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, v) in EVENTS.iter().zip(self.values()) {
            write!(f, "{name}={v} ")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_trace::Kind;

    #[test]
    fn parses_the_summary_line() {
        let text = "desc: I1 cache: 32768 B, 64 B, 8-way associative\n\
                    cmd: ls\nevents: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\n\
                    fl=x\n1 2 3 4 5 6 7 8 9 10\n\
                    summary: 1174816 6198 2800 281560 3651 2441 140383 1303 1171\n";
        let s = CachegrindSummary::parse(text).unwrap();
        assert_eq!(s.ir, 1174816);
        assert_eq!(s.dlmw, 1171);
        assert!(CachegrindSummary::parse("events: Ir\nsummary: 5\n").is_err());
    }

    #[test]
    fn counts_like_cachegrind() {
        let cfg = CachegrindConfig::lru((1024, 2, 64), (1024, 2, 32), (4096, 4, 64));
        let mut sim = CachegrindSim::new(&cfg).unwrap();
        let r = |k, a, s| Record::access(k, a, s, 0).unwrap();
        sim.run([
            r(Kind::Ifetch, 0x1000, 4),
            r(Kind::Ifetch, 0x103e, 4), // straddles two lines: one miss
            r(Kind::Load, 0x8000, 8),
            r(Kind::Modify, 0x8000, 8), // a read, and a hit
            r(Kind::Store, 0x9000, 8),
            r(Kind::Load, 0x9000, 64), // clamped to 32 bytes: one line, a hit
        ]);
        let s = sim.summary();
        assert_eq!(s.values(), [2, 2, 2, 3, 1, 1, 1, 1, 1], "{s}");
        assert_eq!(sim.stats().instructions, 2);
    }

    #[test]
    fn refuses_what_cachegrind_refuses() {
        let small = CachegrindConfig::lru((1024, 2, 8), (1024, 2, 64), (4096, 4, 64));
        let e = CachegrindSim::new(&small).unwrap_err().to_string();
        assert!(e.contains("minimum of 16"), "{e}");
        let npot = CachegrindConfig::lru((1024, 2, 64), (1024, 2, 64), (6 << 20, 16, 64));
        let e = CachegrindSim::new(&npot).unwrap_err().to_string();
        assert!(e.starts_with("LL: 6144 sets"), "{e}");
    }
}
