//! Run methodologies: how long a simulated mix runs, what "an app's run"
//! is, and what its slowdown is measured over. The papers differ:
//!
//! * [`RunMethod::ToCompletion`] (the default): every app runs its
//!   instruction limit (replaying its trace until then) or its trace once;
//!   an app that finishes leaves its core and the others run on with more
//!   of the cache; the run ends when the last app finishes. Slowdown is IPC
//!   alone over IPC in the mix, each over the app's whole run.
//! * [`RunMethod::Restart`], LFOC's (section 5.1): every app runs its trace
//!   to the end and restarts it at once, so that every app has co-runners
//!   all the time, until the app whose runs take longest has completed
//!   `completions` runs (default 3). An app's time in the mix is the
//!   geometric mean of its completed runs' times; its slowdown is that
//!   over the time of one run alone.
//! * [`RunMethod::FixedTime`], COLORIS's (section 4): every app co-runs,
//!   replaying its trace, for a fixed simulated time; slowdown is IPC alone
//!   over the same time over IPC in the mix.
//!
//! In a scenario file: `[method]` with `kind = "to-completion"`,
//! `kind = "restart"` (and `completions = N`) or `kind = "fixed-time"`
//! (and `cycles = N`, a whole number of sampling intervals).

use cachepart_machine::{EventKind, Interval};
use cachepart_policy::Flow;
use serde::{Deserialize, Serialize};

fn three() -> u32 {
    3
}

/// A run methodology (see the module docs).
///
/// Every variant is a struct, even one without keys: serde refuses
/// unknown keys (`deny_unknown_fields`) only in struct variants of an
/// internally tagged enum, so `[method] kind = "to-completion"` with a
/// stray key is refused as the others are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum RunMethod {
    /// Each app runs its limit or its trace once; finished apps leave
    /// (the default).
    ToCompletion {},
    /// LFOC's: traces restart until the slowest app completed N runs.
    Restart {
        /// Runs the slowest app completes (default 3).
        #[serde(default = "three")]
        completions: u32,
    },
    /// COLORIS's: every app co-runs for this many cycles.
    FixedTime {
        /// Simulated cycles (a whole number of sampling intervals).
        cycles: u64,
    },
}

impl Default for RunMethod {
    fn default() -> RunMethod {
        RunMethod::ToCompletion {}
    }
}

impl RunMethod {
    /// Whether this is the default (left out of reports).
    pub fn is_default(&self) -> bool {
        *self == RunMethod::ToCompletion {}
    }

    /// Whether apps replay their traces without an instruction limit.
    pub fn replays(&self) -> bool {
        !self.is_default()
    }

    /// Checks the method against the scenario's sampling interval; the
    /// error is (field, what was expected).
    pub fn check(&self, interval_cycles: u64) -> Result<(), (String, String)> {
        match *self {
            RunMethod::ToCompletion {} => Ok(()),
            RunMethod::Restart { completions } => {
                if completions == 0 {
                    Err((
                        "method.completions".into(),
                        "must be at least 1 (runs the slowest app completes)".into(),
                    ))
                } else {
                    Ok(())
                }
            }
            RunMethod::FixedTime { cycles } => {
                if cycles == 0 || interval_cycles == 0 || cycles % interval_cycles != 0 {
                    Err((
                        "method.cycles".into(),
                        format!(
                            "{cycles} cycles: a positive whole number of sampling intervals ({interval_cycles} cycles each) was expected"
                        ),
                    ))
                } else {
                    Ok(())
                }
            }
        }
    }
}

/// Follows a run under a [`RunMethod`]: when it stops and, for
/// [`RunMethod::Restart`], each app's completed runs.
#[derive(Clone, Debug)]
pub struct MethodTracker {
    method: RunMethod,
    /// Per app, the cycle at which its current run began.
    began: Vec<u64>,
    /// Per app, the length in cycles of each completed run.
    runs: Vec<Vec<u64>>,
    /// The first app that finished where the method needs it to restart.
    stuck: Option<usize>,
}

impl MethodTracker {
    /// A tracker for `apps` apps.
    pub fn new(method: RunMethod, apps: usize) -> MethodTracker {
        MethodTracker {
            method,
            began: vec![0; apps],
            runs: vec![Vec::new(); apps],
            stuck: None,
        }
    }

    /// Takes in one interval; says whether the run goes on.
    pub fn observe(&mut self, iv: &Interval) -> Flow {
        for e in &iv.events {
            let Some(began) = self.began.get_mut(e.app) else {
                continue;
            };
            match e.kind {
                EventKind::Restarted => {
                    self.runs[e.app].push(e.at_cycles.saturating_sub(*began));
                    *began = e.at_cycles;
                }
                EventKind::Finished if self.method.replays() => {
                    self.stuck.get_or_insert(e.app);
                }
                _ => {}
            }
        }
        if self.stuck.is_some() {
            return Flow::Stop;
        }
        match self.method {
            RunMethod::ToCompletion {} => Flow::Continue,
            RunMethod::Restart { completions } => {
                let n = completions as usize;
                if self.runs.iter().all(|r| r.len() >= n) {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            }
            RunMethod::FixedTime { cycles } => {
                if iv.end_cycles >= cycles {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            }
        }
    }

    /// An app that finished (its trace made no progress) where the method
    /// needed it to replay its trace.
    pub fn stuck(&self) -> Option<usize> {
        self.stuck
    }

    /// Each app's completed runs, in cycles, in order.
    pub fn runs(&self) -> &[Vec<u64>] {
        &self.runs
    }

    /// The geometric mean of app `app`'s completed runs, in cycles
    /// (`None` without one).
    pub fn mean_run_cycles(&self, app: usize) -> Option<f64> {
        gmean(self.runs.get(app)?)
    }
}

/// The geometric mean of run lengths in cycles (`None` for none; a zero
/// counts as one cycle).
pub fn gmean(runs: &[u64]) -> Option<f64> {
    if runs.is_empty() {
        return None;
    }
    let log_sum: f64 = runs.iter().map(|&c| (c.max(1) as f64).ln()).sum();
    Some((log_sum / runs.len() as f64).exp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_machine::AppEvent;

    fn interval(index: u64, end: u64, events: Vec<(usize, EventKind, u64)>) -> Interval {
        Interval {
            index,
            end_cycles: end,
            samples: Vec::new(),
            events: events
                .into_iter()
                .map(|(app, kind, at_cycles)| AppEvent {
                    app,
                    kind,
                    at_cycles,
                    core: Some(0),
                })
                .collect(),
        }
    }

    #[test]
    fn restart_stops_when_the_slowest_app_has_its_runs() {
        let mut t = MethodTracker::new(RunMethod::Restart { completions: 2 }, 2);
        let r = EventKind::Restarted;
        assert_eq!(
            t.observe(&interval(0, 100, vec![(0, r, 40), (0, r, 90)])),
            Flow::Continue
        );
        assert_eq!(
            t.observe(&interval(1, 200, vec![(1, r, 150)])),
            Flow::Continue
        );
        assert_eq!(
            t.observe(&interval(2, 300, vec![(0, r, 210), (1, r, 280)])),
            Flow::Stop
        );
        assert_eq!(t.runs(), &[vec![40, 50, 120], vec![150, 130]]);
        let g = t.mean_run_cycles(1).unwrap();
        assert!((g - (150.0f64 * 130.0).sqrt()).abs() < 1e-9, "{g}");
        assert_eq!(t.mean_run_cycles(5), None);
    }

    #[test]
    fn fixed_time_stops_at_its_cycles_and_a_finish_stops_a_replaying_run() {
        let mut t = MethodTracker::new(RunMethod::FixedTime { cycles: 200 }, 1);
        assert_eq!(t.observe(&interval(0, 100, vec![])), Flow::Continue);
        assert_eq!(t.observe(&interval(1, 200, vec![])), Flow::Stop);
        let mut t = MethodTracker::new(RunMethod::Restart { completions: 3 }, 2);
        assert_eq!(
            t.observe(&interval(0, 100, vec![(1, EventKind::Finished, 10)])),
            Flow::Stop
        );
        assert_eq!(t.stuck(), Some(1));
        // To completion: a finish is the normal end of an app.
        let mut t = MethodTracker::new(RunMethod::ToCompletion {}, 1);
        assert_eq!(
            t.observe(&interval(0, 100, vec![(0, EventKind::Finished, 10)])),
            Flow::Continue
        );
    }

    #[test]
    fn checks_name_the_field() {
        assert!(RunMethod::ToCompletion {}.check(10).is_ok());
        let (f, _) = RunMethod::Restart { completions: 0 }.check(10).unwrap_err();
        assert_eq!(f, "method.completions");
        let (f, why) = RunMethod::FixedTime { cycles: 25 }.check(10).unwrap_err();
        assert_eq!(f, "method.cycles");
        assert!(why.contains("10 cycles"), "{why}");
        assert!(RunMethod::FixedTime { cycles: 30 }.check(10).is_ok());
    }

    #[test]
    fn parses_from_toml_with_defaults_and_refuses_unknown_keys() {
        #[derive(Deserialize)]
        struct F {
            method: RunMethod,
        }
        let f: F = toml::from_str("[method]\nkind = \"restart\"\n").unwrap();
        assert_eq!(f.method, RunMethod::Restart { completions: 3 });
        let f: F = toml::from_str("method = { kind = \"fixed-time\", cycles = 5 }").unwrap();
        assert_eq!(f.method, RunMethod::FixedTime { cycles: 5 });
        let e = toml::from_str::<F>("[method]\nkind = \"restart\"\nruns = 3\n")
            .err()
            .unwrap();
        assert!(e.to_string().contains("runs"), "{e}");
        let f: F = toml::from_str("[method]\nkind = \"to-completion\"\n").unwrap();
        assert_eq!(f.method, RunMethod::default());
        for stray in ["bogus = \"x\"", "cycles = 5", "completions = 2"] {
            let e = toml::from_str::<F>(&format!("[method]\nkind = \"to-completion\"\n{stray}\n"))
                .err()
                .unwrap();
            let key = stray.split(' ').next().unwrap();
            assert!(
                e.to_string().contains(&format!("unknown field `{key}`")),
                "{e}"
            );
        }
        let e = toml::from_str::<F>("[method]\nkind = \"forever\"\n")
            .err()
            .unwrap();
        assert!(e.to_string().contains("forever"), "{e}");
    }
}
