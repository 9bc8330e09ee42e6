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
}
