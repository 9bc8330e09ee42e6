//! The `profile` machine: a table-driven analytical model of LLC sharing.
//!
//! Input is a metrics table ([`MetricsTable`], PBBCache's CSV format) holding
//! each program's measurements alone at every way count, and workloads
//! ([`Workload`]). The model ([`evaluate`]) predicts each app's slowdown under
//! a [`Plan`](cachepart_machine::Plan): shared ways are split in proportion
//! to miss rates, tables are interpolated at fractional sizes, and a
//! bandwidth model ([`BwModel`]) adds memory contention. [`MixMetrics`]
//! summarises a mix (STP, ANTT, unfairness, ...). [`ProfileMachine`] puts all
//! of it behind the [`Machine`](cachepart_machine::Machine) interface, and
//! [`optimal`] finds the exact best partitioning or clustering of a mix.
//!
//! The model is restated from PBBCache (`shared/data/pbbcache/MODEL.md`) and
//! reproduces its reference outputs.
#![deny(missing_docs)]

pub mod bandwidth;
mod error;
mod machine;
pub mod metrics;
mod mix;
mod model;
pub mod optimal;
mod table;
mod workload;

pub use bandwidth::BwModel;
pub use error::{Location, ProfileError};
pub use machine::ProfileMachine;
pub use metrics::{round3, MixMetrics};
pub use mix::{Mix, MixApp};
pub use model::{effective_ways, evaluate, AppOutcome, Evaluation, ModelConfig, MIN_MAX_BW_MBPS};
pub use optimal::{brute_force, solve, Objective, Progress, Solution, SolveOptions, Structure};
pub use table::{AppTable, MetricsTable, REQUIRED_COLUMNS};
pub use workload::{parse_json, parse_text, parse_toml, read_workloads, Origin, Workload};
