//! The facade's error: any layer's error, with context.

use thiserror::Error;

/// Errors of running experiments, writing reports and charts.
#[derive(Debug, Error)]
pub enum Error {
    /// Bad input or a model failure in the table-driven machine.
    #[error(transparent)]
    Profile(Box<cachepart_profile::ProfileError>),
    /// A policy could not decide.
    #[error("workload {workload}, {algorithm}: {source}")]
    Policy {
        /// Workload name.
        workload: String,
        /// Algorithm name.
        algorithm: String,
        /// The policy's error.
        source: Box<cachepart_policy::PolicyError>,
    },
    /// An input file (trace, config) is unreadable or malformed; the text
    /// names the file and the place.
    #[error("{0}")]
    Input(String),
    /// An algorithm name or option is wrong.
    #[error("{0}")]
    Usage(String),
    /// Writing output failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Drawing a chart failed.
    #[error("chart: {0}")]
    Chart(String),
    /// The Linux backend failed (resctrl, counters, MSRs, processes).
    #[error(transparent)]
    Linux(Box<cachepart_linux::Error>),
}

impl From<cachepart_linux::Error> for Error {
    fn from(e: cachepart_linux::Error) -> Self {
        Error::Linux(Box::new(e))
    }
}

impl From<cachepart_profile::ProfileError> for Error {
    fn from(e: cachepart_profile::ProfileError) -> Self {
        Error::Profile(Box::new(e))
    }
}
