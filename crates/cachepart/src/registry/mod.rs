//! What can be run, by name: every policy and exact solver
//! ([`Algorithm`], kebab-case names shared by the CLI, configuration files
//! and Python) and the run methods of the simulator ([`method`]).

mod algorithm;
pub mod method;

pub use algorithm::Algorithm;
