//! What a capture is asked to do ([`CaptureOptions`], shared by the
//! routes) and what it reports ([`CaptureSummary`], or [`StreamSummary`]
//! for a capture streamed to the caller without a trace file).

use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use cachepart_trace::{Counts, Header, WriteSummary, DEFAULT_LEVEL};

use crate::progress::CaptureProgress;

/// How to capture (fields of one route are ignored by the other).
#[derive(Clone, Debug)]
pub struct CaptureOptions {
    /// The valgrind program (default `valgrind`, looked up on `PATH`).
    pub valgrind: PathBuf,
    /// The qemu-user program (default `qemu-ARCH` for this machine's
    /// architecture, e.g. `qemu-x86_64`, looked up on `PATH`).
    pub qemu: PathBuf,
    /// The C compiler that builds the qemu plugin (default `gcc`).
    pub cc: PathBuf,
    /// Where the built qemu plugin is cached (default: see
    /// [`crate::default_plugin_dir`]).
    pub plugin_dir: Option<PathBuf>,
    /// Where the built valgrind tool cpgrind is cached (default: see
    /// [`crate::default_tool_dir`]).
    pub tool_dir: Option<PathBuf>,
    /// qemu and cpgrind routes: also record an instruction fetch per
    /// executed instruction (lackey always does).
    pub ifetch: bool,
    /// cpgrind route: mark a load dependent ([`cachepart_trace::Kind::DepLoad`])
    /// when its address was computed from the data of a load that executed
    /// at most this many instructions earlier; 0: no hints (default
    /// [`DEFAULT_DEP_WINDOW`]).
    pub dep_window: u64,
    /// The header to start from (frame size, page size hint, extra
    /// metadata); the capture adds `source-format`, `tool`, `command` and
    /// the tool's version.
    pub header: Header,
    /// zstd compression level.
    pub level: i32,
    /// Threads compressing the trace's frames while the tool runs (0: one
    /// per available CPU, at most [`cachepart_trace::MAX_DEFAULT_THREADS`];
    /// the file does not depend on it).
    pub compress_threads: usize,
    /// Cancellation: once this flag is `true` (a signal handler of the
    /// caller's may set it), the capture kills and reaps its child, removes
    /// its temporaries and returns
    /// [`CaptureError::Interrupted`](crate::CaptureError::Interrupted)
    /// within a few tens of milliseconds. The library installs no signal
    /// handler itself.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Instructions of the program left out before recording starts (its
    /// start-up); 0 records from the start.
    pub skip: u64,
    /// qemu route: count most of `skip` inside the plugin without
    /// recording its accesses (all but the last [`FAST_SKIP_MARGIN`]
    /// instructions), which runs the start-up several times faster. The
    /// trace is the same either way; `false` records the whole start-up
    /// and drops it here, as the lackey route does.
    pub fast_skip: bool,
    /// Instructions to record (after `skip`); the capture then stops the
    /// program and the trace is complete (`None`: to the program's end).
    pub instructions: Option<u64>,
    /// Live figures (instructions seen, records kept) that the capture
    /// updates as it decodes, for a progress display on another thread.
    pub progress: Option<Arc<CaptureProgress>>,
}

/// The default dependency window of the cpgrind route
/// ([`CaptureOptions::dep_window`]): about a reorder buffer's reach.
pub const DEFAULT_DEP_WINDOW: u64 = 256;

/// Instructions before the window that a fast skip
/// ([`CaptureOptions::fast_skip`]) still records: the plugin switches to
/// recording a few blocks after it has counted `skip - FAST_SKIP_MARGIN`,
/// well before the window starts.
pub const FAST_SKIP_MARGIN: u64 = 1 << 24;

impl CaptureOptions {
    /// The instructions the qemu plugin counts without recording: `skip`
    /// less [`FAST_SKIP_MARGIN`] when [`CaptureOptions::fast_skip`] is on
    /// (0: none).
    pub fn plugin_skip(&self) -> u64 {
        if self.fast_skip {
            self.skip.saturating_sub(FAST_SKIP_MARGIN)
        } else {
            0
        }
    }

    /// Whether [`CaptureOptions::cancel`] is raised.
    pub fn cancelled(&self) -> bool {
        self.cancel
            .as_deref()
            .is_some_and(|c| c.load(Ordering::SeqCst))
    }
}

impl Default for CaptureOptions {
    fn default() -> Self {
        CaptureOptions {
            valgrind: PathBuf::from("valgrind"),
            qemu: PathBuf::from(format!("qemu-{}", std::env::consts::ARCH)),
            cc: PathBuf::from("gcc"),
            plugin_dir: None,
            tool_dir: None,
            ifetch: false,
            dep_window: DEFAULT_DEP_WINDOW,
            header: Header::default(),
            level: DEFAULT_LEVEL,
            compress_threads: 0,
            cancel: None,
            skip: 0,
            fast_skip: true,
            instructions: None,
            progress: None,
        }
    }
}

/// What a capture recorded.
#[derive(Clone, Debug)]
pub struct CaptureSummary {
    /// Records by kind and instructions.
    pub counts: Counts,
    /// What the writer wrote (records, frames, bytes).
    pub written: WriteSummary,
    /// How the program (valgrind and qemu pass its status through) ended.
    pub status: ExitStatus,
    /// Wall-clock seconds from starting the tool to the finished file.
    pub seconds: f64,
    /// The tool's version: `valgrind --version` (e.g. `valgrind-3.19.0`)
    /// or the first line of `qemu-x86_64 --version`.
    pub tool_version: String,
    /// Whether the capture stopped the program at the end of its
    /// instruction window ([`CaptureOptions::instructions`]); `status` is
    /// then the kill's.
    pub window_ended: bool,
}

impl CaptureSummary {
    /// Records written.
    pub fn records(&self) -> u64 {
        self.counts.records
    }

    /// Accesses written (records that are not escapes).
    pub fn accesses(&self) -> u64 {
        self.counts.accesses()
    }

    /// Instructions the program executed.
    pub fn instructions(&self) -> u64 {
        self.counts.instructions
    }

    /// Whether the program exited with status 0, or was stopped at the
    /// end of its instruction window.
    pub fn success(&self) -> bool {
        self.window_ended || self.status.success()
    }

    /// Accesses captured per wall-clock second.
    pub fn accesses_per_second(&self) -> f64 {
        self.accesses() as f64 / self.seconds.max(1e-9)
    }
}

/// What a capture streamed to the caller ([`crate::stream_lackey`]) saw.
#[derive(Clone, Debug)]
pub struct StreamSummary {
    /// Records by kind and instructions.
    pub counts: Counts,
    /// How the program ended.
    pub status: ExitStatus,
    /// Wall-clock seconds from starting the tool to its end.
    pub seconds: f64,
    /// The tool's version (`valgrind --version`).
    pub tool_version: String,
    /// Whether the capture stopped the program at the end of its
    /// instruction window.
    pub window_ended: bool,
}

impl StreamSummary {
    /// Whether the program exited with status 0, or was stopped at the
    /// end of its instruction window.
    pub fn success(&self) -> bool {
        self.window_ended || self.status.success()
    }
}
