//! The crate's error type: invalid parameters and trace read failures.

use thiserror::Error;

/// Errors of curve construction.
#[derive(Debug, Error)]
pub enum CurveError {
    /// The cache line size is not a power of two in `8..=4096`.
    #[error("line size {0} bytes: expected a power of two from 8 to 4096")]
    LineSize(u64),
    /// A cache geometry parameter is out of range.
    #[error("bad geometry: {0}")]
    Geometry(String),
    /// The tables the curve needs would not fit in the host's memory.
    #[error(transparent)]
    TooLarge(#[from] cachepart_units::TooLarge),
    /// A SHARDS parameter is out of range.
    #[error("bad sampling parameter: {0}")]
    Sampling(String),
    /// A SHARDS sample holds no reference of a trace that has some: there
    /// is nothing to estimate the curve from.
    #[error(
        "the SHARDS sample is empty: none of the {accesses} line references was sampled \
         (final rate {rate}), so there is no estimate; sample at a higher rate, or use the exact curve"
    )]
    EmptySample {
        /// Line references of the trace.
        accesses: u64,
        /// The sampling rate at the end.
        rate: f64,
    },
    /// Sizes of a curve are not strictly increasing, or empty.
    #[error("bad sizes: {0}")]
    Sizes(String),
    /// Two curves compared point by point have different sizes.
    #[error("curves differ in their sizes")]
    SizeMismatch,
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    /// A SHARDS sample index is malformed or stale.
    #[error("{}: byte {offset}: {reason}", path.display())]
    Index {
        /// The index file.
        path: std::path::PathBuf,
        /// Byte offset of the bad field or section.
        offset: u64,
        /// What is wrong and what was expected.
        reason: String,
    },
    /// A SHARDS sample index cannot serve the requested configuration.
    #[error("the sample index does not serve this configuration: {0}")]
    NotServed(String),
    /// Reading the trace failed.
    #[error(transparent)]
    Trace(#[from] cachepart_trace::TraceError),
    /// Reading the trace at `path` failed.
    #[error("{}: {source}", path.display())]
    TraceFile {
        /// The trace.
        path: std::path::PathBuf,
        /// The failure.
        source: cachepart_trace::TraceError,
    },
}

impl CurveError {
    /// Turns an I/O error on `path` into [`CurveError::Io`] (for
    /// `map_err`).
    pub(crate) fn io_at(
        path: &std::path::Path,
    ) -> impl Fn(std::io::Error) -> CurveError + Copy + '_ {
        move |source| CurveError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

impl CurveError {
    /// Names the trace `path` in a trace read failure (for `map_err`);
    /// other errors pass unchanged.
    pub(crate) fn in_trace(path: &std::path::Path) -> impl Fn(CurveError) -> CurveError + '_ {
        move |e| match e {
            CurveError::Trace(source) => CurveError::TraceFile {
                path: path.to_path_buf(),
                source,
            },
            e => e,
        }
    }
}

/// Result with a [`CurveError`].
pub type Result<T, E = CurveError> = std::result::Result<T, E>;
