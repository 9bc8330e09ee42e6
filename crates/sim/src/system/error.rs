//! The error type of the multicore system: configuration, trace, memory
//! and mask errors, each naming the app or field concerned.

use std::path::PathBuf;

use cachepart_trace::TraceError;
use cachepart_units::MaskError;
use thiserror::Error;

use crate::error::SimError;
use crate::memory::MemoryError;

/// Everything that can go wrong building or running a [`System`](super::System).
#[derive(Debug, Error)]
pub enum SystemError {
    /// A cache level or hierarchy cannot be built.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// A configuration value is unusable.
    #[error("{field}: {reason}")]
    Config {
        /// The field (`timing.freq-ghz`, `app mcf: core`, ...).
        field: String,
        /// What is wrong and what was expected.
        reason: String,
    },
    /// A platform file cannot be parsed (the message has line and column).
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A platform file cannot be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// An app's trace cannot be opened or read.
    #[error("app {app}: trace: {source}")]
    Trace {
        /// The app.
        app: String,
        /// The reader's error (with its byte offset).
        source: TraceError,
    },
    /// Memory (or the memory configuration) failed, e.g. out of memory
    /// while mapping a page of `app`.
    #[error("{}memory: {source}", app.as_ref().map(|a| format!("app {a}: ")).unwrap_or_default())]
    Memory {
        /// The app that touched the page, if any.
        app: Option<String>,
        /// What failed.
        source: MemoryError,
    },
    /// A way mask breaks the platform's rules.
    #[error("app {app}: way mask: {source}")]
    Mask {
        /// The app.
        app: String,
        /// What is wrong with the mask.
        source: MaskError,
    },
    /// An app index out of range.
    #[error("app index {index} is out of range ({apps} apps)")]
    NoSuchApp {
        /// The index given.
        index: usize,
        /// Apps in the system.
        apps: usize,
    },
}
