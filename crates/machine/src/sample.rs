//! Per-app, per-interval counter samples.

use serde::{Deserialize, Serialize};

/// What one app did during one interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Index of the app in the mix.
    pub app: usize,
    /// Instructions retired.
    pub instructions: f64,
    /// Core cycles.
    pub cycles: f64,
    /// LLC references.
    pub llc_references: f64,
    /// LLC misses.
    pub llc_misses: f64,
    /// Cycles stalled on memory.
    pub memory_stall_cycles: f64,
    /// LLC occupancy in bytes at the end of the interval.
    pub llc_occupancy_bytes: f64,
    /// Bytes moved to and from memory.
    pub memory_bytes: f64,
    /// TLB misses.
    pub tlb_misses: f64,
    /// Pages recolored during the interval.
    pub pages_recolored: f64,
    /// Cycles stalled while an L2 miss was outstanding (the
    /// `STALLS_L2_MISS` event LFOC and Dunn read).
    #[serde(default)]
    pub l2_miss_stall_cycles: f64,
    /// Whether the app ran at all during the interval (a parked or
    /// finished app did not).
    #[serde(default)]
    pub ran: bool,
    /// Utility monitor (UCP's UMON): the app's LLC references that hit at
    /// each LRU stack position of a private tag directory with the LLC's
    /// ways (most recently used first), scaled from the sampled sets to
    /// the whole cache. `umon_hits[..w]` sums to what the app would hit
    /// with `w` ways of its own. Empty on machines without monitors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub umon_hits: Vec<f64>,
    /// Utility monitor: references that hit at no position.
    #[serde(default)]
    pub umon_misses: f64,
}

impl Sample {
    /// Instructions per cycle.
    pub fn ipc(&self) -> f64 {
        if self.cycles > 0.0 {
            self.instructions / self.cycles
        } else {
            0.0
        }
    }

    /// LLC misses per kilo-cycle.
    pub fn llc_mpkc(&self) -> f64 {
        per_kilo(self.llc_misses, self.cycles)
    }

    /// LLC misses per kilo-instruction.
    pub fn llc_mpki(&self) -> f64 {
        per_kilo(self.llc_misses, self.instructions)
    }

    /// Fraction of cycles stalled on L2 misses.
    pub fn l2_miss_stall_fraction(&self) -> f64 {
        if self.cycles > 0.0 {
            self.l2_miss_stall_cycles / self.cycles
        } else {
            0.0
        }
    }
}

fn per_kilo(count: f64, per: f64) -> f64 {
    if per > 0.0 {
        count * 1000.0 / per
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        let s = Sample {
            instructions: 2000.0,
            cycles: 4000.0,
            llc_misses: 8.0,
            l2_miss_stall_cycles: 1000.0,
            ran: true,
            ..Sample::default()
        };
        assert_eq!(s.ipc(), 0.5);
        assert_eq!(s.llc_mpki(), 4.0);
        assert_eq!(s.llc_mpkc(), 2.0);
        assert_eq!(s.l2_miss_stall_fraction(), 0.25);
        let idle = Sample::default();
        assert_eq!((idle.llc_mpkc(), idle.l2_miss_stall_fraction()), (0.0, 0.0));
    }
}
