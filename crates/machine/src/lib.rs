//! The machine interface: what every cachepart policy talks to.
//!
//! A policy never knows whether it runs on the trace-driven simulator, on the
//! table-driven model or on real Linux hardware. It sees a [`Machine`]:
//!
//! * [`Machine::platform`]: the [`Platform`] (ways, mask rules, bandwidth);
//! * [`Machine::alone_curves_on`]: per-app [`AppCurves`], what each app does
//!   alone at every count of an [`Axis`], ways (a CAT sweep, a simulation,
//!   or a table) or page colors; [`Machine::alone_curves`] is the way axis;
//! * [`Machine::apply`]: enforce a [`Plan`] (clusters of apps with way
//!   masks, per-app colors), and [`Machine::act`] for any [`Action`];
//! * [`Machine::run_interval`]: run one [`Interval`]: one [`Sample`] per
//!   app plus the [`AppEvent`]s (an app started, finished, was parked, ran
//!   out of colors, ...); events that need an answer at once are put to a
//!   responder while the interval runs.
//!
//! The [`control`] vocabulary ([`Action`], [`Effect`], [`AppEvent`],
//! [`Interval`], [`Axis`]) is what online controllers and machines share.
//!
//! The [`share`] module holds the estimate of how several apps split the ways
//! they share, used both by policies (KPart's combined curves) and by the
//! table-driven machine.
#![deny(missing_docs)]

pub mod control;
mod curves;
mod error;
pub mod metrics;
mod plan;
mod platform;
mod sample;
pub mod share;
pub mod throttle;

pub use control::{Action, AppEvent, Axis, Effect, EventKind, Interval};
pub use curves::AppCurves;
pub use error::MachineError;
pub use metrics::MixMetrics;
pub use plan::{AppColors, Cluster, Plan, PlanError, ShareModel};
pub use platform::Platform;
pub use sample::Sample;
pub use throttle::{AppThrottle, Duty, DutyError};

/// Answers an event that needs a decision while an interval runs (today:
/// [`EventKind::ColorsExhausted`]) with the actions to take at once.
pub type Responder<'a> = &'a mut dyn FnMut(&AppEvent) -> Vec<Action>;

/// A machine that runs a mix of apps under a partitioning plan.
///
/// Implemented by the table-driven model (`cachepart-profile`) and the
/// simulator (`cachepart-sim`), and later by Linux. Policies and
/// controllers take `&mut dyn Machine`.
pub trait Machine {
    /// The platform: ways, mask rules, bandwidth.
    fn platform(&self) -> &Platform;

    /// Per-app curves measured alone at every count of `axis`, in the order
    /// of the mix. A machine without page colors refuses
    /// [`Axis::Colors`] with [`MachineError::Unsupported`].
    fn alone_curves_on(&mut self, axis: &Axis) -> Result<&[AppCurves], MachineError>;

    /// Per-app curves alone at every way count `1..=ways`.
    fn alone_curves(&mut self) -> Result<&[AppCurves], MachineError> {
        self.alone_curves_on(&Axis::Ways)
    }

    /// The number of apps in the mix. The default asks for the alone
    /// curves; a machine that knows its mix without measuring (the
    /// simulator, whose curves take one alone run per way count) says so
    /// directly, so that policies that need only the count (`stock`,
    /// `equal-part`) cost nothing.
    fn app_count(&mut self) -> Result<usize, MachineError> {
        Ok(self.alone_curves()?.len())
    }

    /// Enforces a plan from now on.
    fn apply(&mut self, plan: &Plan) -> Result<(), MachineError>;

    /// Carries out an action. [`Action::Apply`] is [`Machine::apply`];
    /// other actions are refused unless the machine has the control.
    fn act(&mut self, action: &Action) -> Result<Effect, MachineError> {
        match action {
            Action::Apply(plan) => self.apply(plan).map(|()| Effect::default()),
            other => Err(MachineError::Unsupported(format!(
                "{} (this machine has no such control)",
                other.kind()
            ))),
        }
    }

    /// Runs one interval under the current plan. Events that need an
    /// answer during the interval go to `respond`, whose actions are
    /// carried out at once.
    fn run_interval(&mut self, respond: Responder<'_>) -> Result<Interval, MachineError>;

    /// Whether every app has finished (a machine whose apps never finish,
    /// such as the steady-state model, is never done).
    fn is_done(&self) -> bool {
        false
    }
}
