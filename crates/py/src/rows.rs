//! Row structs handed to Python as Python objects: pythonize's serde
//! serializer turns a slice of rows into a `list` of `dict`s (fields in
//! declaration order, serde's renames for keys, `None` for `None`, unit
//! enum variants as their names), so a Python frame gets the same rows and
//! column names as the CLI's `--format json`, without a round trip through
//! JSON text.

use pyo3::prelude::*;
use serde::Serialize;

use crate::CachepartError;

/// `rows` as a Python list of dicts.
pub(crate) fn to_py<T: Serialize>(py: Python<'_>, rows: &[T]) -> PyResult<PyObject> {
    pythonize::pythonize(py, rows)
        .map(Bound::unbind)
        .map_err(|e| {
            CachepartError::new_err(format!(
                "internal error (a bug in cachepart, please report it): {e}"
            ))
        })
}
