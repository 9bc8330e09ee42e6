//! Python bindings: the module `cachepart._core`. Glue only: arguments are
//! turned into facade calls, results come back as the facade's row structs
//! handed over as lists of dicts (`rows.rs`, through pythonize; JSON text
//! where a result is a whole report) that the Python layer builds its
//! pandas DataFrames from (`python/cachepart/_frames.py`), and each error
//! kind maps to one Python exception class. One file per front:
//! `profile.rs` (the table-driven machine), `curves.rs` (miss-rate and
//! stall-rate curves, tables from traces), `sim.rs` (the simulator),
//! `errors.rs` (the exception classes) and `kinds.rs` (kind arguments).
#![deny(missing_docs)]
// pyo3's macros expand to items without docs and with conversions clippy flags.
#![allow(
    missing_docs,
    unexpected_cfgs,
    clippy::useless_conversion,
    clippy::too_many_arguments
)]

mod curves;
mod errors;
mod kinds;
mod profile;
mod rows;
mod sim;

use pyo3::prelude::*;

pub(crate) use errors::{guarded, to_py, CachepartError, UsageError};

/// The module `cachepart._core`.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    profile::register(m)?;
    curves::register(m)?;
    sim::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
