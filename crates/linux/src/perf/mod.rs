//! Per-process hardware counters: instructions, cycles, LLC references and
//! misses, and cycles stalled on L2 misses where the CPU model has that
//! event.
//!
//! A [`CounterSource`] is attached to each app's process and read once an
//! interval; every read returns the [`Counts`] since the previous one.
//! [`PerfCounters`] counts through `perf_event_open` (one counter per
//! event, inherited by every thread the process starts, scaled by
//! `time_enabled / time_running` when the kernel multiplexed it);
//! [`FakeCounters`] returns scripted, deterministic counts for tests and
//! for machines without a PMU; [`TableCounters`] returns an app's rates
//! from a profile table at the way count its current plan gives it.

mod fake;
mod real;
mod table;

pub use fake::{FakeCounters, FakeRates};
pub use real::{pmu_dir, PerfCounters};
pub use table::TableCounters;

use crate::error::Result;
use std::time::Duration;

/// What one process did during one interval (scaled estimates when the
/// kernel multiplexed the counters).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    /// Instructions retired.
    pub instructions: f64,
    /// Core cycles.
    pub cycles: f64,
    /// LLC references.
    pub llc_references: f64,
    /// LLC misses.
    pub llc_misses: f64,
    /// Cycles stalled while an L2 miss was outstanding; `None` where the
    /// CPU model has no such event (not a zero).
    pub l2_miss_stall_cycles: Option<f64>,
}

/// A source of per-process counts.
pub trait CounterSource: Send {
    /// Starts counting process `pid` (and every thread it starts) for app
    /// `app`, replacing what was counted for that app before (a restart).
    fn attach(&mut self, app: usize, pid: u32) -> Result<()>;

    /// Stops counting app `app`.
    fn detach(&mut self, app: usize);

    /// The counts of app `app` since its previous read (or its attach);
    /// `elapsed` is the wall time since then. A detached app reads zero.
    fn read(&mut self, app: usize, elapsed: Duration) -> Result<Counts>;

    /// The event counting L2-miss stalls, if any (`CYCLE_ACTIVITY.STALLS_L2_MISS`).
    fn stall_event(&self) -> Option<&str>;

    /// App `app` may now fill `ways` LLC ways (the machine applied a
    /// plan). Sources that measure ignore it; [`TableCounters`] switches
    /// the app to its table's row for that way count.
    fn set_ways(&mut self, _app: usize, _ways: u32) {}

    /// App `app`'s utility monitor over its last read (UCP's UMON): the
    /// LLC references that would hit at each LRU stack position of a
    /// private directory with every way (most recently used first), and
    /// those that would hit at none. No hardware has one (`None`);
    /// [`TableCounters`] derives it from the table's misses at every way
    /// count.
    fn utility(&self, _app: usize) -> Option<(Vec<f64>, f64)> {
        None
    }
}

/// A counter's value scaled for multiplexing: `count * enabled / running`
/// (zero when it never ran).
pub fn scaled(count: u64, enabled: u64, running: u64) -> f64 {
    if running == 0 {
        0.0
    } else if running >= enabled {
        count as f64
    } else {
        count as f64 * enabled as f64 / running as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiplexed_counts_are_scaled() {
        assert_eq!(scaled(100, 10, 10), 100.0);
        assert_eq!(scaled(100, 40, 10), 400.0);
        assert_eq!(scaled(100, 40, 0), 0.0);
    }
}
