//! Python bindings: the module `cachepart._core`. Glue only: arguments are
//! turned into facade calls, results come back as JSON text that the
//! Python layer (`python/cachepart`) turns into pandas DataFrames, and each
//! error kind maps to one Python exception class.
#![deny(missing_docs)]
// pyo3's macros expand to items without docs and with conversions clippy flags.
#![allow(
    missing_docs,
    unexpected_cfgs,
    clippy::useless_conversion,
    clippy::too_many_arguments
)]

mod sim;

use cachepart::profile::{
    read_workloads, BwModel, MetricsTable, ModelConfig, ProfileError, Workload,
};
use cachepart::report::{self, ReportOptions};
use cachepart::{
    builtin, classify, compute_curve, Algorithm, CurveKind, CurveRequest, Error, RunOptions,
};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::time::Duration;

create_exception!(
    _core,
    CachepartError,
    PyException,
    "Base class of every cachepart error."
);
create_exception!(
    _core,
    InputError,
    CachepartError,
    "A malformed or unreadable input file (names the file, line and column)."
);
create_exception!(
    _core,
    ModelError,
    CachepartError,
    "A request the model cannot serve (an invalid plan, missing columns)."
);
create_exception!(
    _core,
    PolicyError,
    CachepartError,
    "A policy could not decide a plan for a mix."
);
create_exception!(
    _core,
    UsageError,
    CachepartError,
    "A wrong argument: unknown algorithm, bad option value."
);
create_exception!(
    _core,
    ChartError,
    CachepartError,
    "A chart could not be drawn."
);

pub(crate) fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::Profile(p) => match *p {
            ProfileError::Io { .. }
            | ProfileError::Parse { .. }
            | ProfileError::UnknownProgram { .. } => InputError::new_err(msg),
            _ => ModelError::new_err(msg),
        },
        Error::Io { .. } | Error::Input(_) => InputError::new_err(msg),
        Error::Policy { .. } => PolicyError::new_err(msg),
        Error::Usage(_) => UsageError::new_err(msg),
        Error::Chart(_) => ChartError::new_err(msg),
    }
}

fn load(
    metrics: Option<PathBuf>,
    workloads: Option<PathBuf>,
    mixes: Option<Vec<Vec<String>>>,
    need_workloads: bool,
) -> Result<(MetricsTable, Vec<Workload>), Error> {
    let table = match &metrics {
        Some(p) => MetricsTable::from_path(p)?,
        None => builtin::table()?,
    };
    let wl = if let Some(m) = mixes {
        if workloads.is_some() {
            return Err(Error::Usage(
                "give either workloads or mixes, not both".into(),
            ));
        }
        m.iter()
            .enumerate()
            .map(|(i, apps)| {
                let names: Vec<&str> = apps.iter().map(String::as_str).collect();
                Workload::new(&format!("W{}", i + 1), &names)
            })
            .collect()
    } else if let Some(p) = &workloads {
        read_workloads(p)?
    } else if metrics.is_none() {
        builtin::workloads()?
    } else if need_workloads {
        return Err(Error::Usage(
            "metrics were given without workloads or mixes: say which mixes to run".into(),
        ));
    } else {
        let names: Vec<&str> = table.apps().iter().map(|a| a.name.as_str()).collect();
        vec![Workload::new("all", &names)]
    };
    Ok((table, wl))
}

/// Evaluates algorithms; returns the per-app rows as JSON text.
#[pyfunction]
#[pyo3(signature = (algorithms, metrics=None, workloads=None, mixes=None, ways=None, bw_model="simple", max_bw=None, plan=None, time_limit=None, threads=None, lfoc_max_streaming=5, lfoc_gaps_per_streaming=3, timings=false))]
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
    lfoc_max_streaming: usize,
    lfoc_gaps_per_streaming: usize,
    timings: bool,
) -> PyResult<String> {
    let bw = BwModel::from_name(bw_model).ok_or_else(|| {
        UsageError::new_err(format!(
            "bw_model {bw_model:?}: expected \"simple\" or \"stalls\""
        ))
    })?;
    if let Some(t) = time_limit {
        if !(t.is_finite() && t > 0.0) {
            return Err(UsageError::new_err(format!(
                "time_limit {t}: expected a positive number of seconds"
            )));
        }
    }
    py.allow_threads(move || {
        let (table, wl) = load(metrics, workloads, mixes, true)?;
        let algos = Algorithm::parse_list(&algorithms.join(","))?;
        let opts = RunOptions {
            model: ModelConfig {
                bw_model: bw,
                max_bw_mbps: max_bw,
            },
            ways,
            user_plan: plan,
            lfoc_max_streaming: Some(lfoc_max_streaming),
            lfoc_gaps_per_streaming: Some(lfoc_gaps_per_streaming),
            time_limit: time_limit.map(Duration::from_secs_f64),
            threads,
            progress: None,
        };
        let out = cachepart::run_profile(&table, &wl, &algos, &opts)?;
        Ok::<_, Error>(report::to_json(&report::rows_with(
            &out,
            ReportOptions { timings },
        )))
    })
    .map_err(to_py)
}

/// Classifies programs (LFOC Table 1); returns rows as JSON text.
#[pyfunction]
#[pyo3(signature = (metrics=None, workloads=None, mixes=None))]
fn profile_classify(
    py: Python<'_>,
    metrics: Option<PathBuf>,
    workloads: Option<PathBuf>,
    mixes: Option<Vec<Vec<String>>>,
) -> PyResult<String> {
    py.allow_threads(move || {
        let (table, wl) = load(metrics, workloads, mixes, false)?;
        let rows = classify::classify_workloads(&table, &wl)?;
        Ok::<_, Error>(classify::to_json(&rows))
    })
    .map_err(to_py)
}

/// A miss-rate curve of a binary trace; returns `{"points": [...], "sampling": ...}` as JSON.
#[pyfunction]
#[pyo3(signature = (trace, kind="fully-associative", line=64, ifetch=false, min_size=1024, max_size=67108864, per_octave=1, sets=2048, ways=16, page=4096, rate=0.01, max_lines=None, adjust=true))]
fn curves(
    py: Python<'_>,
    trace: PathBuf,
    kind: &str,
    line: u64,
    ifetch: bool,
    min_size: u64,
    max_size: u64,
    per_octave: u32,
    sets: u64,
    ways: u32,
    page: u64,
    rate: f64,
    max_lines: Option<usize>,
    adjust: bool,
) -> PyResult<String> {
    let kind = CurveKind::from_name(kind).map_err(to_py)?;
    let req = CurveRequest {
        kind,
        line_bytes: line,
        include_ifetch: ifetch,
        min_size,
        max_size,
        per_octave,
        sets,
        ways,
        page_bytes: page,
        rate,
        max_lines,
        adjust,
    };
    py.allow_threads(move || {
        let out = compute_curve(&trace, &req)?;
        let c = &out.curve;
        let points: Vec<_> = (0..c.len())
            .map(|i| {
                serde_json::json!({
                    "size_bytes": c.sizes_bytes[i],
                    "misses": c.misses[i],
                    "miss_ratio": c.miss_ratio(i),
                    "mpki": c.mpki(i),
                })
            })
            .collect();
        let doc = serde_json::json!({
            "points": points,
            "accesses": c.accesses,
            "instructions": c.instructions,
            "sampling": out.sampling,
        });
        Ok::<_, Error>(doc.to_string())
    })
    .map_err(to_py)
}

/// The built-in metrics table (PBBCache CSV text).
#[pyfunction]
fn builtin_metrics_csv() -> String {
    builtin::metrics_csv()
}

/// The built-in workloads (one mix per line).
#[pyfunction]
fn builtin_workloads() -> &'static str {
    builtin::WORKLOADS
}

/// Every algorithm name.
#[pyfunction]
fn algorithms() -> Vec<String> {
    Algorithm::all_names()
}

/// The module `cachepart._core`.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("CachepartError", py.get_type_bound::<CachepartError>())?;
    m.add("InputError", py.get_type_bound::<InputError>())?;
    m.add("ModelError", py.get_type_bound::<ModelError>())?;
    m.add("PolicyError", py.get_type_bound::<PolicyError>())?;
    m.add("UsageError", py.get_type_bound::<UsageError>())?;
    m.add("ChartError", py.get_type_bound::<ChartError>())?;
    m.add_function(wrap_pyfunction!(profile_evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(profile_classify, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_metrics_csv, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_workloads, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(curves, m)?)?;
    sim::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
