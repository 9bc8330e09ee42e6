//! Errors of the table-driven machine: bad input files and impossible requests.

use std::path::PathBuf;
use thiserror::Error;

/// Where in an input a problem is: file, line (1-based) and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file (or `<string>` for in-memory input).
    pub file: PathBuf,
    /// 1-based line, if known.
    pub line: Option<u64>,
    /// Column name or 1-based number, if known.
    pub column: Option<String>,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if let Some(c) = &self.column {
            write!(f, " column {c}")?;
        }
        Ok(())
    }
}

/// Everything that can go wrong in the table-driven machine.
#[derive(Debug, Error)]
pub enum ProfileError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// An input file is malformed.
    #[error("{at}: {message}")]
    Parse {
        /// Where.
        at: Location,
        /// What was found and what was expected.
        message: String,
    },
    /// A workload names a program the metrics table does not have.
    #[error("{at}: unknown program {name:?} (not in the metrics table{hint})")]
    UnknownProgram {
        /// Where.
        at: Location,
        /// The name given.
        name: String,
        /// A suggestion (`; did you mean ...?`) or nothing.
        hint: String,
    },
    /// A request the model cannot serve.
    #[error("{0}")]
    Invalid(String),
    /// An option outside its valid range (named in kebab case, as the CLI
    /// flag and, with `_` for `-`, the Python argument).
    #[error("{option} {value}: {expected}")]
    BadOption {
        /// The option, e.g. `max-bw`.
        option: &'static str,
        /// The value given.
        value: String,
        /// What was expected.
        expected: String,
    },
    /// The model's arithmetic left the finite range (extreme table values):
    /// refused rather than reported as `inf` or `NaN`.
    #[error("{what} is {value}: the metrics table's values (or max-bw) are beyond what the model can compute")]
    NotFinite {
        /// The quantity (`app NAME: slowdown`, `mix antt`, ...).
        what: String,
        /// Its value.
        value: f64,
    },
    /// A plan that is not valid for the mix.
    #[error("invalid plan: {0}")]
    Plan(#[from] cachepart_machine::PlanError),
}

impl ProfileError {
    pub(crate) fn parse(
        file: &std::path::Path,
        line: Option<u64>,
        column: Option<String>,
        message: impl Into<String>,
    ) -> Self {
        ProfileError::Parse {
            at: Location {
                file: file.to_path_buf(),
                line,
                column,
            },
            message: message.into(),
        }
    }
}
