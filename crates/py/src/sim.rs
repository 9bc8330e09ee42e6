//! The simulator from Python: run a scenario file, list platforms. Results
//! come back as JSON (per-app results and metrics) and CSV (samples) text
//! that `python/cachepart/sim.py` turns into DataFrames.

use std::path::PathBuf;

use cachepart::platforms;
use cachepart::samples;
use cachepart::scenario::{Overrides, Scenario};
use cachepart::sim_run as runner;
use cachepart::Error;
use pyo3::prelude::*;

use crate::guarded;

/// Runs a scenario file; returns (report JSON, samples CSV).
#[pyfunction]
#[pyo3(signature = (scenario, seed=None, policy=None, alone=true))]
fn sim_run(
    py: Python<'_>,
    scenario: PathBuf,
    seed: Option<u64>,
    policy: Option<String>,
    alone: bool,
) -> PyResult<(String, String)> {
    guarded(py, move || {
        let overrides = Overrides {
            seed,
            policy,
            no_alone: !alone,
        };
        let s = Scenario::load_with(&scenario, &overrides)?;
        let report = runner::run_scenario(&s, None)?;
        Ok::<_, Error>((runner::to_json(&report), samples::to_csv(&report.samples)))
    })
}

/// The built-in platforms: (name, description) pairs.
#[pyfunction]
fn sim_platforms() -> Vec<(String, String)> {
    platforms::BUILTIN
        .iter()
        .map(|(n, d, _)| (n.to_string(), d.to_string()))
        .collect()
}

/// Adds the simulator's functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sim_run, m)?)?;
    m.add_function(wrap_pyfunction!(sim_platforms, m)?)?;
    Ok(())
}
