//! Curves of traces from Python: miss-rate curves (exact and SHARDS, and
//! the SHARDS sample index), Tam et al.'s stall-rate curves on a
//! simulated platform, and PBBCache metrics tables made from traces.
//! Results come back as JSON or CSV text for `python/cachepart/curves.py`
//! and `profile.py`.

use cachepart::curves::{CurveError, MAX_EXACT_BELOW, MAX_PER_OCTAVE, MAX_WAYS};
use cachepart::run::alone::{stall_rate_curve, AppTiming, Axis, ProfileOptions, TraceApp};
use cachepart::run::from_trace;
use cachepart::{compute_curve, CurveKind, CurveRequest, Error};
use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use std::path::PathBuf;

use crate::errors::guarded;
use crate::kinds;

/// A miss-rate curve of a binary trace; returns `{"points": [...], "sampling": ...}` as JSON.
#[pyfunction]
#[pyo3(signature = (trace, kind="fully-associative", line=64, ifetch=false, min_size=None, max_size=67108864, per_octave=1, sets=2048, ways=16, page=4096, rate=None, max_lines=None, adjust=true, use_index=true))]
fn curves(
    py: Python<'_>,
    trace: PathBuf,
    kind: &str,
    line: u64,
    ifetch: bool,
    min_size: Option<u64>,
    max_size: u64,
    #[pyo3(from_py_with = "per_octave_arg")] per_octave: u32,
    sets: u64,
    #[pyo3(from_py_with = "ways_arg")] ways: u32,
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
    #[pyo3(from_py_with = "exact_below_arg")] exact_below: u32,
) -> PyResult<String> {
    guarded(py, move || {
        let opts = cachepart::curves::Options::default()
            .with_line_bytes(line)
            .with_ifetch(ifetch);
        let s =
            cachepart::curves::build_index(&trace, &opts, exact_below).map_err(|e| match e {
                // a bad option, as `curves` raises it (the trace is not at fault)
                CurveError::LineSize(_) | CurveError::Sampling(_) | CurveError::Geometry(_) => {
                    Error::Usage(e.to_string())
                }
                e => Error::trace("", e),
            })?;
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

/// A `u32` argument taken as any whole number, so that a negative value or
/// one beyond `u32`, however far (past 128 bits too), is refused with the
/// argument's name and range (pyo3's own overflow error names neither, and
/// claims 0 to 2**64 - 1). A value in `u32` but outside `min..=max` is left
/// to the request's own checks. Anything but a whole number (a str, a
/// float) is refused as pyo3 refuses it for an integer.
fn narrow(ob: &Bound<'_, PyAny>, name: &str, min: u32, max: u32) -> PyResult<u32> {
    let shown = match ob.extract::<i128>() {
        Ok(v) => match u32::try_from(v) {
            Ok(v) => return Ok(v),
            Err(_) => v.to_string(),
        },
        Err(e) if e.is_instance_of::<PyOverflowError>(ob.py()) => {
            // Beyond 128 bits: the plain int's digits (not a subclass's own
            // __str__), in hexadecimal past Python's limit on the digits of
            // a decimal.
            let int = ob.call_method0("__index__")?;
            match int.str() {
                Ok(s) => s.to_string(),
                Err(_) => PyModule::import_bound(ob.py(), "builtins")?
                    .getattr("hex")?
                    .call1((&int,))?
                    .to_string(),
            }
        }
        Err(e) => return Err(e),
    };
    Err(crate::UsageError::new_err(format!(
        "{name} {shown}: expected {min} to {max}"
    )))
}

fn per_octave_arg(ob: &Bound<'_, PyAny>) -> PyResult<u32> {
    narrow(ob, "per_octave", 1, MAX_PER_OCTAVE)
}

fn ways_arg(ob: &Bound<'_, PyAny>) -> PyResult<u32> {
    narrow(ob, "ways", 1, MAX_WAYS)
}

fn exact_below_arg(ob: &Bound<'_, PyAny>) -> PyResult<u32> {
    narrow(ob, "exact_below", 0, MAX_EXACT_BELOW)
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

/// Adds the curve functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(curves, m)?)?;
    m.add_function(wrap_pyfunction!(build_shards_index, m)?)?;
    m.add_function(wrap_pyfunction!(stall_curve, m)?)?;
    m.add_function(wrap_pyfunction!(profile_from_traces, m)?)?;
    Ok(())
}
