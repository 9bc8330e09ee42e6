//! cachepart: compare LLC partitioning policies on the same mixes.
//!
//! This crate wires machines, policies and mixes together:
//!
//! * [`Algorithm`]: every policy and exact solver by its kebab-case name
//!   (`ucp`, `lfoc`, `optc-unf`, ...), shared by the CLI, configs and Python;
//! * [`run_profile`]: runs algorithms on workloads with the table-driven
//!   machine and returns one [`Outcome`] per (workload, algorithm);
//! * [`report`]: flattens outcomes into rows and writes them as a table, CSV
//!   or JSON;
//! * [`cachegrind`]: the cachegrind-compatible simulation of a trace
//!   (geometry from cachegrind's options or a platform, cachegrind's
//!   summary layout and its nine totals as JSON);
//! * [`classify`]: the LFOC class of each program with the numbers behind it;
//! * [`chart`]: the STP-versus-unfairness chart normalised to `stock` (PNG).
//! * [`coloring`]: page-color policies on the simulator (COLORIS, Tam);
//! * [`samples`]: per-app, per-interval samples of a simulated run as CSV
//!   or Parquet.
//! * [`profile_job`]: alone runs of a trace over way or color counts on
//!   the simulator, and Tam et al.'s stall-rate curves;
//! * [`from_trace`]: PBBCache metrics tables made from traces that way.
//! * [`key_set`]: `--set KEY=VALUE`, any key of a scenario file changed
//!   from the command line, Python or a sweep.
//! * [`experiments`]: sweeps of simulator scenarios that reproduce the
//!   papers' figures (table, plot and write-up per experiment file).
//! * [`linux_run`] and [`daemon`]: a policy on this Linux machine, over a
//!   mix it launches (`cachepart run`) or over processes it adopts
//!   (`cachepart daemon`).
//!
//! ```no_run
//! use cachepart::{run_profile, Algorithm, RunOptions};
//! use cachepart_profile::{read_workloads, MetricsTable};
//! use std::path::Path;
//! let table = MetricsTable::from_path(Path::new("metrics.csv")).unwrap();
//! let mixes = read_workloads(Path::new("workloads.csv")).unwrap();
//! let algos = Algorithm::parse_list("ucp,lfoc,optc-unf").unwrap();
//! let outcomes = run_profile(&table, &mixes, &algos, &RunOptions::default()).unwrap();
//! println!("{}", cachepart::report::to_table(&cachepart::report::rows(&outcomes)));
//! ```
#![deny(missing_docs)]

mod algorithm;
pub mod builtin;
pub mod cachegrind;
pub mod chart;
pub mod classify;
pub mod coloring;
pub mod compare;
mod curve_job;
pub mod daemon;
mod error;
mod experiment;
pub mod experiments;
pub mod from_trace;
pub mod key_set;
pub mod linux_control;
pub mod linux_counters;
pub mod linux_measure;
pub mod linux_mix;
pub mod linux_run;
pub mod method;
pub mod online;
pub mod online_throttle;
pub mod options;
pub mod output;
pub mod platforms;
pub mod profile_job;
pub mod report;
pub mod samples;
pub mod scenario;
pub mod sim_run;
pub mod stall_curve;
#[cfg(test)]
mod test_traces;
pub mod throttle_coloring;
pub mod throttle_quantum;
pub mod throttle_search;

pub use algorithm::Algorithm;
pub use cachepart_linux as linux;
pub use curve_job::{
    compute_curve, compute_curve_with, CurveCounts, CurveKind, CurveRequest, CurveResult, ReadHook,
    SamplingInfo,
};
pub use error::Error;
pub use experiment::{
    max_threads, restrict_ways, run_one, run_profile, time_limit_from_secs, Outcome, ProgressFn,
    RunOptions, SolverInfo, MAX_THREADS_PER_CORE, MAX_TIME_LIMIT_SECS,
};

pub use cachepart_curves as curves;
pub use cachepart_machine as machine;
pub use cachepart_policy as policy;
pub use cachepart_profile as profile;
pub use cachepart_trace as trace;
pub use cachepart_units as units;
pub use cachepart_units::Kind;
