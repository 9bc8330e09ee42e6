//! The machine interface: what every cachepart policy talks to.
//!
//! A policy never knows whether it runs on the trace-driven simulator, on the
//! table-driven model or on real Linux hardware. It sees a [`Machine`]:
//!
//! * [`Machine::platform`]: the [`Platform`] (ways, mask rules, bandwidth);
//! * [`Machine::alone_curves`]: per-app [`AppCurves`], what each app does
//!   alone at every way count (a CAT sweep, a simulation, or a table);
//! * [`Machine::apply`]: enforce a [`Plan`] (clusters of apps with way masks);
//! * [`Machine::run_interval`]: run and read one [`Sample`] per app.
//!
//! The [`share`] module holds the estimate of how several apps split the ways
//! they share, used both by policies (KPart's combined curves) and by the
//! table-driven machine.
#![deny(missing_docs)]

mod curves;
mod error;
mod plan;
mod platform;
mod sample;
pub mod share;

pub use curves::AppCurves;
pub use error::MachineError;
pub use plan::{Cluster, Plan, PlanError, ShareModel};
pub use platform::Platform;
pub use sample::Sample;

/// A machine that runs a mix of apps under a partitioning plan.
///
/// Implemented by the table-driven model (`cachepart-profile`), and later by
/// the simulator and by Linux. Policies take `&mut dyn Machine`.
pub trait Machine {
    /// The platform: ways, mask rules, bandwidth.
    fn platform(&self) -> &Platform;

    /// Per-app curves measured alone at every way count `1..=ways`, in the
    /// order of the mix.
    fn alone_curves(&mut self) -> Result<&[AppCurves], MachineError>;

    /// Enforces a plan from now on.
    fn apply(&mut self, plan: &Plan) -> Result<(), MachineError>;

    /// Runs one interval under the current plan and returns one sample per app.
    fn run_interval(&mut self) -> Result<Vec<Sample>, MachineError>;
}
