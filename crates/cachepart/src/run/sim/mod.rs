//! Running a [`Scenario`](crate::spec::scenario::Scenario) on the simulator:
//! the controllers of the scenario (a `[coloring]` page-color policy, then
//! a CAT policy that decides the masks from the apps' alone curves) run on
//! the one loop of `cachepart-policy` ([`drive`](cachepart_policy::drive))
//! over the simulator machine until every app has finished (every sample
//! kept); each app then runs alone on the same platform for its slowdown,
//! and the result is a [`SimReport`]: per-app totals, slowdowns, the mix
//! metrics (STP, ANTT, unfairness, ...), the samples and the coloring's
//! decisions ([`SimReport::coloring`]).
//!
//! Everything is deterministic for a scenario and seed: the alone runs
//! go in parallel but each is its own simulation.
//!
//! One file each: the result types ([`SimReport`], [`AppResult`],
//! [`AppPrefetch`]) in `report.rs`; the scenario's controllers in
//! `controllers.rs`; the run itself ([`run_scenario`]) in `run.rs`; the
//! alone runs for slowdowns in `alone.rs`. The report's formats (table,
//! CSV, JSON) are in [`crate::output::sim`].

mod alone;
mod controllers;
mod report;
mod run;

pub use report::{AppPrefetch, AppResult, SimReport};
pub use run::{run_scenario, SimProgress};
