//! `cachepart trace capture`: record a real program's memory accesses,
//! streamed straight into cachepart's binary trace format
//! (`cachepart-trace`).
//!
//! This crate owns every program that cachepart starts to trace another:
//!
//! * [`capture_lackey`] (`lackey.rs`): the program under valgrind lackey,
//!   whose text log is parsed by [`cachepart_trace::LackeyReader`];
//!   [`stream_lackey`] hands the records to the caller as they come (one
//!   pass, no trace file: `cachepart sim cachegrind -- CMD`).
//! * [`capture_qemu`] (`qemu.rs`, `qemu_stream.rs`): the program under
//!   qemu-user with cachepart's own TCG plugin, whose C source and gcc
//!   build are in `plugin.rs` ([`qemu_plugin`], [`default_plugin_dir`]).
//! * [`capture_cpgrind`] (`cpgrind.rs`, `vgtool.rs`): the program under
//!   valgrind with cachepart's own tool cpgrind, built with gcc against
//!   Debian's valgrind package ([`cpgrind_lib`], [`default_tool_dir`]); it
//!   writes the qemu plugin's raw records, with dependency hints.
//! * What the routes share: the route runner (`route.rs`), the FIFO in a private
//!   temporary directory (`fifo.rs`), the temporary output renamed on
//!   success (`output.rs`), the command's lookup and quoting
//!   (`command.rs`: [`resolve_command`]), and the child processes' lifetime (`process.rs`).
//! * [`CaptureOptions`], [`CaptureSummary`] and the typed [`CaptureError`];
//!   [`CaptureProgress`], the live figures a caller may display.
//!
//! Guarantees of every route:
//!
//! * A successful capture renames a complete trace into place; a program
//!   that exits non-zero or dies of a signal still yields the trace of
//!   what it did, with its status in [`CaptureSummary::status`].
//! * After any error there is no output file, no temporary file and no
//!   FIFO directory, and the tool has been killed and reaped.
//! * The tool dies with this process, even when this process is killed
//!   with `SIGKILL` (Linux: `PR_SET_PDEATHSIG`).
//! * Cancellation: the library installs no signal handler. A caller that
//!   wants Ctrl-C to stop a capture raises [`CaptureOptions::cancel`]
//!   from its own handler (e.g. `signal_hook::flag::register`); the
//!   capture then kills and reaps the tool, removes its temporaries and
//!   returns [`CaptureError::Interrupted`].
//!
//! ```no_run
//! use std::ffi::OsString;
//! use std::path::Path;
//! use cachepart_capture::{capture_lackey, CaptureOptions};
//! let cmd = [OsString::from("ls"), OsString::from("/usr")];
//! let s = capture_lackey(&cmd, Path::new("ls.cpt"), &CaptureOptions::default()).unwrap();
//! println!("{} accesses", s.accesses());
//! ```
#![deny(missing_docs)]

mod command;
mod cpgrind;
mod error;
mod fifo;
mod lackey;
mod options;
mod output;
mod plugin;
mod process;
mod progress;
mod qemu;
mod qemu_stream;
mod route;
mod vgtool;
mod window;

pub use command::resolve_command;
pub use cpgrind::{capture_cpgrind, cpgrind_lib, stream_cpgrind};
pub use error::{CaptureError, CaptureResult};
pub use lackey::{capture_lackey, stream_lackey};
pub use options::{
    CaptureOptions, CaptureSummary, StreamSummary, DEFAULT_DEP_WINDOW, FAST_SKIP_MARGIN,
};
pub use plugin::default_plugin_dir;
pub use progress::CaptureProgress;
pub use qemu::{capture_qemu, qemu_plugin, QemuPlugin};
pub use vgtool::default_tool_dir;
