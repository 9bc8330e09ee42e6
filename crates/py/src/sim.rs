//! The simulator from Python: run a scenario file, search throttling
//! settings, list platforms, and cachegrind's simulation of a trace.
//! Scenario results come back as JSON (per-app results and metrics) and
//! CSV (samples) text that `python/cachepart/sim.py` turns into
//! DataFrames; cachegrind's totals as `(event, count)` pairs.

use std::path::PathBuf;

use cachepart::output;
use cachepart::output::samples;
use cachepart::run::cachegrind;
use cachepart::run::sim as runner;
use cachepart::run::throttle::{quantum, search};
use cachepart::spec::key_set::KeySet;
use cachepart::spec::platforms;
use cachepart::spec::scenario::{Overrides, Scenario};
use cachepart::Error;
use pyo3::prelude::*;

use crate::guarded;

/// Runs a scenario file; returns (report JSON, samples CSV). `set_keys`:
/// `KEY=VALUE` texts, as `sim run --set` takes them.
#[pyfunction]
#[pyo3(signature = (scenario, seed=None, policy=None, alone=true, set_keys=None))]
fn sim_run(
    py: Python<'_>,
    scenario: PathBuf,
    seed: Option<u64>,
    policy: Option<String>,
    alone: bool,
    set_keys: Option<Vec<String>>,
) -> PyResult<(String, String)> {
    guarded(py, move || {
        let set = set_keys
            .unwrap_or_default()
            .iter()
            .map(|k| KeySet::parse(k).map_err(|e| Error::config("", "", e)))
            .collect::<Result<Vec<_>, Error>>()?;
        let overrides = Overrides {
            set,
            seed,
            policy,
            no_alone: !alone,
        };
        let s = Scenario::load_with(&scenario, &overrides)?;
        let report = runner::run_scenario(&s, None)?;
        Ok::<_, Error>((
            output::sim::to_json(&report),
            samples::to_csv(&report.samples),
        ))
    })
}

/// Zhang et al.'s best-fairness search on a scenario; returns the report
/// as JSON.
// The Python default is written out (a path would show as `...` in the
// signature that type stubs are checked against); it is the CLI's.
const _: () = assert!(quantum::DEFAULT_RUN_CYCLES == 400_000);

#[pyfunction]
#[pyo3(signature = (scenario, prefetchers=false, keep=3, max_runs=512, seed=None, quantum=false, quantum_run_cycles=400_000, coloring=false))]
#[allow(clippy::too_many_arguments)]
fn sim_throttle(
    py: Python<'_>,
    scenario: PathBuf,
    prefetchers: bool,
    keep: usize,
    max_runs: usize,
    seed: Option<u64>,
    quantum: bool,
    quantum_run_cycles: u64,
    coloring: bool,
) -> PyResult<String> {
    guarded(py, move || {
        let overrides = Overrides {
            seed,
            ..Overrides::default()
        };
        let s = Scenario::load_with(&scenario, &overrides)?;
        let opts = search::SearchOptions {
            prefetchers,
            keep,
            max_runs,
            quantum,
            quantum_run_cycles,
            coloring,
        };
        let report = search::search(&s, &opts)?;
        Ok::<_, Error>(output::throttle_search::to_json(&report))
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

/// cachegrind's nine totals of a binary trace, as `(event, count)` pairs
/// in cachegrind's order; `i1`, `d1`, `ll` are cachegrind's option values
/// (`SIZE,WAYS,LINE`), `platform` supplies the caches not given;
/// `threads` splits the simulation and `decoders` decodes the trace file's
/// frames in parallel (the same totals for any counts).
#[pyfunction]
#[pyo3(signature = (trace, i1=None, d1=None, ll=None, platform=None, threads=1, decoders=None))]
fn sim_cachegrind(
    py: Python<'_>,
    trace: PathBuf,
    i1: Option<String>,
    d1: Option<String>,
    ll: Option<String>,
    platform: Option<String>,
    threads: usize,
    decoders: Option<usize>,
) -> PyResult<Vec<(String, u64)>> {
    guarded(py, move || {
        let opt = |name: &str, v: Option<String>| {
            v.map(|v| cachegrind::parse_option(name, &v)).transpose()
        };
        let cfg = cachegrind::config(
            platform.as_deref(),
            opt("I1", i1)?,
            opt("D1", d1)?,
            opt("LL", ll)?,
        )?;
        cachegrind::check_threads(&cfg, threads)?;
        let s = cachegrind::simulate_trace(&trace, &cfg, threads, decoders)?;
        Ok::<_, Error>(
            cachegrind::totals(&s)
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    })
}

/// Adds the simulator's functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sim_run, m)?)?;
    m.add_function(wrap_pyfunction!(sim_platforms, m)?)?;
    m.add_function(wrap_pyfunction!(sim_throttle, m)?)?;
    m.add_function(wrap_pyfunction!(sim_cachegrind, m)?)?;
    Ok(())
}
