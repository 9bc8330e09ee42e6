//! The errors of a capture ([`CaptureError`]): everything that can stop
//! either route, from a missing tool to an interruption. After any of them
//! no output file, temporary file or FIFO directory is left, and the
//! capture's child process has been ended and reaped.

use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;

use cachepart_trace::TraceError;
use thiserror::Error;

/// Errors of [`capture_lackey`](crate::capture_lackey),
/// [`capture_qemu`](crate::capture_qemu) and
/// [`capture_cpgrind`](crate::capture_cpgrind). After any of them no output file
/// exists.
#[derive(Debug, Error)]
pub enum CaptureError {
    /// No command was given.
    #[error("no command to capture")]
    EmptyCommand,
    /// valgrind cannot be run.
    #[error("valgrind not found ({}: {source}): install the Debian package `valgrind` (apt-get install valgrind)", program.display())]
    ValgrindMissing {
        /// The valgrind program that was tried.
        program: PathBuf,
        /// Why it could not be run.
        source: io::Error,
    },
    /// qemu-user cannot be run.
    #[error("qemu-user not found ({}: {source}): install the Debian package `qemu-user` (apt-get install qemu-user; `qemu-user-static` cannot load plugins)", program.display())]
    QemuMissing {
        /// The qemu-user program that was tried.
        program: PathBuf,
        /// Why it could not be run.
        source: io::Error,
    },
    /// The C compiler that builds the qemu plugin cannot be run.
    #[error("C compiler not found ({}: {source}): install the Debian package `gcc` (apt-get install gcc) to build the qemu plugin", program.display())]
    CompilerMissing {
        /// The compiler that was tried.
        program: PathBuf,
        /// Why it could not be run.
        source: io::Error,
    },
    /// The qemu plugin did not compile.
    #[error("building the qemu plugin {} failed: {reason}", path.display())]
    PluginBuild {
        /// The plugin being built.
        path: PathBuf,
        /// The compiler's message, or what else went wrong.
        reason: String,
    },
    /// The C compiler that builds the valgrind tool cpgrind cannot be run.
    #[error("C compiler not found ({}: {source}): install the Debian package `gcc` (apt-get install gcc) to build the valgrind tool cpgrind", program.display())]
    ToolCompilerMissing {
        /// The compiler that was tried.
        program: PathBuf,
        /// Why it could not be run.
        source: io::Error,
    },
    /// What building the valgrind tool cpgrind needs from valgrind (its
    /// tool headers, static libraries, library directory) is missing.
    #[error("cannot build the valgrind tool cpgrind: {what} not found: install the Debian package `valgrind` (apt-get install valgrind), which ships them")]
    ValgrindDev {
        /// What is missing, and where it was looked for.
        what: String,
    },
    /// The valgrind tool cpgrind did not compile or link.
    #[error("building the valgrind tool cpgrind {} failed: {reason}", path.display())]
    ToolBuild {
        /// The tool's directory being built.
        path: PathBuf,
        /// The compiler's message, or what else went wrong.
        reason: String,
    },
    /// The program ended within the instructions to skip: the window is
    /// empty.
    #[error("{command} ended after {instructions} instructions, within the {skip} to skip: nothing was recorded")]
    SkippedPastEnd {
        /// The program.
        command: String,
        /// The instructions it ran.
        instructions: u64,
        /// The instructions to skip.
        skip: u64,
    },
    /// The command to capture does not exist (not a file, not on `PATH`).
    #[error("command not found: {command}")]
    CommandNotFound {
        /// The command as given.
        command: String,
    },
    /// valgrind exited without starting the program (for instance, it is
    /// not executable); valgrind's own message went to stderr.
    #[error("valgrind could not start {command} ({status}; its message is above)")]
    ValgrindFailed {
        /// The command as given.
        command: String,
        /// valgrind's exit status.
        status: ExitStatus,
    },
    /// qemu exited without running the program (not an ELF executable of
    /// this architecture, plugin refused...); qemu's own message, if any
    /// (QEMU 7.2 prints none for a file that is not an ELF executable),
    /// went to stderr.
    #[error("qemu could not run {command} with the cachepart plugin ({status}): qemu-user runs ELF executables of this machine only, not scripts; any message of qemu's is above")]
    QemuFailed {
        /// The command as given.
        command: String,
        /// qemu's exit status.
        status: ExitStatus,
    },
    /// The program was killed by a signal (a fault, not a kill it sent
    /// itself) before the qemu plugin wrote any record: qemu-user does not
    /// run plugin exit callbacks on a fatal signal, so the records still
    /// buffered (up to 1 Mi per thread) are lost.
    #[error("{command} was killed ({status}) before the qemu plugin wrote any record (qemu-user skips the plugin's exit on a fatal signal; try --tool lackey)")]
    QemuKilled {
        /// The command as given.
        command: String,
        /// qemu's exit status.
        status: ExitStatus,
    },
    /// The caller's cancellation flag
    /// ([`CaptureOptions::cancel`](crate::CaptureOptions::cancel)) was
    /// raised: the tool was killed and reaped, and nothing was written.
    #[error("the capture of {command} was interrupted: the program was stopped and no trace was written")]
    Interrupted {
        /// The command as given.
        command: String,
    },
    /// lackey wrote something that is not a lackey trace; the error names
    /// the line (counted from the start of valgrind's log).
    #[error("malformed lackey output: {0}")]
    Malformed(#[source] TraceError),
    /// The qemu plugin or cpgrind wrote a word that is not a record, or
    /// stopped inside a record.
    #[error("malformed {source_name} output at byte offset {offset}: {reason}")]
    MalformedStream {
        /// What wrote the stream: `qemu plugin` or `cpgrind`.
        source_name: &'static str,
        /// Byte offset in the plugin's stream.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// The FIFO could not be made.
    #[error("cannot create the FIFO {}: {reason}", path.display())]
    Fifo {
        /// The FIFO's path.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// An I/O error on a named file.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// Writing the trace failed.
    #[error(transparent)]
    Trace(#[from] TraceError),
}

/// Result alias of the capture routes.
pub type CaptureResult<T> = std::result::Result<T, CaptureError>;
