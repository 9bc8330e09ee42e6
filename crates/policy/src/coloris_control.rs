//! COLORIS as a controller on the loop (Ye et al., PACT'14): the Page
//! Color Manager's static sections at the start and, when dynamic, its
//! Cache Utilization Monitor every `PERIOD` and ALLOC_COLORS when an app's
//! colors run out.
//!
//! * **Start.** Each app, in mix order, gets the whole section of its core
//!   ([`ColorManager::add_app`]); an app without a pinned core is placed on
//!   the least loaded core ([`Action::Place`]).
//! * **Who is judged.** The paper's MONITOR acts on `current`, the process
//!   running on the core when the period ends. The controller follows
//!   each core's current app from the machine's events (started and
//!   resumed make it current, parked and finished end that), and at the
//!   end of each period judges only those, with their LLC references and
//!   misses over the period. An app parked by time slicing is not judged
//!   cold; a core running nothing is skipped.
//! * **Order.** The cores' monitors fire at the same period end; they are
//!   taken core by core, starting one core further on each period, so no
//!   core (and no app, through the global `is_hot` flag) always goes
//!   first.
//! * **Finish.** An app that finished releases its colors to the manager
//!   ([`ColorManager::remove_app`]), logged when dynamic.
//! * **Exhaustion.** An app whose colors have no free frame gets `UNIT`
//!   more (ALLOC_COLORS) at once; with none left the run fails.
//!
//! Every decision is logged ([`ColorDecision`]) with the pages the machine
//! moved or marked for it.

use cachepart_machine::{Action, AppEvent, Effect, EventKind, Interval, Machine, Plan};
use cachepart_units::IdSet;
use serde::Serialize;

use crate::coloris::{ColorManager, ColorisConfig, Thresholds};
use crate::controller::Controller;
use crate::error::PolicyError;

/// How a COLORIS controller is set up.
#[derive(Clone, Debug, PartialEq)]
pub struct ColorisSetup {
    /// The manager's configuration (colors, cores, UNIT, thresholds).
    pub config: ColorisConfig,
    /// Per app, in mix order: its pinned core (`None`: the manager places
    /// it) and its own thresholds (`None`: the global ones).
    pub apps: Vec<(Option<u32>, Option<Thresholds>)>,
    /// Run the monitor (coloris-dynamic) or only the static sections.
    pub dynamic: bool,
    /// Intervals per monitor period (PERIOD).
    pub period_intervals: u64,
}

/// Why the controller changed an app's colors.
#[cachepart_units::kind]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DecisionReason {
    /// The monitor (Algorithm 1).
    Monitor,
    /// Its colors ran out (ALLOC_COLORS).
    Exhausted,
    /// It finished and released its colors.
    Finished,
}

/// One call of the manager, in order: a monitor call with its inputs or an
/// ALLOC_COLORS on exhaustion, and what it changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ColorDecision {
    /// The interval it was taken in (exhaustion) or after (monitor).
    pub interval: u64,
    /// The app.
    pub app: usize,
    /// Why.
    pub reason: DecisionReason,
    /// LLC references of the period (monitor).
    pub references: u64,
    /// LLC misses of the period (monitor).
    pub misses: u64,
    /// Colors added.
    pub added: IdSet,
    /// Colors removed.
    pub removed: IdSet,
    /// Its colors afterwards.
    pub colors: IdSet,
    /// Pages the machine moved at once.
    pub pages_moved: u64,
    /// Pages the machine marked for lazy moves.
    pub pages_marked: u64,
}

impl ColorDecision {
    /// Whether it changed the app's colors.
    pub fn changed(&self) -> bool {
        !self.added.is_empty() || !self.removed.is_empty()
    }
}

/// COLORIS on the controller loop.
pub struct ColorisControl {
    setup: ColorisSetup,
    manager: ColorManager,
    initial: Vec<IdSet>,
    /// The interval now running.
    interval: u64,
    /// Per app: LLC references and misses of the period so far.
    acc: Vec<(u64, u64)>,
    in_period: u64,
    periods: u64,
    /// Per core: the app running there.
    current: Vec<Option<usize>>,
    decisions: Vec<ColorDecision>,
    /// Decisions whose recoloring the machine has not reported yet.
    awaiting: std::collections::VecDeque<usize>,
}

impl ColorisControl {
    /// A controller for `setup`; fails on bad parameters.
    pub fn new(setup: ColorisSetup) -> Result<ColorisControl, PolicyError> {
        let manager = ColorManager::new(setup.config)?;
        if setup.period_intervals == 0 {
            return Err(PolicyError::BadParameter {
                policy: "coloris".into(),
                name: "period-intervals".into(),
                value: "0".into(),
                expected: "at least 1".into(),
            });
        }
        let n = setup.apps.len();
        let cores = setup.config.cores as usize;
        Ok(ColorisControl {
            setup,
            manager,
            initial: Vec::new(),
            interval: 0,
            acc: vec![(0, 0); n],
            in_period: 0,
            periods: 0,
            current: vec![None; cores],
            decisions: Vec::new(),
            awaiting: Default::default(),
        })
    }

    /// Each app's colors at the start.
    pub fn initial(&self) -> &[IdSet] {
        &self.initial
    }

    /// Every decision taken, in order.
    pub fn decisions(&self) -> &[ColorDecision] {
        &self.decisions
    }

    /// The manager (colors each app owns now).
    pub fn manager(&self) -> &ColorManager {
        &self.manager
    }

    fn decide(
        &mut self,
        app: usize,
        reason: DecisionReason,
        counts: (u64, u64),
        added: IdSet,
        removed: IdSet,
    ) -> Option<Action> {
        let colors = self.manager.colors_of(app);
        let d = ColorDecision {
            interval: self.interval,
            app,
            reason,
            references: counts.0,
            misses: counts.1,
            added,
            removed,
            colors: colors.clone(),
            pages_moved: 0,
            pages_marked: 0,
        };
        let changed = d.changed();
        self.decisions.push(d);
        changed.then_some(Action::Recolor { app, colors })
    }
}

impl Controller for ColorisControl {
    fn name(&self) -> &str {
        if self.setup.dynamic {
            "coloris-dynamic"
        } else {
            "coloris-static"
        }
    }

    fn start(&mut self, _machine: &mut dyn Machine) -> Result<Vec<Action>, PolicyError> {
        let mut actions = Vec::new();
        let mut colors = Vec::with_capacity(self.setup.apps.len());
        for (app, &(pinned, thresholds)) in self.setup.apps.iter().enumerate() {
            let (core, set) = self.manager.add_app(pinned, thresholds)?;
            if pinned.is_none() {
                actions.push(Action::Place { app, core });
            }
            colors.push(set);
        }
        self.initial = colors.clone();
        actions.push(Action::Apply(Plan::from_colors(colors)));
        Ok(actions)
    }

    fn on_event(&mut self, e: &AppEvent) -> Result<Vec<Action>, PolicyError> {
        let core = e.core.map(|c| c as usize);
        let slot = core.and_then(|c| self.current.get_mut(c));
        match e.kind {
            EventKind::Started | EventKind::Resumed => {
                if let Some(s) = slot {
                    *s = Some(e.app);
                }
            }
            EventKind::Parked | EventKind::Finished => {
                if let Some(s) = slot {
                    if *s == Some(e.app) {
                        *s = None;
                    }
                }
                if e.kind == EventKind::Finished && !self.manager.is_removed(e.app) {
                    let held = self.manager.remove_app(e.app)?;
                    // The machine releases its frames; nothing to carry
                    // out. Static sections never change: nothing to log.
                    if !self.setup.dynamic {
                        return Ok(Vec::new());
                    }
                    let _ =
                        self.decide(e.app, DecisionReason::Finished, (0, 0), IdSet::new(), held);
                }
            }
            EventKind::Restarted => {}
            EventKind::ColorsExhausted => {
                if self.manager.is_removed(e.app) {
                    return Ok(Vec::new());
                }
                let unit = self.setup.config.unit;
                let added = self.manager.alloc_colors(e.app, unit)?;
                let action = self.decide(
                    e.app,
                    DecisionReason::Exhausted,
                    (0, 0),
                    added,
                    IdSet::new(),
                );
                return Ok(action.into_iter().collect());
            }
        }
        Ok(Vec::new())
    }

    fn on_interval(&mut self, interval: &Interval) -> Result<Vec<Action>, PolicyError> {
        let index = interval.index;
        self.interval = index + 1;
        if !self.setup.dynamic {
            return Ok(Vec::new());
        }
        for s in &interval.samples {
            if let Some(a) = self.acc.get_mut(s.app) {
                a.0 += s.llc_references.round() as u64;
                a.1 += s.llc_misses.round() as u64;
            }
        }
        self.in_period += 1;
        if self.in_period < self.setup.period_intervals {
            return Ok(Vec::new());
        }
        self.in_period = 0;
        let acc = std::mem::replace(&mut self.acc, vec![(0, 0); self.setup.apps.len()]);
        let cores = self.current.len();
        let first = (self.periods % cores.max(1) as u64) as usize;
        self.periods += 1;
        let mut actions = Vec::new();
        // Decisions belong to the interval just ended.
        self.interval = index;
        for k in 0..cores {
            let Some(app) = self.current[(first + k) % cores] else {
                continue;
            };
            if self.manager.is_removed(app) {
                continue;
            }
            let (references, misses) = acc.get(app).copied().unwrap_or((0, 0));
            let change = self.manager.monitor(app, references, misses)?;
            if let Some(a) = self.decide(
                app,
                DecisionReason::Monitor,
                (references, misses),
                change.added,
                change.removed,
            ) {
                self.awaiting.push_back(self.decisions.len() - 1);
                actions.push(a);
            }
        }
        self.interval = index + 1;
        Ok(actions)
    }

    fn applied(&mut self, action: &Action, effect: &Effect) {
        if let Action::Recolor { .. } = action {
            if let Some(i) = self.awaiting.pop_front() {
                self.decisions[i].pages_moved = effect.pages_moved;
                self.decisions[i].pages_marked = effect.pages_marked;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_machine::Sample;

    fn setup(dynamic: bool, apps: usize) -> ColorisSetup {
        ColorisSetup {
            config: ColorisConfig {
                colors: 8,
                cores: 2,
                unit: 1,
                thresholds: Thresholds {
                    low: 0.1,
                    high: 0.5,
                },
                min_references: 0,
            },
            apps: vec![(None, None); apps],
            dynamic,
            period_intervals: 1,
        }
    }

    fn ev(app: usize, kind: EventKind, core: u32) -> AppEvent {
        AppEvent {
            app,
            kind,
            at_cycles: 0,
            core: Some(core),
        }
    }

    fn interval(index: u64, counts: &[(f64, f64)]) -> Interval {
        Interval {
            index,
            end_cycles: (index + 1) * 100,
            samples: counts
                .iter()
                .enumerate()
                .map(|(app, &(r, m))| Sample {
                    app,
                    llc_references: r,
                    llc_misses: m,
                    ran: r > 0.0,
                    ..Sample::default()
                })
                .collect(),
            events: Vec::new(),
        }
    }

    struct NoMachine(cachepart_machine::Platform);
    impl Machine for NoMachine {
        fn platform(&self) -> &cachepart_machine::Platform {
            &self.0
        }
        fn alone_curves_on(
            &mut self,
            _: &cachepart_machine::Axis,
        ) -> Result<&[cachepart_machine::AppCurves], cachepart_machine::MachineError> {
            unreachable!("COLORIS needs no alone curves")
        }
        fn apply(&mut self, _: &Plan) -> Result<(), cachepart_machine::MachineError> {
            Ok(())
        }
        fn run_interval(
            &mut self,
            _: cachepart_machine::Responder<'_>,
        ) -> Result<Interval, cachepart_machine::MachineError> {
            unreachable!()
        }
    }

    fn started(dynamic: bool, apps: usize) -> (ColorisControl, Vec<Action>) {
        let mut c = ColorisControl::new(setup(dynamic, apps)).unwrap();
        let mut m = NoMachine(cachepart_machine::Platform::with_ways("t", 8));
        let a = c.start(&mut m).unwrap();
        (c, a)
    }

    #[test]
    fn start_places_and_colors_by_sections() {
        let (c, actions) = started(false, 3);
        assert_eq!(
            actions[..3],
            [
                Action::Place { app: 0, core: 0 },
                Action::Place { app: 1, core: 1 },
                Action::Place { app: 2, core: 0 },
            ]
        );
        let Action::Apply(plan) = &actions[3] else {
            panic!("{actions:?}")
        };
        let colors: Vec<String> = plan.colors.iter().map(|c| c.colors.to_string()).collect();
        assert_eq!(colors, vec!["0-3", "4-7", "0-3"]);
        assert_eq!(c.name(), "coloris-static");
    }

    #[test]
    fn a_parked_app_is_not_judged_cold() {
        // Apps 0 and 2 share core 0; app 1 is alone on core 1.
        let (mut c, _) = started(true, 3);
        for e in [ev(0, EventKind::Started, 0), ev(1, EventKind::Started, 1)] {
            c.on_event(&e).unwrap();
        }
        // App 1 is hot: raises is_hot. App 0 runs; app 2 (parked, no
        // references) must not be judged.
        let a = c
            .on_interval(&interval(0, &[(1000.0, 50.0), (1000.0, 900.0), (0.0, 0.0)]))
            .unwrap();
        assert!(a.is_empty());
        assert!(c.manager().is_hot());
        let judged: Vec<usize> = c.decisions().iter().map(|d| d.app).collect();
        assert!(!judged.contains(&2), "{judged:?}");
        // App 0 is parked, app 2 resumes: now app 2 is judged, app 0 not.
        c.on_event(&ev(0, EventKind::Parked, 0)).unwrap();
        c.on_event(&ev(2, EventKind::Started, 0)).unwrap();
        c.on_interval(&interval(1, &[(0.0, 0.0), (1000.0, 900.0), (1000.0, 10.0)]))
            .unwrap();
        let last: Vec<usize> = c.decisions()[2..].iter().map(|d| d.app).collect();
        assert!(last.contains(&2) && !last.contains(&0), "{last:?}");
        // App 2 was cold while app 1 was hot: it gave a color up.
        let gave = c.decisions().iter().find(|d| d.app == 2).unwrap();
        assert_eq!(gave.removed.len(), 1, "{gave:?}");
    }

    #[test]
    fn monitors_rotate_over_cores() {
        let (mut c, _) = started(true, 2);
        c.on_event(&ev(0, EventKind::Started, 0)).unwrap();
        c.on_event(&ev(1, EventKind::Started, 1)).unwrap();
        let quiet = [(1000.0, 200.0), (1000.0, 200.0)];
        c.on_interval(&interval(0, &quiet)).unwrap();
        c.on_interval(&interval(1, &quiet)).unwrap();
        let order: Vec<usize> = c.decisions().iter().map(|d| d.app).collect();
        assert_eq!(order, vec![0, 1, 1, 0]);
    }

    #[test]
    fn a_finished_app_releases_its_colors() {
        let (mut c, _) = started(true, 3);
        assert_eq!(c.manager().hotness(0), 2);
        c.on_event(&ev(2, EventKind::Started, 0)).unwrap();
        c.on_event(&ev(2, EventKind::Finished, 0)).unwrap();
        assert_eq!(c.manager().hotness(0), 1);
        assert!(c.manager().is_removed(2));
        let d = &c.decisions()[0];
        assert_eq!(
            (d.reason, d.removed.to_string(), d.colors.is_empty()),
            (DecisionReason::Finished, "0-3".into(), true)
        );
        // Not judged any more, and an exhaustion of it asks nothing.
        c.on_interval(&interval(0, &[(0.0, 0.0), (0.0, 0.0), (10.0, 10.0)]))
            .unwrap();
        assert!(c
            .decisions()
            .iter()
            .all(|d| d.app != 2 || d.reason == DecisionReason::Finished));
        assert!(c
            .on_event(&ev(2, EventKind::ColorsExhausted, 0))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn exhaustion_gives_unit_colors_at_once() {
        let (mut c, _) = started(true, 2);
        let a = c.on_event(&ev(0, EventKind::ColorsExhausted, 0)).unwrap();
        let [Action::Recolor { app: 0, colors }] = &a[..] else {
            panic!("{a:?}")
        };
        assert_eq!(colors.len(), 5);
        assert_eq!(c.decisions()[0].reason, DecisionReason::Exhausted);
    }

    #[test]
    fn effects_fill_the_decisions_in_order() {
        let (mut c, _) = started(true, 2);
        c.on_event(&ev(0, EventKind::Started, 0)).unwrap();
        c.on_event(&ev(1, EventKind::Started, 1)).unwrap();
        // Period 1: app 1 hot (is_hot). Period 2 (core 1 first): app 1
        // hot again, app 0 cold gives a color. Period 3 (core 0 first):
        // app 0 normal, app 1 hot takes one (is_cold was set).
        let counts = [(1000.0, 200.0), (1000.0, 900.0)];
        c.on_interval(&interval(0, &counts)).unwrap();
        let cold = [(1000.0, 10.0), (1000.0, 900.0)];
        let a = c.on_interval(&interval(1, &cold)).unwrap();
        assert_eq!(a.len(), 1, "{a:?}");
        c.applied(
            &a[0],
            &Effect {
                pages_moved: 0,
                pages_marked: 7,
            },
        );
        let a = c.on_interval(&interval(2, &counts)).unwrap();
        assert_eq!(a.len(), 1, "{a:?}");
        c.applied(
            &a[0],
            &Effect {
                pages_moved: 4,
                pages_marked: 0,
            },
        );
        let changed: Vec<(usize, u64, u64)> = c
            .decisions()
            .iter()
            .filter(|d| d.changed())
            .map(|d| (d.app, d.pages_moved, d.pages_marked))
            .collect();
        assert_eq!(changed, vec![(0, 0, 7), (1, 4, 0)]);
    }
}
