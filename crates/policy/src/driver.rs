//! The one loop that runs any [`Controller`] on any [`Machine`].
//!
//! [`drive`] starts the controller and carries out its first actions, then
//! runs intervals until the machine is done (or a number of intervals has
//! run): during each interval, events that need an answer at once go to
//! [`Controller::on_event`] and the machine carries out the answer; after
//! it, the interval's other events go to [`Controller::on_event`] in
//! order, then the interval to [`Controller::on_interval`], and their
//! actions are carried out one by one, each [`Effect`] reported back to
//! the controller. Every action is logged in the [`RunLog`] with what
//! caused it.

use cachepart_machine::{Action, AppEvent, Effect, EventKind, Interval, Machine, MachineError};
use serde::Serialize;
use thiserror::Error;

use crate::controller::Controller;
use crate::error::PolicyError;

/// What the observer of [`drive`] wants after an interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Go on.
    Continue,
    /// Stop now (after the controller has seen the interval).
    Stop,
}

/// When [`drive`] stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// When the machine says every app is done.
    WhenDone,
    /// After this many intervals, or earlier when the machine is done.
    After(u64),
}

/// What caused an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "cause")]
pub enum Cause {
    /// The controller's start.
    Start,
    /// An app event.
    Event {
        /// The event.
        event: AppEvent,
    },
    /// The end of an interval.
    Interval,
}

/// One action carried out, with its cause and effect.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LoggedAction {
    /// The interval it was taken in or after (0-based); during the start,
    /// 0.
    pub interval: u64,
    /// What caused it.
    pub cause: Cause,
    /// The action.
    pub action: Action,
    /// What it did (zero for actions the machine carried out during an
    /// interval).
    pub effect: Effect,
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunLog {
    /// Intervals run.
    pub intervals: u64,
    /// The machine's clock at the end, in cycles.
    pub end_cycles: u64,
    /// Every action carried out, in order.
    pub actions: Vec<LoggedAction>,
}

/// Why a run stopped early.
#[derive(Debug, Error)]
pub enum DriveError {
    /// The controller failed.
    #[error("{controller}: {source}")]
    Controller {
        /// The controller's name.
        controller: String,
        /// Its error.
        source: PolicyError,
    },
    /// The machine refused an action of the controller's.
    #[error("{controller} asked for {action}: {source}")]
    Action {
        /// The controller's name.
        controller: String,
        /// The action's kind.
        action: &'static str,
        /// The machine's refusal.
        source: MachineError,
    },
    /// The machine failed while running an interval.
    #[error(transparent)]
    Machine(MachineError),
}

impl DriveError {
    /// The machine error behind this one, if any.
    pub fn machine_error(&self) -> Option<&MachineError> {
        match self {
            DriveError::Action { source, .. } | DriveError::Machine(source) => Some(source),
            DriveError::Controller {
                source: PolicyError::Machine(m),
                ..
            } => Some(m),
            DriveError::Controller { .. } => None,
        }
    }
}

struct Run<'a> {
    machine: &'a mut dyn Machine,
    ctl: &'a mut dyn Controller,
    log: RunLog,
}

impl Run<'_> {
    fn ctl_err(&self, source: PolicyError) -> DriveError {
        DriveError::Controller {
            controller: self.ctl.name().to_string(),
            source,
        }
    }

    fn carry_out(
        &mut self,
        interval: u64,
        cause: Cause,
        actions: Vec<Action>,
    ) -> Result<(), DriveError> {
        for action in actions {
            let effect = self
                .machine
                .act(&action)
                .map_err(|source| DriveError::Action {
                    controller: self.ctl.name().to_string(),
                    action: action.kind(),
                    source,
                })?;
            self.ctl.applied(&action, &effect);
            self.log.actions.push(LoggedAction {
                interval,
                cause,
                action,
                effect,
            });
        }
        Ok(())
    }

    fn interval(&mut self, observe: &mut dyn FnMut(&Interval) -> Flow) -> Result<Flow, DriveError> {
        let index = self.log.intervals;
        let mut failed: Option<PolicyError> = None;
        let mut answered: Vec<(AppEvent, Vec<Action>)> = Vec::new();
        let ctl = &mut *self.ctl;
        let mut respond = |e: &AppEvent| -> Vec<Action> {
            if failed.is_some() {
                return Vec::new();
            }
            match ctl.on_event(e) {
                Ok(actions) => {
                    answered.push((*e, actions.clone()));
                    actions
                }
                Err(err) => {
                    failed = Some(err);
                    Vec::new()
                }
            }
        };
        let result = self.machine.run_interval(&mut respond);
        if let Some(err) = failed {
            return Err(self.ctl_err(err));
        }
        let interval = result.map_err(DriveError::Machine)?;
        for (event, actions) in answered {
            for action in actions {
                self.log.actions.push(LoggedAction {
                    interval: index,
                    cause: Cause::Event { event },
                    action,
                    effect: Effect::default(),
                });
            }
        }
        self.log.intervals += 1;
        self.log.end_cycles = interval.end_cycles;
        let flow = observe(&interval);
        for event in &interval.events {
            if event.kind == EventKind::ColorsExhausted {
                continue; // answered while the interval ran
            }
            let actions = self.ctl.on_event(event).map_err(|e| self.ctl_err(e))?;
            self.carry_out(index, Cause::Event { event: *event }, actions)?;
        }
        let actions = self
            .ctl
            .on_interval(&interval)
            .map_err(|e| self.ctl_err(e))?;
        self.carry_out(index, Cause::Interval, actions)?;
        Ok(flow)
    }
}

/// Runs `controller` on `machine` until `stop` (or until `observe`, handed
/// every interval after the machine ran it and before the controller sees
/// it, answers [`Flow::Stop`]).
pub fn drive(
    machine: &mut dyn Machine,
    controller: &mut dyn Controller,
    stop: Stop,
    observe: &mut dyn FnMut(&Interval) -> Flow,
) -> Result<RunLog, DriveError> {
    let mut run = Run {
        machine,
        ctl: controller,
        log: RunLog::default(),
    };
    let first = run.ctl.start(run.machine).map_err(|e| run.ctl_err(e))?;
    run.carry_out(0, Cause::Start, first)?;
    loop {
        if run.machine.is_done() {
            break;
        }
        if let Stop::After(n) = stop {
            if run.log.intervals >= n {
                break;
            }
        }
        if run.interval(observe)? == Flow::Stop {
            break;
        }
    }
    Ok(run.log)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::Static;
    use crate::EqualPart;
    use cachepart_machine::{Plan, Sample};
    use cachepart_testkit::{curves_from_ipc, FixedMachine};

    /// A machine of two apps that finishes after `len` intervals, runs
    /// out of colors for app 1 in interval 1, and records what it was
    /// asked to do.
    struct Script {
        inner: FixedMachine,
        len: u64,
        done: u64,
        applied: Vec<Action>,
        answered: Vec<Vec<Action>>,
    }

    impl Machine for Script {
        fn platform(&self) -> &cachepart_machine::Platform {
            self.inner.platform()
        }
        fn alone_curves_on(
            &mut self,
            axis: &cachepart_machine::Axis,
        ) -> Result<&[cachepart_machine::AppCurves], MachineError> {
            self.inner.alone_curves_on(axis)
        }
        fn apply(&mut self, plan: &Plan) -> Result<(), MachineError> {
            self.applied.push(Action::Apply(plan.clone()));
            Ok(())
        }
        fn act(&mut self, action: &Action) -> Result<Effect, MachineError> {
            if let Action::Place { .. } = action {
                return Err(MachineError::Unsupported("place".into()));
            }
            self.applied.push(action.clone());
            Ok(Effect {
                pages_moved: 3,
                pages_marked: 0,
            })
        }
        fn run_interval(
            &mut self,
            respond: cachepart_machine::Responder<'_>,
        ) -> Result<Interval, MachineError> {
            let index = self.done;
            let mut events = Vec::new();
            if index == 1 {
                let e = AppEvent {
                    app: 1,
                    kind: EventKind::ColorsExhausted,
                    at_cycles: 150,
                    core: Some(1),
                };
                self.answered.push(respond(&e));
                events.push(e);
            }
            if index + 1 == self.len {
                events.push(AppEvent {
                    app: 0,
                    kind: EventKind::Finished,
                    at_cycles: 190,
                    core: Some(0),
                });
            }
            self.done += 1;
            Ok(Interval {
                index,
                end_cycles: self.done * 100,
                samples: (0..2)
                    .map(|app| Sample {
                        app,
                        ran: true,
                        ..Sample::default()
                    })
                    .collect(),
                events,
            })
        }
        fn is_done(&self) -> bool {
            self.done >= self.len
        }
    }

    fn script(len: u64) -> Script {
        let c = curves_from_ipc("a", &[1.0, 2.0, 3.0, 4.0], &[4.0, 3.0, 2.0, 1.0]);
        Script {
            inner: FixedMachine::new(vec![c.clone(), c], 4),
            len,
            done: 0,
            applied: Vec::new(),
            answered: Vec::new(),
        }
    }

    /// Recolors app 1 when its colors run out, and after every interval
    /// where app 0 finished, logs what it saw.
    #[derive(Default)]
    struct Watcher {
        seen: Vec<String>,
        effects: Vec<Effect>,
    }

    impl Controller for Watcher {
        fn name(&self) -> &str {
            "watcher"
        }
        fn start(&mut self, _: &mut dyn Machine) -> Result<Vec<Action>, PolicyError> {
            self.seen.push("start".into());
            Ok(vec![Action::Apply(Plan::from_way_counts(&[2, 2]))])
        }
        fn on_event(&mut self, e: &AppEvent) -> Result<Vec<Action>, PolicyError> {
            self.seen.push(format!("{:?} {}", e.kind, e.app));
            Ok(match e.kind {
                EventKind::ColorsExhausted => vec![Action::Recolor {
                    app: e.app,
                    colors: "0-5".parse().unwrap(),
                }],
                EventKind::Finished => vec![Action::Recolor {
                    app: 1,
                    colors: "0-7".parse().unwrap(),
                }],
                _ => Vec::new(),
            })
        }
        fn on_interval(&mut self, i: &Interval) -> Result<Vec<Action>, PolicyError> {
            self.seen.push(format!("interval {}", i.index));
            Ok(Vec::new())
        }
        fn applied(&mut self, _: &Action, effect: &Effect) {
            self.effects.push(*effect);
        }
    }

    #[test]
    fn the_loop_calls_the_controller_in_order_and_logs_every_action() {
        let mut m = script(3);
        let mut w = Watcher::default();
        let mut observed = Vec::new();
        let log = drive(&mut m, &mut w, Stop::WhenDone, &mut |i| {
            observed.push(i.index);
            Flow::Continue
        })
        .unwrap();
        assert_eq!(observed, vec![0, 1, 2]);
        assert_eq!((log.intervals, log.end_cycles), (3, 300));
        assert_eq!(
            w.seen,
            vec![
                "start",
                "interval 0",
                "ColorsExhausted 1",
                "interval 1",
                "Finished 0",
                "interval 2"
            ]
        );
        // The answer to the exhaustion went to the machine during the
        // interval; the answer to the finish after it, through `act`.
        assert_eq!(m.answered.len(), 1);
        assert_eq!(m.applied.len(), 2, "{:?}", m.applied);
        assert_eq!(w.effects.len(), 2, "start plan and the recolor");
        let causes: Vec<(u64, &str)> = log
            .actions
            .iter()
            .map(|a| {
                (
                    a.interval,
                    match a.cause {
                        Cause::Start => "start",
                        Cause::Event { .. } => "event",
                        Cause::Interval => "interval",
                    },
                )
            })
            .collect();
        assert_eq!(causes, vec![(0, "start"), (1, "event"), (2, "event")]);
        assert_eq!(log.actions[2].effect.pages_moved, 3);
    }

    #[test]
    fn stop_after_and_refusals() {
        let mut m = script(10);
        let mut ctl = Static::new(Box::new(EqualPart));
        let log = drive(&mut m, &mut ctl, Stop::After(4), &mut |_| Flow::Continue).unwrap();
        assert_eq!(log.intervals, 4);
        assert_eq!(
            m.applied,
            vec![Action::Apply(Plan::from_way_counts(&[2, 2]))]
        );
        let mut m = script(10);
        let log = drive(&mut m, &mut ctl, Stop::WhenDone, &mut |i| {
            if i.index == 1 {
                Flow::Stop
            } else {
                Flow::Continue
            }
        })
        .unwrap();
        assert_eq!(log.intervals, 2);

        struct Placer;
        impl Controller for Placer {
            fn name(&self) -> &str {
                "placer"
            }
            fn start(&mut self, _: &mut dyn Machine) -> Result<Vec<Action>, PolicyError> {
                Ok(vec![Action::Place { app: 0, core: 1 }])
            }
        }
        let e = drive(&mut script(2), &mut Placer, Stop::WhenDone, &mut |_| {
            Flow::Continue
        })
        .unwrap_err();
        assert!(
            matches!(
                e,
                DriveError::Action {
                    action: "place",
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().starts_with("placer asked for place"), "{e}");
    }
}
