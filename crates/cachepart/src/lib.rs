//! cachepart: compare LLC partitioning policies on the same mixes.
//!
//! This crate wires machines, policies and mixes together. Its modules,
//! one directory per concern:
//!
//! * [`registry`]: what can be run, by name: [`Algorithm`] (every policy
//!   and exact solver by its kebab-case name, `ucp`, `lfoc`, `optc-unf`,
//!   ..., shared by the CLI, configuration files and Python) and the
//!   simulator's run methods ([`registry::method`]).
//! * [`spec`]: what users write: scenario files ([`spec::scenario`],
//!   checked once into a [`Scenario`]), the built-in platforms and data
//!   sets, `--set KEY=VALUE` changes ([`spec::key_set`]) and the options
//!   shared by the commands that load mixes.
//! * [`run`]: running: algorithms on the table-driven machine
//!   ([`run_profile`], one [`Outcome`] per workload and algorithm),
//!   scenarios on the simulator ([`run::sim`]), alone sweeps of a trace
//!   over way or color counts and the metrics tables and stall-rate curves
//!   made from them, miss-rate curves ([`compute_curve`]), page-color
//!   policies, the throttling search, the cachegrind-compatible simulation,
//!   LFOC's classes and two tables side by side.
//! * [`linux`]: a policy on this Linux machine, over a mix it launches
//!   (`cachepart run`) or over processes it adopts (`cachepart daemon`),
//!   and CAT sweeps of real programs; the backend crate
//!   `cachepart-linux` is re-exported in it.
//! * [`output`]: what users read: rows and their table, CSV and JSON
//!   formats, per-interval samples (CSV, Parquet) and charts (PNG).
//! * [`error`]: the one error type, [`Error`], with a kind per seam.
//!
//! The paper reproductions (experiment files, their designs, tables,
//! figures and write-ups) are the crate `cachepart-repro`, built on this
//! one.
//!
//! ```no_run
//! use cachepart::{run_profile, Algorithm, RunOptions};
//! use cachepart_profile::{read_workloads, MetricsTable};
//! use std::path::Path;
//! let table = MetricsTable::from_path(Path::new("metrics.csv")).unwrap();
//! let mixes = read_workloads(Path::new("workloads.csv")).unwrap();
//! let algos = Algorithm::parse_list("ucp,lfoc,optc-unf").unwrap();
//! let outcomes = run_profile(&table, &mixes, &algos, &RunOptions::default()).unwrap();
//! println!("{}", cachepart::output::report::to_table(&cachepart::output::report::rows(&outcomes)));
//! ```
#![deny(missing_docs)]

pub mod error;
pub mod linux;
pub mod output;
pub mod registry;
pub mod run;
pub mod spec;
#[cfg(test)]
mod test_traces;

pub use error::Error;
pub use registry::Algorithm;
pub use run::curve::{
    compute_curve, compute_curve_with, CurveCounts, CurveKind, CurveRequest, CurveResult, ReadHook,
    SamplingInfo,
};
pub use run::profile::{
    max_threads, restrict_ways, run_one, run_profile, time_limit_from_secs, Outcome, ProgressFn,
    RunOptions, SolverInfo, MAX_THREADS_PER_CORE, MAX_TIME_LIMIT_SECS,
};
pub use spec::scenario::Scenario;

pub use cachepart_curves as curves;
pub use cachepart_machine as machine;
pub use cachepart_policy as policy;
pub use cachepart_profile as profile;
pub use cachepart_trace as trace;
pub use cachepart_units as units;
pub use cachepart_units::Kind;
