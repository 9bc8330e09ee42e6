//! The controller interface: a policy that acts while the mix runs.
//!
//! A [`Controller`] is started with the machine (the platform, the mix's
//! alone curves if it wants them) and answers with its first actions; it is
//! told of every app event (started, finished, restarted, parked,
//! resumed, colors exhausted), handed every interval's samples, and may
//! answer each with more actions (a new plan of cluster way masks, per-app
//! color sets, a recoloring). [`crate::driver::drive`] runs any controller
//! on any [`Machine`].
//!
//! A static [`Policy`] is a controller that plans once: [`Static`].

use cachepart_machine::{Action, AppEvent, Effect, Interval, Machine};

use crate::error::PolicyError;
use crate::Policy;

/// A policy that acts online.
///
/// Every method but [`Controller::name`] and [`Controller::start`] has a
/// default that does nothing, so a controller implements only what it
/// reacts to.
pub trait Controller: Send {
    /// Kebab-case name (`lfoc`, `coloris-dynamic`, ...).
    fn name(&self) -> &str;

    /// Called once, before the first interval: the first actions (a plan,
    /// placements). The controller may read the platform and the alone
    /// curves of `machine`.
    fn start(&mut self, machine: &mut dyn Machine) -> Result<Vec<Action>, PolicyError>;

    /// An app event. Events that need an answer at once (colors
    /// exhausted) come while the interval runs; the others after it,
    /// before [`Controller::on_interval`], in the order they happened.
    fn on_event(&mut self, event: &AppEvent) -> Result<Vec<Action>, PolicyError> {
        let _ = event;
        Ok(Vec::new())
    }

    /// An interval has ended: its samples and events.
    fn on_interval(&mut self, interval: &Interval) -> Result<Vec<Action>, PolicyError> {
        let _ = interval;
        Ok(Vec::new())
    }

    /// What one of its actions did, once the machine carried it out
    /// (not called for actions answered during an interval, which the
    /// machine carries out itself).
    fn applied(&mut self, action: &Action, effect: &Effect) {
        let _ = (action, effect);
    }
}

/// A static policy as a controller: it decides a plan when started and
/// never changes it.
pub struct Static {
    policy: Box<dyn Policy>,
}

impl Static {
    /// Wraps `policy`.
    pub fn new(policy: Box<dyn Policy>) -> Static {
        Static { policy }
    }
}

impl Controller for Static {
    fn name(&self) -> &str {
        self.policy.name()
    }

    fn start(&mut self, machine: &mut dyn Machine) -> Result<Vec<Action>, PolicyError> {
        Ok(vec![Action::Apply(self.policy.decide(machine)?)])
    }
}

/// A plan fixed in advance (or none): applied at the start, never
/// changed. A run without a policy is a run of `Fixed::none()`.
pub struct Fixed {
    plan: Option<cachepart_machine::Plan>,
}

impl Fixed {
    /// Applies `plan` at the start.
    pub fn new(plan: cachepart_machine::Plan) -> Fixed {
        Fixed { plan: Some(plan) }
    }

    /// Does nothing.
    pub fn none() -> Fixed {
        Fixed { plan: None }
    }
}

impl Controller for Fixed {
    fn name(&self) -> &str {
        "fixed"
    }

    fn start(&mut self, _: &mut dyn Machine) -> Result<Vec<Action>, PolicyError> {
        Ok(self.plan.iter().cloned().map(Action::Apply).collect())
    }
}

/// Several controllers run as one (a page-color policy beside a CAT
/// policy): each is started, told of every event and handed every
/// interval in turn, and their actions are carried out in that order.
/// [`Controller::applied`] reaches the controller whose action it was
/// (every action but the answers to colors-exhausted events is reported
/// back, in order, by the driver).
pub struct Chain<'a> {
    parts: Vec<&'a mut dyn Controller>,
    name: String,
    /// Owner of each action not yet reported back, in order.
    owners: std::collections::VecDeque<usize>,
}

impl<'a> Chain<'a> {
    /// Chains `parts` in this order.
    pub fn new(parts: Vec<&'a mut dyn Controller>) -> Chain<'a> {
        let name = parts
            .iter()
            .map(|p| p.name().to_string())
            .collect::<Vec<_>>()
            .join("+");
        Chain {
            parts,
            name,
            owners: Default::default(),
        }
    }

    fn each(
        &mut self,
        track: bool,
        mut f: impl FnMut(&mut dyn Controller) -> Result<Vec<Action>, PolicyError>,
    ) -> Result<Vec<Action>, PolicyError> {
        let mut all = Vec::new();
        for (i, p) in self.parts.iter_mut().enumerate() {
            let actions = f(&mut **p)?;
            if track {
                self.owners.extend(std::iter::repeat_n(i, actions.len()));
            }
            all.extend(actions);
        }
        Ok(all)
    }
}

impl Controller for Chain<'_> {
    fn name(&self) -> &str {
        &self.name
    }

    fn start(&mut self, machine: &mut dyn Machine) -> Result<Vec<Action>, PolicyError> {
        self.each(true, |p| p.start(machine))
    }

    fn on_event(&mut self, event: &AppEvent) -> Result<Vec<Action>, PolicyError> {
        let track = event.kind != cachepart_machine::EventKind::ColorsExhausted;
        self.each(track, |p| p.on_event(event))
    }

    fn on_interval(&mut self, interval: &Interval) -> Result<Vec<Action>, PolicyError> {
        self.each(true, |p| p.on_interval(interval))
    }

    fn applied(&mut self, action: &Action, effect: &Effect) {
        if let Some(i) = self.owners.pop_front() {
            self.parts[i].applied(action, effect);
        }
    }
}
