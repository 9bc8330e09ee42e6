//! The parameters of online LFOC, with the paper's defaults (section 4),
//! and their checks.

use crate::error::PolicyError;
use crate::lfoc::Lfoc;

/// Online LFOC's parameters. Instruction counts are per app; times are in
/// cycles of the machine's clock.
#[derive(Clone, Debug, PartialEq)]
pub struct LfocOnlineParams {
    /// The clustering and Table 1's thresholds (a preset's values).
    pub lfoc: Lfoc,
    /// Sampling windows a new app runs before it is sampled (the paper's
    /// warm-up: 3 sampling intervals).
    pub warmup_windows: u32,
    /// Instructions the app retires at each sampling-partition size (the
    /// paper's 10 M-instruction sampling windows).
    pub window_instructions: f64,
    /// Instructions per monitoring period of a classified app (the paper
    /// samples every 100 M instructions).
    pub period_instructions: f64,
    /// Monitoring periods the class-change heuristics average over (5).
    pub history: usize,
    /// Cycles between two repartitionings (the paper's 500 ms; 10^9 cycles
    /// on its 2 GHz Skylake).
    pub repartition_cycles: u64,
    /// LLC misses per kilo-cycle above which an app looks memory
    /// intensive (`high_threshold`, Table 1's 10).
    pub high_threshold: f64,
    /// `low_threshold` as a fraction of `high_threshold` (30%).
    pub low_fraction: f64,
    /// Fraction of cycles stalled on L2 misses above which a light app is
    /// resampled (25%).
    pub stall_threshold: f64,
    /// LLC miss rate below which sampling stops early: more space would
    /// not change the IPC (the paper gives no figure; 5%).
    pub low_miss_rate: f64,
    /// Relative IPC gain of one more way below which a memory-intensive
    /// app's sampling stops early as streaming-like (the paper gives no
    /// figure; 2%).
    pub streaming_gain: f64,
    /// Slowdown at or below which a sensitive app's allocation is enough:
    /// its critical size (5%).
    pub critical_slowdown: f64,
    /// Bytes one LLC way holds, for the occupancy check of sensitive apps;
    /// `None` skips that check.
    pub way_bytes: Option<f64>,
    /// Resample a streaming app after this many monitoring periods even
    /// when its miss rate stays high. Not in the paper (`None`, the
    /// default in both presets): its heuristics resample a streaming app
    /// only when it calms down, so one that turns cache-sensitive inside
    /// its one-way cluster, and keeps missing as much there, is never
    /// resampled. Each resampling costs the app a sampling round.
    pub streaming_resample_periods: Option<u32>,
}

impl Default for LfocOnlineParams {
    fn default() -> Self {
        LfocOnlineParams {
            lfoc: Lfoc::default(),
            warmup_windows: 3,
            window_instructions: 10e6,
            period_instructions: 100e6,
            history: 5,
            repartition_cycles: 1_000_000_000,
            high_threshold: 10.0,
            low_fraction: 0.3,
            stall_threshold: 0.25,
            low_miss_rate: 0.05,
            streaming_gain: 0.02,
            critical_slowdown: 1.05,
            way_bytes: None,
            streaming_resample_periods: None,
        }
    }
}

impl LfocOnlineParams {
    /// Checks every field against its domain, and that one repartitioning
    /// period covers at least one interval of the machine.
    pub fn check(&self, interval_cycles: Option<u64>) -> Result<(), PolicyError> {
        let bad = |name: &str, value: String, expected: &str| PolicyError::BadParameter {
            policy: "lfoc-online".into(),
            name: name.into(),
            value,
            expected: expected.into(),
        };
        let positive = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(bad(name, v.to_string(), "a positive number"))
            }
        };
        let fraction = |name: &str, v: f64| {
            if v.is_finite() && (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(bad(name, v.to_string(), "a fraction in [0, 1]"))
            }
        };
        positive("window_instructions", self.window_instructions)?;
        positive("period_instructions", self.period_instructions)?;
        positive("high_threshold", self.high_threshold)?;
        fraction("low_fraction", self.low_fraction)?;
        fraction("stall_threshold", self.stall_threshold)?;
        fraction("low_miss_rate", self.low_miss_rate)?;
        fraction("streaming_gain", self.streaming_gain)?;
        if !(self.critical_slowdown.is_finite() && self.critical_slowdown >= 1.0) {
            return Err(bad(
                "critical_slowdown",
                self.critical_slowdown.to_string(),
                "a slowdown of at least 1",
            ));
        }
        if self.history == 0 {
            return Err(bad("history", "0".into(), "at least 1 period"));
        }
        if self.streaming_resample_periods == Some(0) {
            return Err(bad(
                "streaming_resample_periods",
                "0".into(),
                "at least 1 period, or none",
            ));
        }
        if let Some(b) = self.way_bytes {
            positive("way_bytes", b)?;
        }
        if self.repartition_cycles == 0 {
            return Err(bad("repartition_cycles", "0".into(), "at least 1 cycle"));
        }
        if let Some(i) = interval_cycles {
            if self.repartition_cycles < i {
                return Err(bad(
                    "repartition_cycles",
                    self.repartition_cycles.to_string(),
                    &format!("at least one interval of the machine ({i} cycles)"),
                ));
            }
        }
        Ok(())
    }

    /// LLC misses per kilo-cycle below which an app looks non-memory
    /// intensive (`low_threshold`).
    pub fn low_threshold(&self) -> f64 {
        self.high_threshold * self.low_fraction
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_papers_and_bad_values_name_the_field() {
        let p = LfocOnlineParams::default();
        p.check(Some(1_000_000)).unwrap();
        assert_eq!(p.low_threshold(), 3.0);
        for (edit, field) in [
            (
                (|p: &mut LfocOnlineParams| p.window_instructions = 0.0) as fn(&mut _),
                "window_instructions",
            ),
            (|p| p.low_fraction = 1.5, "low_fraction"),
            (|p| p.critical_slowdown = 0.9, "critical_slowdown"),
            (|p| p.history = 0, "history"),
            (|p| p.way_bytes = Some(-1.0), "way_bytes"),
            (
                |p| p.streaming_resample_periods = Some(0),
                "streaming_resample_periods",
            ),
        ] {
            let mut q = LfocOnlineParams::default();
            edit(&mut q);
            let e = q.check(None).unwrap_err().to_string();
            assert!(e.contains(field), "{e}");
        }
        let short = LfocOnlineParams {
            repartition_cycles: 10,
            ..LfocOnlineParams::default()
        };
        let e = short.check(Some(1_000)).unwrap_err().to_string();
        assert!(
            e.contains("repartition_cycles") && e.contains("1000"),
            "{e}"
        );
    }
}
