//! Counters: references and misses per access kind, evictions and
//! write-backs per level, and memory traffic.

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

/// The kind of a reference as a cache level counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccessKind {
    /// An instruction fetch.
    Instr = 0,
    /// A data read (load, or the read of a modify).
    Read = 1,
    /// A data write (store).
    Write = 2,
}

impl AccessKind {
    /// All kinds, in counter order.
    pub const ALL: [AccessKind; 3] = [AccessKind::Instr, AccessKind::Read, AccessKind::Write];
}

/// The counters of one cache level (or of one core's share of the LLC).
///
/// A reference is one access as issued to the level, whatever the number
/// of lines it spans; it misses when any of its lines misses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelStats {
    refs: [u64; 3],
    misses: [u64; 3],
    /// Lines evicted to make room (valid victims).
    pub evictions: u64,
    /// Evicted lines that were dirty: write-backs to the next level (or to
    /// memory, from the last level).
    pub dirty_evictions: u64,
    /// Write-backs received from the level above.
    pub writebacks_in: u64,
    /// Write-backs received that did not find their line (and allocated it).
    pub writeback_misses: u64,
}

impl LevelStats {
    /// Counts one reference of `kind`, missed or not.
    #[inline]
    pub fn record(&mut self, kind: AccessKind, miss: bool) {
        self.refs[kind as usize] += 1;
        self.misses[kind as usize] += u64::from(miss);
    }

    /// References of `kind`.
    pub fn refs(&self, kind: AccessKind) -> u64 {
        self.refs[kind as usize]
    }

    /// Misses of `kind`.
    pub fn misses(&self, kind: AccessKind) -> u64 {
        self.misses[kind as usize]
    }

    /// Hits of `kind`.
    pub fn hits(&self, kind: AccessKind) -> u64 {
        self.refs(kind) - self.misses(kind)
    }

    /// References of all kinds.
    pub fn total_refs(&self) -> u64 {
        self.refs.iter().sum()
    }

    /// Misses of all kinds.
    pub fn total_misses(&self) -> u64 {
        self.misses.iter().sum()
    }

    /// Hits of all kinds.
    pub fn total_hits(&self) -> u64 {
        self.total_refs() - self.total_misses()
    }

    /// Misses per reference (0 without references).
    pub fn miss_rate(&self) -> f64 {
        let r = self.total_refs();
        if r == 0 {
            0.0
        } else {
            self.total_misses() as f64 / r as f64
        }
    }
}

impl AddAssign<&LevelStats> for LevelStats {
    fn add_assign(&mut self, o: &LevelStats) {
        for k in 0..3 {
            self.refs[k] += o.refs[k];
            self.misses[k] += o.misses[k];
        }
        self.evictions += o.evictions;
        self.dirty_evictions += o.dirty_evictions;
        self.writebacks_in += o.writebacks_in;
        self.writeback_misses += o.writeback_misses;
    }
}

/// Lines moved between the last level and memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemTraffic {
    /// Lines read from memory (last-level fills).
    pub reads: u64,
    /// Dirty lines written to memory.
    pub writes: u64,
}

impl MemTraffic {
    /// Bytes moved, for lines of `line_bytes`.
    pub fn bytes(&self, line_bytes: u32) -> u64 {
        (self.reads + self.writes) * u64::from(line_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_kind() {
        let mut s = LevelStats::default();
        s.record(AccessKind::Read, true);
        s.record(AccessKind::Read, false);
        s.record(AccessKind::Write, true);
        assert_eq!(s.refs(AccessKind::Read), 2);
        assert_eq!(s.hits(AccessKind::Read), 1);
        assert_eq!(s.total_misses(), 2);
        assert_eq!(s.miss_rate(), 2.0 / 3.0);
        let mut t = s;
        t += &s;
        assert_eq!(t.total_refs(), 6);
    }
}
