//! `kpart-dynaway`: KPart's dynamic version (El-Sayed et al., HPCA 2018)
//! as a controller, as the LFOC paper (section 4.2) describes its online
//! profiling: every profiling round, each app in turn gets a partition that
//! shrinks from `W - 1` ways to 1 while every other app shares the
//! complementary ways; its IPC, LLC misses per kilo-instruction and per
//! kilo-cycle and its bandwidth are measured over `window_instructions` at
//! each size (a full sweep, no early stop: KPart needs every way count of
//! every app). When every app is profiled, KPart's clustering
//! ([`kpart_clusters`]) runs on the measured curves and its plan holds
//! until the next round, `reprofile_cycles` after this one began.
//!
//! What is read from the KPart paper itself is not here: the paper is not
//! among this project's sources, and its authors' code (which the LFOC
//! paper could not run on its platform) neither; this is the procedure as
//! the LFOC paper states it. [`KpartDynaway::decisions`] logs every
//! profiling step and plan.

use cachepart_machine::{Action, AppCurves, AppEvent, EventKind, Interval, Machine, Plan};
use serde::{Deserialize, Serialize};

use crate::controller::Controller;
use crate::error::PolicyError;
use crate::kpart::kpart_clusters;

/// KPart-Dynaway's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct DynawayParams {
    /// Instructions the profiled app retires at each partition size.
    pub window_instructions: f64,
    /// Cycles from the start of one profiling round to the next.
    pub reprofile_cycles: u64,
}

impl Default for DynawayParams {
    fn default() -> Self {
        DynawayParams {
            window_instructions: 10e6,
            reprofile_cycles: 10_000_000_000,
        }
    }
}

/// One logged decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DynawayDecision {
    /// The interval it followed.
    pub interval: u64,
    /// The machine's clock, in cycles.
    pub at_cycles: u64,
    /// What was decided.
    pub what: DynawayKind,
}

/// The kinds of [`DynawayDecision`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum DynawayKind {
    /// `app` is profiled in a partition of `ways` ways.
    Profile {
        /// The app.
        app: usize,
        /// Its partition's ways.
        ways: u32,
    },
    /// KPart's clustering of the measured curves was applied.
    Plan {
        /// The plan, as `Plan` prints it.
        plan: String,
    },
}

/// One size measured: instructions, cycles, misses.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Window {
    instructions: f64,
    cycles: f64,
    misses: f64,
    memory_bytes: f64,
}

/// KPart-Dynaway (see the module docs).
pub struct KpartDynaway {
    params: DynawayParams,
    n: usize,
    ways: u32,
    /// The app being profiled, its current size and what it measured.
    profiling: Option<(usize, u32, Window)>,
    /// Per app, per size (index `w - 1`) of this round.
    measured: Vec<Vec<Option<Window>>>,
    finished: Vec<bool>,
    round_start: Option<u64>,
    interval: u64,
    decisions: Vec<DynawayDecision>,
}

impl KpartDynaway {
    /// KPart-Dynaway for a mix of `n_apps` apps.
    pub fn new(params: DynawayParams, n_apps: usize) -> Result<KpartDynaway, PolicyError> {
        if n_apps == 0 {
            return Err(PolicyError::EmptyMix);
        }
        let bad = |name: &str, value: String, expected: &str| PolicyError::BadParameter {
            policy: "kpart-dynaway".into(),
            name: name.into(),
            value,
            expected: expected.into(),
        };
        if !(params.window_instructions.is_finite() && params.window_instructions > 0.0) {
            return Err(bad(
                "window_instructions",
                params.window_instructions.to_string(),
                "a positive number of instructions",
            ));
        }
        if params.reprofile_cycles == 0 {
            return Err(bad("reprofile_cycles", "0".into(), "at least 1 cycle"));
        }
        Ok(KpartDynaway {
            params,
            n: n_apps,
            ways: 0,
            profiling: None,
            measured: Vec::new(),
            finished: vec![false; n_apps],
            round_start: None,
            interval: 0,
            decisions: Vec::new(),
        })
    }

    /// Every decision so far, in order.
    pub fn decisions(&self) -> &[DynawayDecision] {
        &self.decisions
    }

    /// The largest profiling partition: every way but one for the others.
    fn top(&self) -> u32 {
        if self.n > 1 {
            self.ways.saturating_sub(1).max(1)
        } else {
            self.ways
        }
    }

    /// The plan profiling `app` in `ways` ways.
    fn profile_plan(&self, app: usize, ways: u32) -> Plan {
        let others: Vec<usize> = (0..self.n).filter(|&a| a != app).collect();
        let mut clusters = vec![(vec![app], ways)];
        if !others.is_empty() {
            clusters.push((others, self.ways - ways));
        }
        Plan::from_clusters(clusters)
    }

    /// Starts profiling the next app from `from` that has not finished.
    fn next_app(&mut self, from: usize, at: u64) -> Vec<Action> {
        match (from..self.n).find(|&a| !self.finished[a]) {
            Some(app) => {
                let w = self.top();
                self.profiling = Some((app, w, Window::default()));
                self.log(at, DynawayKind::Profile { app, ways: w });
                vec![Action::Apply(self.profile_plan(app, w))]
            }
            None => {
                self.profiling = None;
                self.plan(at)
            }
        }
    }

    /// KPart's clustering on this round's curves.
    fn plan(&mut self, at: u64) -> Vec<Action> {
        let ways = self.ways as usize;
        let curves: Vec<AppCurves> = self
            .measured
            .iter()
            .enumerate()
            .map(|(a, sizes)| curves_of(a, sizes, ways))
            .collect();
        let plan = Plan::from_clusters(kpart_clusters(&curves, ways, None));
        self.log(
            at,
            DynawayKind::Plan {
                plan: plan.to_string(),
            },
        );
        vec![Action::Apply(plan)]
    }

    fn log(&mut self, at_cycles: u64, what: DynawayKind) {
        self.decisions.push(DynawayDecision {
            interval: self.interval,
            at_cycles,
            what,
        });
    }
}

/// An app's curves over `1..=ways` from its measured windows: sizes not
/// measured (the last way, which only the app alone can have, or an app
/// that finished mid-round) repeat the nearest measured one.
fn curves_of(app: usize, sizes: &[Option<Window>], ways: usize) -> AppCurves {
    let known: Vec<(usize, Window)> = sizes
        .iter()
        .enumerate()
        .filter_map(|(i, w)| w.map(|w| (i, w)))
        .collect();
    let at = |i: usize| {
        known
            .iter()
            .min_by_key(|(k, _)| k.abs_diff(i))
            .map(|(_, w)| *w)
            .unwrap_or(Window {
                instructions: 1.0,
                cycles: 1.0,
                ..Window::default()
            })
    };
    let per = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let w: Vec<Window> = (0..ways).map(at).collect();
    let ipc = w
        .iter()
        .map(|x| per(x.instructions, x.cycles).max(1e-9))
        .collect();
    let mpki = w
        .iter()
        .map(|x| 1000.0 * per(x.misses, x.instructions))
        .collect();
    let mpkc = w.iter().map(|x| 1000.0 * per(x.misses, x.cycles)).collect();
    let bw = w.iter().map(|x| per(x.memory_bytes, x.cycles)).collect();
    AppCurves::new(&format!("app{app}"), ipc, mpki, mpkc, bw)
}

impl Controller for KpartDynaway {
    fn name(&self) -> &str {
        "kpart-dynaway"
    }

    fn start(&mut self, machine: &mut dyn Machine) -> Result<Vec<Action>, PolicyError> {
        self.ways = machine.platform().ways;
        if self.ways == 0 {
            return Err(PolicyError::MissingData {
                policy: "kpart-dynaway".into(),
                what: "a platform with LLC ways".into(),
            });
        }
        self.measured = vec![vec![None; self.ways as usize]; self.n];
        self.round_start = Some(0);
        Ok(self.next_app(0, 0))
    }

    fn on_event(&mut self, e: &AppEvent) -> Result<Vec<Action>, PolicyError> {
        if e.kind == EventKind::Finished && e.app < self.n {
            self.finished[e.app] = true;
            if self.profiling.is_some_and(|(a, _, _)| a == e.app) {
                return Ok(self.next_app(e.app + 1, e.at_cycles));
            }
        }
        Ok(Vec::new())
    }

    fn on_interval(&mut self, iv: &Interval) -> Result<Vec<Action>, PolicyError> {
        self.interval = iv.index;
        let at = iv.end_cycles;
        let Some((app, ways, mut win)) = self.profiling else {
            // between rounds: a new round when the period is over
            if self
                .round_start
                .is_some_and(|s| at.saturating_sub(s) >= self.params.reprofile_cycles)
            {
                self.round_start = Some(at);
                self.measured = vec![vec![None; self.ways as usize]; self.n];
                return Ok(self.next_app(0, at));
            }
            return Ok(Vec::new());
        };
        if let Some(s) = iv.samples.iter().find(|s| s.app == app && s.ran) {
            win.instructions += s.instructions;
            win.cycles += s.cycles;
            win.misses += s.llc_misses;
            win.memory_bytes += s.memory_bytes;
        }
        if win.instructions < self.params.window_instructions {
            self.profiling = Some((app, ways, win));
            return Ok(Vec::new());
        }
        self.measured[app][ways as usize - 1] = Some(win);
        if ways > 1 {
            self.profiling = Some((app, ways - 1, Window::default()));
            self.log(
                at,
                DynawayKind::Profile {
                    app,
                    ways: ways - 1,
                },
            );
            return Ok(vec![Action::Apply(self.profile_plan(app, ways - 1))]);
        }
        Ok(self.next_app(app + 1, at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{drive, Flow, Stop};
    use cachepart_testkit::{Behaviour, ScriptedMachine};

    fn run(phases: Vec<Vec<(u64, Behaviour)>>, intervals: u64) -> (KpartDynaway, Plan) {
        let n = phases.len();
        let mut m = ScriptedMachine::new(11, phases);
        let params = DynawayParams {
            window_instructions: 1e5,
            reprofile_cycles: 100_000_000,
        };
        let mut c = KpartDynaway::new(params, n).unwrap();
        drive(&mut m, &mut c, Stop::After(intervals), &mut |_| {
            Flow::Continue
        })
        .unwrap();
        let plan = m.plan().clone();
        (c, plan)
    }

    #[test]
    fn every_app_is_swept_from_ten_ways_to_one_then_kpart_plans() {
        let phases = vec![
            vec![(0, Behaviour::Sensitive)],
            vec![(0, Behaviour::Streaming)],
            vec![(0, Behaviour::Light)],
        ];
        let (c, plan) = run(phases, 60);
        let profiled: Vec<(usize, u32)> = c
            .decisions()
            .iter()
            .filter_map(|d| match d.what {
                DynawayKind::Profile { app, ways } => Some((app, ways)),
                _ => None,
            })
            .collect();
        // a full sweep, 10 ways down to 1, for each app in turn
        let want: Vec<(usize, u32)> = (0..3)
            .flat_map(|a| (1..=10).rev().map(move |w| (a, w)))
            .collect();
        assert_eq!(profiled, want);
        let plans = c
            .decisions()
            .iter()
            .filter(|d| matches!(d.what, DynawayKind::Plan { .. }))
            .count();
        assert_eq!(plans, 1);
        // KPart gives the sensitive app (whose IPC grows up to 6 ways)
        // room: at least 6 ways of its own cluster, not shared with the
        // streaming app
        let own = plan.clusters.iter().find(|k| k.apps.contains(&0)).unwrap();
        assert!(!own.apps.contains(&1), "{plan}");
        assert!(own.mask.count() >= 6, "{plan}");
    }

    #[test]
    fn rounds_repeat_after_the_reprofiling_period() {
        let phases = vec![vec![(0, Behaviour::Sensitive)], vec![(0, Behaviour::Light)]];
        let (c, _) = run(phases, 260);
        let plans: Vec<u64> = c
            .decisions()
            .iter()
            .filter(|d| matches!(d.what, DynawayKind::Plan { .. }))
            .map(|d| d.interval)
            .collect();
        assert!(plans.len() >= 2, "{plans:?}");
        // the second round began 100 intervals (10^8 cycles) after the first
        let starts: Vec<u64> = c
            .decisions()
            .iter()
            .filter(|d| matches!(d.what, DynawayKind::Profile { app: 0, ways: 10 }))
            .map(|d| d.at_cycles)
            .collect();
        assert_eq!(starts[1] - starts[0], 100_000_000, "{starts:?}");
    }

    #[test]
    fn bad_parameters_are_refused() {
        let p = DynawayParams {
            window_instructions: 0.0,
            ..DynawayParams::default()
        };
        let e = KpartDynaway::new(p, 2).err().unwrap().to_string();
        assert!(e.contains("window_instructions"), "{e}");
        assert!(matches!(
            KpartDynaway::new(DynawayParams::default(), 0),
            Err(PolicyError::EmptyMix)
        ));
    }
}
