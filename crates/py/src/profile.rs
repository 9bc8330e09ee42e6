//! The table-driven machine from Python: evaluate algorithms on
//! workloads, classify programs (LFOC), the built-in data sets and the
//! algorithm names. Rows come back as lists of dicts (`rows.rs`) that
//! `python/cachepart/profile.py` turns into DataFrames.

use cachepart::output::report::{self, ReportOptions};
use cachepart::policy::LfocPreset;
use cachepart::profile::{BwModel, MetricsTable, ModelConfig, Workload};
use cachepart::run::classify;
use cachepart::spec::builtin::BuiltinSet;
use cachepart::spec::data::MixData;
use cachepart::{Algorithm, Error, RunOptions};
use pyo3::prelude::*;
use std::path::PathBuf;

use crate::errors::guarded;
use crate::{kinds, rows};

fn load(
    metrics: Option<PathBuf>,
    workloads: Option<PathBuf>,
    mixes: Option<Vec<Vec<String>>>,
    need_workloads: bool,
    set: BuiltinSet,
) -> Result<(MetricsTable, Vec<Workload>), Error> {
    MixData {
        metrics: metrics.as_deref(),
        workloads: workloads.as_deref(),
        mixes: mixes.as_deref(),
        builtin: set,
    }
    .load(need_workloads)
}

/// Evaluates algorithms; returns the per-app rows as dicts.
#[pyfunction]
#[pyo3(signature = (algorithms, metrics=None, workloads=None, mixes=None, ways=None, bw_model="simple", max_bw=None, plan=None, time_limit=None, threads=None, lfoc_preset="paper", lfoc_max_streaming=None, lfoc_gaps_per_streaming=None, timings=false, builtin="debian"))]
fn profile_evaluate(
    py: Python<'_>,
    algorithms: Vec<String>,
    metrics: Option<PathBuf>,
    workloads: Option<PathBuf>,
    mixes: Option<Vec<Vec<String>>>,
    ways: Option<usize>,
    bw_model: &str,
    max_bw: Option<f64>,
    plan: Option<String>,
    time_limit: Option<f64>,
    threads: Option<usize>,
    lfoc_preset: &str,
    lfoc_max_streaming: Option<usize>,
    lfoc_gaps_per_streaming: Option<usize>,
    timings: bool,
    builtin: &str,
) -> PyResult<PyObject> {
    let set: BuiltinSet = kinds::parse("builtin", builtin)?;
    let bw: BwModel = kinds::parse("bw_model", bw_model)?;
    let lfoc_preset: LfocPreset = kinds::parse("lfoc_preset", lfoc_preset)?;
    let rows = guarded(py, move || {
        let time_limit = time_limit
            .map(cachepart::time_limit_from_secs)
            .transpose()?;
        let (table, wl) = load(metrics, workloads, mixes, true, set)?;
        let algos = Algorithm::parse_list(&algorithms.join(","))?;
        let opts = RunOptions {
            model: ModelConfig {
                bw_model: bw,
                max_bw_mbps: max_bw,
            },
            ways,
            user_plan: plan,
            lfoc_preset,
            lfoc_max_streaming,
            lfoc_gaps_per_streaming,
            time_limit,
            threads,
            progress: None,
        };
        let out = cachepart::run_profile(&table, &wl, &algos, &opts)?;
        Ok::<_, Error>(report::rows_with(&out, ReportOptions { timings }))
    })?;
    rows::to_py(py, &rows)
}

/// Classifies programs (LFOC Table 1); returns the rows as dicts.
#[pyfunction]
#[pyo3(signature = (metrics=None, workloads=None, mixes=None, builtin="debian", lfoc_preset="paper"))]
fn profile_classify(
    py: Python<'_>,
    metrics: Option<PathBuf>,
    workloads: Option<PathBuf>,
    mixes: Option<Vec<Vec<String>>>,
    builtin: &str,
    lfoc_preset: &str,
) -> PyResult<PyObject> {
    let set: BuiltinSet = kinds::parse("builtin", builtin)?;
    let preset: LfocPreset = kinds::parse("lfoc_preset", lfoc_preset)?;
    let rows = guarded(py, move || {
        let (table, wl) = load(metrics, workloads, mixes, false, set)?;
        classify::classify_workloads(&table, &wl, preset)
    })?;
    rows::to_py(py, &rows)
}

/// A built-in metrics table (PBBCache CSV text): `debian` or `parametric`.
#[pyfunction]
#[pyo3(signature = (set="debian"))]
fn builtin_metrics_csv(set: &str) -> PyResult<String> {
    let set: BuiltinSet = kinds::parse("set", set)?;
    Ok(set.metrics_csv().into_owned())
}

/// A built-in set's workloads (one mix per line).
#[pyfunction]
#[pyo3(signature = (set="debian"))]
fn builtin_workloads(set: &str) -> PyResult<&'static str> {
    let set: BuiltinSet = kinds::parse("set", set)?;
    Ok(set.workloads_text())
}

/// The algorithms run when none are named (the CLI's default too).
#[pyfunction]
fn default_algorithms() -> Vec<String> {
    Algorithm::DEFAULT_LIST
        .split(',')
        .map(str::to_string)
        .collect()
}

/// Every algorithm name.
#[pyfunction]
fn algorithms() -> Vec<String> {
    Algorithm::all_names()
}

/// Adds the table-driven machine's functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(profile_evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(profile_classify, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_metrics_csv, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_workloads, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(default_algorithms, m)?)?;
    Ok(())
}
