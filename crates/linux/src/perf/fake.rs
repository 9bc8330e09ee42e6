//! Scripted counts: each app follows a list of [`FakeRates`], one per read
//! (the last repeated), over a fixed nominal interval, so the same script
//! gives the same counts whatever the wall clock did.

use super::{CounterSource, Counts};
use crate::error::Result;
use std::collections::BTreeMap;
use std::time::Duration;

/// What an app does per interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FakeRates {
    /// Clock, GHz (cycles per nanosecond).
    pub ghz: f64,
    /// Instructions per cycle.
    pub ipc: f64,
    /// LLC references per kilo-instruction.
    pub llc_refs_pki: f64,
    /// LLC misses per kilo-instruction.
    pub llc_mpki: f64,
    /// Fraction of cycles stalled on L2 misses; `None`: no such event.
    pub stall_fraction: Option<f64>,
}

impl FakeRates {
    /// The rates of app `app` when none are scripted: four kinds in turn
    /// (compute-bound, cache-sensitive, streaming, light).
    pub fn default_for(app: usize) -> FakeRates {
        let (ipc, refs, mpki, stall) = [
            (1.6, 2.0, 0.1, 0.02),
            (0.9, 20.0, 6.0, 0.30),
            (0.4, 40.0, 35.0, 0.60),
            (1.2, 5.0, 1.0, 0.08),
        ][app % 4];
        FakeRates {
            ghz: 2.0,
            ipc,
            llc_refs_pki: refs,
            llc_mpki: mpki,
            stall_fraction: Some(stall),
        }
    }
}

impl FakeRates {
    /// What these rates count over `interval` (whole counts, as a PMU
    /// gives).
    pub fn counts_over(&self, interval: Duration) -> Counts {
        let cycles = (self.ghz * interval.as_nanos() as f64).round();
        let instructions = (cycles * self.ipc).round();
        Counts {
            instructions,
            cycles,
            llc_references: (instructions * self.llc_refs_pki / 1000.0).round(),
            llc_misses: (instructions * self.llc_mpki / 1000.0).round(),
            l2_miss_stall_cycles: self.stall_fraction.map(|f| (cycles * f).round()),
        }
    }
}

/// Deterministic counts for tests and for machines without a PMU.
#[derive(Clone, Debug)]
pub struct FakeCounters {
    interval: Duration,
    scripts: BTreeMap<usize, Vec<FakeRates>>,
    /// Reads so far of each attached app.
    attached: BTreeMap<usize, usize>,
}

impl FakeCounters {
    /// Counts over `interval` per read, every app at its
    /// [`FakeRates::default_for`].
    pub fn new(interval: Duration) -> FakeCounters {
        FakeCounters {
            interval,
            scripts: BTreeMap::new(),
            attached: BTreeMap::new(),
        }
    }

    /// App `app` follows `script`, one entry per read, the last repeated.
    pub fn script(mut self, app: usize, script: Vec<FakeRates>) -> FakeCounters {
        self.scripts.insert(app, script);
        self
    }
}

impl CounterSource for FakeCounters {
    fn attach(&mut self, app: usize, _pid: u32) -> Result<()> {
        self.attached.insert(app, 0);
        Ok(())
    }

    fn detach(&mut self, app: usize) {
        self.attached.remove(&app);
    }

    fn read(&mut self, app: usize, _elapsed: Duration) -> Result<Counts> {
        let script = self.scripts.get(&app);
        let Some(n) = self.attached.get_mut(&app) else {
            let stalls = script
                .and_then(|s| s.first())
                .copied()
                .unwrap_or(FakeRates::default_for(app))
                .stall_fraction
                .map(|_| 0.0);
            return Ok(Counts {
                l2_miss_stall_cycles: stalls,
                ..Counts::default()
            });
        };
        let r = match script {
            Some(s) if !s.is_empty() => s[(*n).min(s.len() - 1)],
            _ => FakeRates::default_for(app),
        };
        *n += 1;
        Ok(r.counts_over(self.interval))
    }

    fn stall_event(&self) -> Option<&str> {
        Some("fake")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripted_counts_follow_the_script_and_repeat_the_last() {
        let r = |ipc| FakeRates {
            ghz: 1.0,
            ipc,
            llc_refs_pki: 10.0,
            llc_mpki: 2.0,
            stall_fraction: None,
        };
        let mut f = FakeCounters::new(Duration::from_millis(1)).script(0, vec![r(1.0), r(0.5)]);
        let ms = Duration::from_millis(1);
        assert_eq!(f.read(0, ms).unwrap(), Counts::default());
        f.attach(0, 1).unwrap();
        let a = f.read(0, Duration::from_secs(9)).unwrap();
        assert_eq!(
            (a.cycles, a.instructions, a.llc_references, a.llc_misses),
            (1e6, 1e6, 1e4, 2e3)
        );
        assert_eq!(a.l2_miss_stall_cycles, None);
        let b = f.read(0, ms).unwrap();
        let c = f.read(0, ms).unwrap();
        assert_eq!((b.instructions, c.instructions), (5e5, 5e5));
        f.attach(1, 2).unwrap();
        let d = f.read(1, ms).unwrap();
        assert_eq!(d.instructions, 2e6 * 0.9);
        assert_eq!(d.l2_miss_stall_cycles, Some(6e5));
        f.detach(1);
        assert_eq!(f.read(1, ms).unwrap().cycles, 0.0);
    }
}
