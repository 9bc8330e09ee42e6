//! `cachepart trace capture`: runs the capture library and turns its
//! outcome into an exit status. It owns the command's interruption: while
//! a capture runs, SIGINT and SIGTERM raise the capture's cancellation
//! flag (the library then kills and reaps the tool and removes its
//! temporaries) and cachepart exits with 128 + the signal (130, 143).

use std::ffi::OsString;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use cachepart_capture::{
    capture_cpgrind, capture_lackey, capture_qemu, resolve_command, CaptureError, CaptureOptions,
    CaptureProgress, CaptureSummary, DEFAULT_DEP_WINDOW,
};
use signal_hook::consts::{SIGINT, SIGTERM};

use crate::common_args::QuietArg;
use crate::output::Output;
use crate::trace_cmd::CaptureTool;

/// What `trace capture` records of the program: instruction fetches
/// (qemu and cpgrind routes), dependency hints (cpgrind) and its
/// instruction window.
pub struct Window {
    /// `--ifetch`.
    pub ifetch: bool,
    /// `--dep-window`.
    pub dep_window: Option<u64>,
    /// `--skip`.
    pub skip: u64,
    /// `--instructions`.
    pub instructions: Option<u64>,
}

/// `trace capture`: exits with the program's status when it failed, and
/// with 128 + N when interrupted by signal N. The output is checked before
/// the program starts: a regular file or a new path in an existing
/// directory (symlinks followed, as every command's output), and not the
/// program traced; `-` is refused, standard output being the program's.
pub fn capture(
    tool: CaptureTool,
    output: &Path,
    w: Window,
    command: &[OsString],
    quiet: &QuietArg,
) -> Result<()> {
    if matches!(tool, CaptureTool::Lackey) && w.ifetch {
        bail!("--ifetch is for --tool qemu or cpgrind: lackey always records instruction fetches");
    }
    if w.dep_window.is_some() && !matches!(tool, CaptureTool::Cpgrind) {
        bail!("--dep-window is for --tool cpgrind: lackey and qemu cannot see the data a load reads, so their traces have no dependency hints");
    }
    if w.instructions == Some(0) {
        bail!("--instructions 0: expected a positive count (or leave it out to record to the end)");
    }
    let out = Output::new("-o", output)?;
    let Some(file) = out.file_path() else {
        if output.as_os_str() == "-" {
            bail!("-o -: a capture cannot write its trace to standard output, which the traced program writes to; give a file name");
        }
        bail!(
            "-o {}: not a regular file; a capture writes its trace to a temporary file renamed into place, so give a file name",
            output.display()
        );
    };
    // the program as the capture runs it (PATH lookup): a missing one is
    // the capture's own error
    if let Some(program) = command.first().and_then(|p| resolve_command(p)) {
        out.check_not_input([program.as_path()])?;
    }
    let interrupt = Interrupt::register()?;
    let opts = CaptureOptions {
        ifetch: w.ifetch,
        dep_window: w.dep_window.unwrap_or(DEFAULT_DEP_WINDOW),
        skip: w.skip,
        instructions: w.instructions,
        cancel: Some(Arc::clone(&interrupt.cancel)),
        progress: quiet.progress().then(Arc::default),
        ..CaptureOptions::default()
    };
    let spinner = opts.progress.clone().and_then(|p| Spinner::start(p, quiet));
    let captured = match tool {
        CaptureTool::Lackey => capture_lackey(command, file, &opts),
        CaptureTool::Qemu => capture_qemu(command, file, &opts),
        CaptureTool::Cpgrind => capture_cpgrind(command, file, &opts),
    };
    drop(spinner);
    let s = match captured {
        Err(e @ CaptureError::Interrupted { .. }) => {
            eprintln!("error: {e}");
            std::process::exit(interrupt.exit_code());
        }
        r => r?,
    };
    eprintln!("{}", summary_line(output, &s));
    if s.window_ended {
        eprintln!(
            "{}: stopped after its window ({} instructions skipped, {} recorded)",
            command[0].to_string_lossy(),
            w.skip,
            s.instructions()
        );
    }
    if !s.success() {
        use std::os::unix::process::ExitStatusExt;
        let code = s
            .status
            .code()
            .or_else(|| s.status.signal().map(|n| 128 + n))
            .unwrap_or(1);
        eprintln!(
            "warning: {} exited with {}; the trace covers its run up to then",
            command[0].to_string_lossy(),
            s.status
        );
        std::process::exit(code);
    }
    Ok(())
}

/// The spinner of a running capture: a thread that shows the capture's
/// live figures five times a second until dropped.
struct Spinner {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Spinner {
    fn start(p: Arc<CaptureProgress>, quiet: &QuietArg) -> Option<Spinner> {
        let bar = quiet.bar(None, "{spinner} [{elapsed_precise}] {msg}")?;
        let done = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&done);
        let thread = std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                bar.set_message(format!(
                    "{:.1} M instructions, {:.1} M records kept",
                    p.instructions_seen() as f64 / 1e6,
                    p.records_kept() as f64 / 1e6
                ));
                bar.tick();
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
            bar.finish_and_clear();
        });
        Some(Spinner {
            done,
            thread: Some(thread),
        })
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// SIGINT and SIGTERM while a capture runs: the flag the capture polls,
/// and the last signal received (`trace capture` and `sim cachegrind --
/// CMD`).
pub(crate) struct Interrupt {
    cancel: Arc<AtomicBool>,
    signal: Arc<AtomicUsize>,
}

impl Interrupt {
    /// Replaces the default action of SIGINT and SIGTERM (ending the
    /// process at once, which would leave the tool and the temporaries) by
    /// raising the flag.
    pub(crate) fn register() -> Result<Interrupt> {
        let cancel = Arc::new(AtomicBool::new(false));
        let signal = Arc::new(AtomicUsize::new(0));
        for sig in [SIGINT, SIGTERM] {
            signal_hook::flag::register_usize(sig, Arc::clone(&signal), sig as usize)
                .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&cancel)))
                .with_context(|| format!("installing the handler of signal {sig}"))?;
        }
        Ok(Interrupt { cancel, signal })
    }

    /// The cancellation flag to give the capture.
    pub(crate) fn cancel(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.cancel)
    }

    /// 128 + the signal received (130 when none was recorded).
    pub(crate) fn exit_code(&self) -> i32 {
        match self.signal.load(Ordering::SeqCst) {
            0 => 128 + SIGINT,
            n => 128 + n as i32,
        }
    }
}

/// One line: records, accesses, seconds and the capture rate.
fn summary_line(output: &Path, s: &CaptureSummary) -> String {
    format!(
        "{}: {} records, {} accesses, {} instructions in {:.2} s ({:.2} M accesses/s, {:.3} bytes/access)",
        output.display(),
        s.records(),
        s.accesses(),
        s.instructions(),
        s.seconds,
        s.accesses_per_second() / 1e6,
        s.written.bytes as f64 / s.accesses().max(1) as f64,
    )
}
