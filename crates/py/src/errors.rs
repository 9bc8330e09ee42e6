//! The Python exception classes of `cachepart._core`, one per error kind
//! of the facade ([`to_py`] maps each [`Error`] to its class), and
//! [`guarded`], which runs a facade call without the GIL and turns its
//! error, or a panic, into one of them.

use cachepart::profile::ProfileError;
use cachepart::Error;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

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

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
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
    Ok(())
}
