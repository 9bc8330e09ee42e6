//! Python bindings: the module `cachepart._core`. Glue only: arguments are
//! turned into facade calls, results come back as the facade's row structs
//! handed over as lists of dicts (`rows.rs`, through pythonize; JSON text where a result is a
//! whole report) that the Python layer builds its pandas DataFrames from
//! (`python/cachepart/_frames.py`), and each error kind maps to one Python
//! exception class.
#![deny(missing_docs)]
// pyo3's macros expand to items without docs and with conversions clippy flags.
#![allow(
    missing_docs,
    unexpected_cfgs,
    clippy::useless_conversion,
    clippy::too_many_arguments
)]

mod kinds;
mod rows;
mod sim;

use cachepart::output::report::{self, ReportOptions};
use cachepart::policy::LfocPreset;
use cachepart::profile::{BwModel, MetricsTable, ModelConfig, ProfileError, Workload};
use cachepart::run::alone::{stall_rate_curve, AppTiming, Axis, ProfileOptions, TraceApp};
use cachepart::run::{classify, from_trace};
use cachepart::spec::builtin::BuiltinSet;
use cachepart::spec::data::MixData;
use cachepart::{compute_curve, Algorithm, CurveKind, CurveRequest, Error, RunOptions};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use std::path::PathBuf;

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
    ConfigError,
    InputError,
    "A configuration (scenario, experiment, platform, mix or daemon file, or the same values given as arguments) that is malformed or refused; names the file or scenario and the field."
);
create_exception!(
    _core,
    TraceError,
    InputError,
    "A trace (or its sample index) that cannot be read or is malformed; names the trace and the byte offset or line."
);
create_exception!(
    _core,
    SimulationError,
    CachepartError,
    "A simulation that failed once started (the simulator, its machine or its controllers); names the run and, where the simulator says, the app."
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

/// Runs `f` without the GIL and turns both its error and any panic into
/// cachepart exceptions: a panic is a bug, but Python code catching
/// `CachepartError` (or `Exception`) must still see it, and pyo3's
/// `PanicException` derives from `BaseException` only.
pub(crate) fn guarded<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> Result<T, Error> + Send,
{
    let out = py.allow_threads(move || std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    match out {
        Ok(r) => r.map_err(to_py),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(CachepartError::new_err(format!(
                "internal error (a bug in cachepart, please report it): {what}"
            )))
        }
    }
}

pub(crate) fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::Profile(p) => match *p {
            ProfileError::Io { .. }
            | ProfileError::Parse { .. }
            | ProfileError::UnknownProgram { .. } => InputError::new_err(msg),
            ProfileError::BadOption { .. } => UsageError::new_err(msg),
            _ => ModelError::new_err(msg),
        },
        Error::Io { .. } => InputError::new_err(msg),
        Error::Config { .. } => ConfigError::new_err(msg),
        Error::Trace { .. } => TraceError::new_err(msg),
        Error::Simulation { .. } => SimulationError::new_err(msg),
        Error::Policy { .. } => PolicyError::new_err(msg),
        Error::Usage(_) => UsageError::new_err(msg),
        Error::Chart(_) => ChartError::new_err(msg),
        Error::Linux(_) | Error::Machine { .. } => ModelError::new_err(msg),
        Error::Output(_) | Error::Interrupted(_) => CachepartError::new_err(msg),
    }
}

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

/// A miss-rate curve of a binary trace; returns `{"points": [...], "sampling": ...}` as JSON.
#[pyfunction]
#[pyo3(signature = (trace, kind="fully-associative", line=64, ifetch=false, min_size=1024, max_size=67108864, per_octave=1, sets=2048, ways=16, page=4096, rate=None, max_lines=None, adjust=true, use_index=true))]
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
    rate: Option<f64>,
    max_lines: Option<usize>,
    adjust: bool,
    use_index: bool,
) -> PyResult<String> {
    let kind: CurveKind = kinds::parse("kind", kind)?;
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
        use_index,
    };
    guarded(py, move || {
        let out = compute_curve(&trace, &req)?;
        let c = &out.curve;
        let points: Vec<_> = (0..c.len())
            .map(|i| {
                let mut p = serde_json::json!({
                    "size_bytes": c.sizes_bytes[i],
                    "misses": c.misses[i],
                    "miss_ratio": c.miss_ratio(i),
                    "mpki": c.mpki(i),
                });
                if let (Some(k), Some(obj)) = (&out.counts, p.as_object_mut()) {
                    obj.insert(k.axis.into(), k.values[i].into());
                }
                p
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
}

/// Builds the SHARDS sample index of a trace (`TRACE.shards`); returns
/// its summary as JSON.
#[pyfunction]
#[pyo3(signature = (trace, line=64, ifetch=false, exact_below=256))]
fn build_shards_index(
    py: Python<'_>,
    trace: PathBuf,
    line: u64,
    ifetch: bool,
    exact_below: u32,
) -> PyResult<String> {
    guarded(py, move || {
        let opts = cachepart::curves::Options::default()
            .with_line_bytes(line)
            .with_ifetch(ifetch);
        let s = cachepart::curves::build_index(&trace, &opts, exact_below)
            .map_err(|e| Error::trace("", e))?;
        let doc = serde_json::json!({
            "path": s.path,
            "bytes": s.bytes,
            "accesses": s.accesses,
            "sampled_refs": s.sampled_refs,
            "sampled_lines": s.sampled_lines,
            "ref_samples": s.ref_samples,
        });
        Ok::<_, Error>(doc.to_string())
    })
}

fn profile_options(
    platform: &str,
    base_cpi: f64,
    mlp: f64,
    instructions: Option<u64>,
    seed: u64,
) -> Result<ProfileOptions, Error> {
    Ok(ProfileOptions {
        platform: cachepart::spec::platforms::resolve(platform, None)?,
        timing: AppTiming::new(base_cpi, mlp),
        instructions,
        warmup: 0,
        seed,
    })
}

/// The stall-rate curve of a trace on a simulated platform (memory-stall
/// cycles per 10^9 cycles at every way or color count); returns the
/// curve as JSON.
#[pyfunction]
#[pyo3(signature = (trace, platform, axis="ways", base_cpi=1.0, mlp=1.0, instructions=None, seed=0))]
fn stall_curve(
    py: Python<'_>,
    trace: PathBuf,
    platform: &str,
    axis: &str,
    base_cpi: f64,
    mlp: f64,
    instructions: Option<u64>,
    seed: u64,
) -> PyResult<String> {
    let axis: Axis = kinds::parse("axis", axis)?;
    let platform = platform.to_string();
    guarded(py, move || {
        let opts = profile_options(&platform, base_cpi, mlp, instructions, seed)?;
        let app = TraceApp::from_path(&trace)?;
        let curve = stall_rate_curve(&app, axis, &opts)?;
        serde_json::to_string(&curve).map_err(|e| Error::Output(e.to_string()))
    })
}

/// A PBBCache metrics table made from traces (each alone on the simulator
/// at every way count); returns the CSV text.
#[pyfunction]
#[pyo3(signature = (traces, platform, names=None, base_cpi=1.0, mlp=1.0, instructions=None, warmup=0, seed=0))]
#[allow(clippy::too_many_arguments)]
fn profile_from_traces(
    py: Python<'_>,
    traces: Vec<PathBuf>,
    platform: &str,
    names: Option<Vec<String>>,
    base_cpi: f64,
    mlp: f64,
    instructions: Option<u64>,
    warmup: u64,
    seed: u64,
) -> PyResult<String> {
    let platform = platform.to_string();
    guarded(py, move || {
        let opts = ProfileOptions {
            warmup,
            ..profile_options(&platform, base_cpi, mlp, instructions, seed)?
        };
        let apps = cachepart::spec::options::trace_apps(&traces, &names.unwrap_or_default())?;
        from_trace::profile_traces(&apps, &opts)
    })
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

/// The module `cachepart._core`.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("CachepartError", py.get_type_bound::<CachepartError>())?;
    m.add("InputError", py.get_type_bound::<InputError>())?;
    m.add("ConfigError", py.get_type_bound::<ConfigError>())?;
    m.add("TraceError", py.get_type_bound::<TraceError>())?;
    m.add("SimulationError", py.get_type_bound::<SimulationError>())?;
    m.add("ModelError", py.get_type_bound::<ModelError>())?;
    m.add("PolicyError", py.get_type_bound::<PolicyError>())?;
    m.add("UsageError", py.get_type_bound::<UsageError>())?;
    m.add("ChartError", py.get_type_bound::<ChartError>())?;
    m.add_function(wrap_pyfunction!(profile_evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(profile_classify, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_metrics_csv, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_workloads, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(default_algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(curves, m)?)?;
    m.add_function(wrap_pyfunction!(build_shards_index, m)?)?;
    sim::register(m)?;
    m.add_function(wrap_pyfunction!(stall_curve, m)?)?;
    m.add_function(wrap_pyfunction!(profile_from_traces, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
