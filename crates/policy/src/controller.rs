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
