//! `lfoc-online`: LFOC's online algorithm (García-García et al., ICPP
//! 2019, section 4) as a [`Controller`]: it measures every app on the
//! machine it runs on, with no offline curves.
//!
//! * A new app is unclassified and warms up for `warmup_windows` sampling
//!   windows of its instructions, whose figures are ignored. An app whose
//!   trace restarts (replayed to its instruction limit, or the restart
//!   methodology) is the same program going on: it keeps its class, and
//!   the class-change heuristics catch a new phase.
//! * It then waits its turn for the one sampling partition
//!   ([`Session`]): alone in 1, 2, ... ways while the other apps share the
//!   rest, `window_instructions` at each size, until a low miss rate, a
//!   streaming-like gain or the largest size stops it. Its curves (sizes
//!   not sampled extrapolated) give its class by Table 1 and, for a
//!   sensitive app, its critical size (slowdown at most 5%).
//! * A classified app is monitored per `period_instructions` ([`Monitor`]);
//!   the class-change heuristics over the last `history` periods send it
//!   back to sampling.
//! * Every `repartition_cycles` (and right after a sampling ends, when no
//!   other app waits to sample), LFOC's clustering ([`Lfoc::plan_for`])
//!   runs on the measured curves; apps not yet classified count as light.
//!
//! The sampling plans are applied like any other, so what sampling costs
//! is part of the run. [`LfocOnline::decisions`] logs every warm-up end,
//! sampling step, classification, class change and re-plan.

mod monitor;
mod params;
mod sampling;

use std::collections::VecDeque;

use cachepart_machine::{Action, AppCurves, AppEvent, EventKind, Interval, Machine, Plan};
use serde::{Deserialize, Serialize};

pub use monitor::{Monitor, Period};
pub use params::LfocOnlineParams;
pub use sampling::{Point, Session, Step, StopReason};

use crate::controller::Controller;
use crate::error::PolicyError;
use crate::lfoc::{AppClass, Lfoc};

/// What online LFOC decided, and when.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The interval it was decided after (events: the next one's index).
    pub interval: u64,
    /// The machine's clock, in cycles.
    pub at_cycles: u64,
    /// The app concerned, if one is.
    pub app: Option<usize>,
    /// The decision.
    pub what: DecisionKind,
}

/// The kinds of [`Decision`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum DecisionKind {
    /// The app's warm-up is over: it waits to be sampled.
    WarmedUp,
    /// The app samples in a partition of `ways` ways.
    Sampling {
        /// Size of the sampling partition.
        ways: u32,
    },
    /// Sampling ended and gave the app a class.
    Classified {
        /// Its class (Table 1).
        class: AppClass,
        /// Why sampling stopped.
        stop: StopReason,
        /// The sizes measured.
        points: Vec<Point>,
        /// Smallest way count with slowdown at most `critical_slowdown`.
        critical_ways: u32,
    },
    /// The monitor signalled a likely class change: the app resamples.
    ClassChange {
        /// The heuristic and its figures.
        reason: String,
    },
    /// A sampling session ended without a class (the app finished).
    Aborted {
        /// Why.
        reason: String,
    },
    /// A new clustering was applied.
    Replan {
        /// The plan, as `Plan` prints it.
        plan: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
enum Phase {
    /// Not started yet.
    Waiting,
    /// Warming up: instructions left.
    WarmUp(f64),
    /// Waiting for the sampling partition.
    Queued,
    /// In the sampling partition.
    Sampling,
    /// Classified and monitored.
    Classified,
    /// Finished.
    Finished,
}

#[derive(Clone, Debug)]
struct AppState {
    phase: Phase,
    /// The last classification (kept while the app resamples).
    known: Option<(AppClass, AppCurves, u32)>,
    monitor: Monitor,
}

/// Online LFOC (see the module docs).
pub struct LfocOnline {
    params: LfocOnlineParams,
    ways: u32,
    apps: Vec<AppState>,
    queue: VecDeque<usize>,
    session: Option<Session>,
    current: Option<Plan>,
    last_repartition: u64,
    interval: u64,
    decisions: Vec<Decision>,
}

impl LfocOnline {
    /// Online LFOC for a mix of `n_apps` apps; `interval_cycles` (the
    /// machine's interval, when known) is checked against the
    /// repartitioning period.
    pub fn new(
        params: LfocOnlineParams,
        n_apps: usize,
        interval_cycles: Option<u64>,
    ) -> Result<LfocOnline, PolicyError> {
        params.check(interval_cycles)?;
        if n_apps == 0 {
            return Err(PolicyError::EmptyMix);
        }
        Ok(LfocOnline {
            params,
            ways: 0,
            apps: vec![
                AppState {
                    phase: Phase::Waiting,
                    known: None,
                    monitor: Monitor::default(),
                };
                n_apps
            ],
            queue: VecDeque::new(),
            session: None,
            current: None,
            last_repartition: 0,
            interval: 0,
            decisions: Vec::new(),
        })
    }

    /// Every decision so far, in order.
    pub fn decisions(&self) -> &[Decision] {
        &self.decisions
    }

    /// The parameters.
    pub fn params(&self) -> &LfocOnlineParams {
        &self.params
    }

    fn log(&mut self, at_cycles: u64, app: Option<usize>, what: DecisionKind) {
        self.decisions.push(Decision {
            interval: self.interval,
            at_cycles,
            app,
            what,
        });
    }

    fn warm_up(&mut self, app: usize) {
        let w = self.params.window_instructions * f64::from(self.params.warmup_windows);
        self.apps[app].phase = Phase::WarmUp(w);
        self.apps[app].monitor.reset();
        self.queue.retain(|&a| a != app);
    }

    /// Stops the session of `app`, if it is sampling.
    fn abort(&mut self, app: usize, at: u64, reason: &str) -> Vec<Action> {
        if self.session.as_ref().is_some_and(|s| s.app == app) {
            self.session = None;
            self.log(
                at,
                Some(app),
                DecisionKind::Aborted {
                    reason: reason.into(),
                },
            );
            return self.replan(at);
        }
        Vec::new()
    }

    /// LFOC's clustering over what is known now (unclassified apps count
    /// as light), applied when it differs from the plan in force.
    fn replan(&mut self, at: u64) -> Vec<Action> {
        let flat = AppCurves::new(
            "unclassified",
            vec![1.0; self.ways as usize],
            vec![0.0; self.ways as usize],
            vec![0.0; self.ways as usize],
            vec![0.0; self.ways as usize],
        );
        let (curves, classes): (Vec<AppCurves>, Vec<AppClass>) = self
            .apps
            .iter()
            .map(|a| match (&a.phase, &a.known) {
                (Phase::Finished, _) | (_, None) => (flat.clone(), AppClass::Light),
                (_, Some((class, c, _))) => (c.clone(), *class),
            })
            .unzip();
        let plan = match self.params.lfoc.plan_for(&curves, &classes, self.ways) {
            Ok(p) => p,
            Err(_) => return Vec::new(),
        };
        self.last_repartition = at;
        if self.current.as_ref() == Some(&plan) {
            return Vec::new();
        }
        self.log(
            at,
            None,
            DecisionKind::Replan {
                plan: plan.to_string(),
            },
        );
        self.current = Some(plan.clone());
        vec![Action::Apply(plan)]
    }

    /// Starts the next queued app's sampling, if the partition is free.
    fn next_session(&mut self, at: u64) -> Vec<Action> {
        if self.session.is_some() {
            return Vec::new();
        }
        while let Some(app) = self.queue.pop_front() {
            if self.apps[app].phase != Phase::Queued {
                continue;
            }
            self.apps[app].phase = Phase::Sampling;
            let s = Session::new(app);
            let plan = s.plan(self.apps.len(), self.ways);
            self.log(at, Some(app), DecisionKind::Sampling { ways: s.ways });
            self.session = Some(s);
            self.current = Some(plan.clone());
            return vec![Action::Apply(plan)];
        }
        Vec::new()
    }

    fn finish_session(&mut self, s: Session, stop: StopReason, at: u64) {
        let curves = s.curves(&format!("app{}", s.app), self.ways);
        let class = self.params.lfoc.classify_app(&curves).class;
        let critical = curves
            .slowdown
            .iter()
            .position(|&sd| sd <= self.params.critical_slowdown)
            .map_or(self.ways, |i| i as u32 + 1);
        self.log(
            at,
            Some(s.app),
            DecisionKind::Classified {
                class,
                stop,
                points: s.points.clone(),
                critical_ways: critical,
            },
        );
        let a = &mut self.apps[s.app];
        a.known = Some((class, curves, critical));
        a.phase = Phase::Classified;
        a.monitor.reset();
    }
}

impl Controller for LfocOnline {
    fn name(&self) -> &str {
        "lfoc-online"
    }

    fn start(&mut self, machine: &mut dyn Machine) -> Result<Vec<Action>, PolicyError> {
        self.ways = machine.platform().ways;
        if self.ways == 0 {
            return Err(PolicyError::MissingData {
                policy: "lfoc-online".into(),
                what: "a platform with LLC ways".into(),
            });
        }
        let plan = Plan::shared_all(self.apps.len(), self.ways);
        self.current = Some(plan.clone());
        Ok(vec![Action::Apply(plan)])
    }

    fn on_event(&mut self, e: &AppEvent) -> Result<Vec<Action>, PolicyError> {
        if e.app >= self.apps.len() {
            return Ok(Vec::new());
        }
        Ok(match e.kind {
            EventKind::Started if self.apps[e.app].phase == Phase::Waiting => {
                self.warm_up(e.app);
                Vec::new()
            }
            EventKind::Finished => {
                self.apps[e.app].phase = Phase::Finished;
                self.queue.retain(|&a| a != e.app);
                self.abort(e.app, e.at_cycles, "finished")
            }
            _ => Vec::new(),
        })
    }

    fn on_interval(&mut self, iv: &Interval) -> Result<Vec<Action>, PolicyError> {
        self.interval = iv.index;
        let at = iv.end_cycles;
        let mut actions = Vec::new();
        let mut sampled = false;
        for s in &iv.samples {
            let Some(app) = self.apps.get(s.app).map(|_| s.app) else {
                continue;
            };
            match self.apps[app].phase.clone() {
                Phase::Waiting if s.ran => {
                    self.warm_up(app);
                    if let Phase::WarmUp(left) = &mut self.apps[app].phase {
                        *left -= s.instructions;
                    }
                }
                Phase::WarmUp(left) if s.ran => {
                    let left = left - s.instructions;
                    if left <= 0.0 {
                        self.apps[app].phase = Phase::Queued;
                        self.queue.push_back(app);
                        self.log(at, Some(app), DecisionKind::WarmedUp);
                    } else {
                        self.apps[app].phase = Phase::WarmUp(left);
                    }
                }
                Phase::Sampling => {
                    let Some(mut session) = self.session.take() else {
                        continue;
                    };
                    match session.observe(s, &self.params, self.apps.len(), self.ways) {
                        Step::Measuring => self.session = Some(session),
                        Step::Grow(ways) => {
                            let plan = session.plan(self.apps.len(), self.ways);
                            self.log(at, Some(app), DecisionKind::Sampling { ways });
                            self.current = Some(plan.clone());
                            actions.push(Action::Apply(plan));
                            self.session = Some(session);
                        }
                        Step::Done(stop) => {
                            self.finish_session(session, stop, at);
                            sampled = true;
                        }
                    }
                }
                // a monitoring period ended: check the class-change heuristics
                Phase::Classified if self.apps[app].monitor.observe(s, &self.params) => {
                    let Some((class, _, critical)) = self.apps[app].known.clone() else {
                        continue;
                    };
                    let change = self.apps[app]
                        .monitor
                        .class_change(class, critical, &self.params);
                    if let Some(reason) = change {
                        self.log(at, Some(app), DecisionKind::ClassChange { reason });
                        self.apps[app].phase = Phase::Queued;
                        self.queue.push_back(app);
                    }
                }
                _ => {}
            }
        }
        actions.extend(self.next_session(at));
        if self.session.is_none()
            && (sampled
                || at.saturating_sub(self.last_repartition) >= self.params.repartition_cycles)
        {
            actions.extend(self.replan(at));
        }
        Ok(actions)
    }
}

/// Online LFOC under a preset's clustering, with the paper's other
/// defaults.
pub fn with_lfoc(lfoc: Lfoc) -> LfocOnlineParams {
    LfocOnlineParams {
        high_threshold: lfoc.streaming_min_llcmpkc,
        lfoc,
        ..LfocOnlineParams::default()
    }
}

#[cfg(test)]
mod tests;
