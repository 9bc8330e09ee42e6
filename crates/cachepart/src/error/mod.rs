//! The facade's error: one kind per seam (configuration, trace,
//! simulation, model, policy, usage, I/O, output, chart, Linux), each
//! keeping the lower layer's error as its [`source`](std::error::Error::source)
//! where there is one. The words each kind prints are the ones the CLI and
//! Python show; `kinds.rs` holds the constructors the seams use, and
//! `simulation.rs` sorts a simulator failure into its kind.

mod kinds;
mod simulation;

use thiserror::Error;

/// A lower layer's error kept as a source (a simulator's, a driver's, a
/// reader's, a machine's).
pub type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Errors of running experiments, writing reports and charts.
///
/// Which kind to use: a file or value the user wrote that is malformed or
/// refused is [`Error::Config`] (naming the file or scenario, and the
/// field); a trace or its sample index that cannot be read is
/// [`Error::Trace`]; a simulation that fails once started is
/// [`Error::Simulation`]; a wrong option or argument is [`Error::Usage`];
/// an unreadable or unwritable file is [`Error::Io`].
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
    /// A configuration (a scenario, experiment, platform, daemon or mix
    /// file, or the same values given as options) is malformed or refused.
    #[error("{}", kinds::joined(&[whence.as_str(), field.as_str(), what.as_str()]))]
    Config {
        /// Where: the file (`FILE` or `FILE:LINE`), or the scenario or run
        /// when there is no file; empty when the caller names it.
        whence: String,
        /// The field (`app[1].colors`, `platform.llc`, ...); empty when the
        /// whole file is wrong (a parse error naming its line).
        field: String,
        /// What is wrong and what was expected.
        what: String,
    },
    /// A trace (or its sample index) cannot be read or is malformed.
    #[error("{}", kinds::joined(&[whence.as_str(), &source.to_string()]))]
    Trace {
        /// The trace file, or the scenario and app whose trace it is.
        whence: String,
        /// The reader's error: a `cachepart_trace::TraceError`, a
        /// `cachepart_curves::CurveError` for a sample index, or a plain
        /// message for a trace that reads but cannot serve (no such file,
        /// no instructions).
        source: Source,
    },
    /// A simulation failed once set up: the simulator, its machine or the
    /// controllers driving it.
    #[error("{run}: {source}")]
    Simulation {
        /// The run (`scenario NAME`, `run LABEL`).
        run: String,
        /// The simulator's error (`cachepart_sim::system::SystemError`,
        /// `cachepart_machine::MachineError`, `cachepart_policy::DriveError`).
        source: Source,
    },
    /// A run on the real machine (a mix, the daemon, a measurement) failed:
    /// the machine refused an action, a controller failed, or the host
    /// cannot run it.
    #[error("{}", kinds::joined(&[what.as_str(), &source.as_ref().map(ToString::to_string).unwrap_or_default()]))]
    Machine {
        /// What was being done (`MIX.toml`, the controller's name, ...).
        what: String,
        /// The machine's or controller's error, if any.
        source: Option<Source>,
    },
    /// An algorithm name or option is wrong.
    #[error("{0}")]
    Usage(String),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Encoding an output (Parquet, JSON) failed.
    #[error("{0}")]
    Output(String),
    /// Drawing a chart failed.
    #[error("chart: {0}")]
    Chart(String),
    /// The Linux backend failed (resctrl, counters, MSRs, processes).
    #[error(transparent)]
    Linux(Box<cachepart_linux::Error>),
    /// A run was stopped by SIGINT or SIGTERM.
    #[error("{0}")]
    Interrupted(String),
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
