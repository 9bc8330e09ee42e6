//! The errors of the Linux backend: each names the file it concerns and what
//! the kernel said.

use std::io;
use std::path::PathBuf;
use thiserror::Error;

/// Result of the Linux backend.
pub type Result<T> = std::result::Result<T, Error>;

/// What went wrong talking to the kernel.
#[derive(Debug, Error)]
pub enum Error {
    /// A file could not be read, written, created or removed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the kernel said.
        #[source]
        source: io::Error,
    },
    /// A directory cannot be used to mount the emulated resctrl.
    #[error("{path}: {why}")]
    Mountpoint {
        /// The mountpoint given.
        path: PathBuf,
        /// What is wrong with it, and what is expected.
        why: String,
    },
    /// A file's contents are not what the kernel writes there.
    #[error("{path}: {what}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What was found and what was expected.
        what: String,
    },
    /// The kernel refused a write; `status` is `info/last_cmd_status`.
    #[error("{path}: the kernel refused '{written}' ({source}): {status}")]
    Refused {
        /// The file written.
        path: PathBuf,
        /// The text written (without its newline).
        written: String,
        /// The errno of the write.
        #[source]
        source: io::Error,
        /// The kernel's explanation (`info/last_cmd_status`), or a note
        /// that it could not be read.
        status: String,
    },
    /// A schemata line cachepart refuses before writing, in resctrl's words.
    #[error("schemata {resource}: {reason}")]
    Invalid {
        /// The resource (`L3`, `MB`, ...).
        resource: String,
        /// What is wrong, in the kernel's words where it has them.
        reason: String,
    },
    /// The mount has no free CLOSID (or RMID) for another group.
    #[error("{mount}: no free {what}: {used} of {total} in use; cluster the applications or remove groups")]
    Exhausted {
        /// The resctrl mount.
        mount: PathBuf,
        /// `CLOSID` or `RMID`.
        what: &'static str,
        /// How many are in use.
        used: u32,
        /// How many the hardware has (`num_closids`, `num_rmids`).
        total: u32,
    },
    /// Another manager holds the lock on the mount.
    #[error(
        "{mount}: resctrl is managed by another process ({holder}); stop it or wait for it to exit"
    )]
    Locked {
        /// The resctrl mount.
        mount: PathBuf,
        /// Who holds the lock (`pid 1234 (cachepart)`, or `pid unknown`).
        holder: String,
    },
    /// A group name cachepart does not own or cannot use.
    #[error("group name '{name}': {why}")]
    BadName {
        /// The name given.
        name: String,
        /// What is expected.
        why: String,
    },
    /// The mount lacks a resource the request needs.
    #[error("{mount}: resctrl has no {what} (info/ lists {found})")]
    Unsupported {
        /// The resctrl mount.
        mount: PathBuf,
        /// What is missing (`L3 monitoring`, `MB`, ...).
        what: String,
        /// The resources the mount has.
        found: String,
    },
    /// The kernel offers no hardware performance counters.
    #[error("no hardware performance counters: {what}; fix: run on a host CPU with its PMU exposed, or pass --fake-counters")]
    NoPmu {
        /// What is missing.
        what: String,
    },
    /// A perf counter could not be opened or read.
    #[error("{what}: {source}")]
    Counter {
        /// The counter and the process.
        what: String,
        /// What the kernel said.
        #[source]
        source: io::Error,
    },
    /// MSR access refused by cachepart (not allowed, unknown CPU model, a
    /// setting the model lacks).
    #[error("MSR {msr:#x}: {why}")]
    Msr {
        /// The MSR.
        msr: u32,
        /// Why it is refused.
        why: String,
    },
    /// A plan needs more control groups than the mount has CLOSIDs free.
    #[error("{mount}: the plan has {clusters} clusters but only {free} CLOSIDs are free ({total} in all, {others} held by groups that are not this run's, 1 by the default group); cluster the apps (LFOC and KPart do) or remove groups")]
    TooManyClusters {
        /// The resctrl mount.
        mount: PathBuf,
        /// Clusters in the plan.
        clusters: usize,
        /// CLOSIDs this run may use.
        free: u32,
        /// `num_closids`.
        total: u32,
        /// Control groups of other managers.
        others: u32,
    },
    /// An app of the mix that cannot run here, refused before anything
    /// starts (an empty command, a core this machine lacks).
    #[error("app {index} ({name}): {why}")]
    App {
        /// Its index in the mix.
        index: usize,
        /// Its name.
        name: String,
        /// What is wrong and what is expected.
        why: String,
    },
    /// A process could not be started, placed or waited for.
    #[error("{what}: {source}")]
    Process {
        /// The command or process.
        what: String,
        /// What the kernel said.
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// An [`Error::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// An [`Error::Parse`] for `path`.
    pub fn parse(path: impl Into<PathBuf>, what: impl Into<String>) -> Self {
        Error::Parse {
            path: path.into(),
            what: what.into(),
        }
    }
}
