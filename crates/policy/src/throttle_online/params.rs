//! `throttle-online`'s parameters and their checks.

use cachepart_machine::Duty;

use crate::error::PolicyError;

/// The platform's hardware prefetchers, for the hybrid mode.
#[derive(Clone, Debug, PartialEq)]
pub struct PrefetchKnobs {
    /// The word every app starts with (MSR 0x1A4 layout: a set bit turns
    /// a prefetcher off).
    pub word: u64,
    /// Each prefetcher the platform has: its name and its bit.
    pub bits: Vec<(String, u64)>,
}

/// `throttle-online`'s parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct ThrottleOnlineParams {
    /// The unfairness factor at or below which nothing is changed.
    pub target: f64,
    /// Intervals after a change before the next decision.
    pub decision_intervals: u32,
    /// Most intervals a decision looks back on.
    pub max_window_intervals: u32,
    /// Decisions for which the unfairness factor measured under a setting
    /// is remembered (the hysteresis; a phase change makes older
    /// measurements stale).
    pub hysteresis_windows: u32,
    /// The platform's duty-cycle steps (8, or 16 with extended
    /// modulation).
    pub steps: u32,
    /// The lowest duty cycle the controller gives an app.
    pub min_duty: Duty,
    /// The hybrid mode's prefetchers (`None`: duty cycles only).
    pub prefetchers: Option<PrefetchKnobs>,
    /// Each app's IPC alone at full speed, when the caller measured it the
    /// way the run is judged (the simulator: each app alone under the
    /// scenario's run method); `None`: the last point (the whole LLC) of
    /// the machine's alone curves.
    pub alone_ipc: Option<Vec<f64>>,
}

impl Default for ThrottleOnlineParams {
    /// Target 0.05, a decision one interval after a change on at most
    /// the last 10 intervals, measurements remembered
    /// for 20 decisions, eighths down to 1/8, no prefetcher control.
    fn default() -> Self {
        ThrottleOnlineParams {
            target: 0.05,
            decision_intervals: 1,
            max_window_intervals: 10,
            hysteresis_windows: 20,
            steps: 8,
            min_duty: Duty::new(1, 8).expect("1/8 is a duty cycle"),
            prefetchers: None,
            alone_ipc: None,
        }
    }
}

fn bad(name: &str, value: impl ToString, expected: impl Into<String>) -> PolicyError {
    PolicyError::BadParameter {
        policy: "throttle-online".into(),
        name: name.into(),
        value: value.to_string(),
        expected: expected.into(),
    }
}

impl ThrottleOnlineParams {
    /// Refuses an empty mix, a target that is not above 0, an empty
    /// window, a step count other than 8 or 16, a lowest duty cycle in
    /// other steps than the platform's (or at full speed), and alone IPCs
    /// that are not one positive number per app; errors name the
    /// parameter as the `[throttle-online]` key.
    pub fn check(&self, n_apps: usize) -> Result<(), PolicyError> {
        let params = self;
        if n_apps == 0 {
            return Err(PolicyError::EmptyMix);
        }
        if !(params.target.is_finite() && params.target > 0.0) {
            return Err(bad(
                "target",
                params.target,
                "an unfairness factor above 0 (0.05 is a coefficient of variation of 5%)",
            ));
        }
        if params.decision_intervals == 0 {
            return Err(bad("decision-intervals", 0, "at least 1 interval"));
        }
        if params.max_window_intervals < params.decision_intervals {
            return Err(bad(
                "max-window-intervals",
                params.max_window_intervals,
                format!(
                    "at least decision-intervals ({})",
                    params.decision_intervals
                ),
            ));
        }
        if params.hysteresis_windows == 0 {
            return Err(bad("hysteresis-windows", 0, "at least 1 decision"));
        }
        if params.steps != 8 && params.steps != 16 {
            return Err(bad(
                "steps",
                params.steps,
                "8 (clock modulation) or 16 (extended modulation)",
            ));
        }
        if params.min_duty.steps() != params.steps {
            return Err(bad(
                "min-duty",
                params.min_duty,
                format!(
                    "a duty cycle the platform has: it modulates in {} steps (1/{s} to {s}/{s})",
                    params.steps,
                    s = params.steps
                ),
            ));
        }
        if params.min_duty.is_full() {
            return Err(bad(
                "min-duty",
                params.min_duty,
                "a duty cycle below full speed, or there is nothing to throttle",
            ));
        }
        if let Some(given) = &params.alone_ipc {
            if given.len() != n_apps || given.iter().any(|i| !(i.is_finite() && *i > 0.0)) {
                return Err(bad(
                    "alone-ipc",
                    format!("{given:?}"),
                    format!("one IPC above 0 per app ({n_apps})"),
                ));
            }
        }
        Ok(())
    }
}
