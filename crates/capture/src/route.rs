//! What both capture routes share: a [`Route`] (the tool's command line
//! and how to decode its bytes) run by [`run_route`] into a trace file, or
//! by [`run_tool`] into any [`Sink`] (the one-pass simulation of
//! `cachepart sim cachegrind -- CMD`, which writes no trace).
//!
//! [`run_tool`] makes the FIFO ([`Fifo`]), starts the tool as a
//! [`TiedChild`] writing into the FIFO, and decodes the FIFO into the sink
//! on the caller's thread while a supervising thread waits for the tool;
//! [`run_route`] adds the temporary output ([`TempOutput`]) and its
//! [`Writer`]. The program's stdin,
//! stdout and stderr are the caller's: only the tool's trace goes through
//! the pipe.
//!
//! A program that exits with a non-zero status (or is killed by a signal)
//! still yields a trace of everything it did up to then:
//! [`CaptureSummary::status`] says how it ended and the caller decides what
//! to make of it. Any error (a malformed stream, a write failure) and the
//! caller's cancellation kill and reap the tool at once, and then the FIFO
//! directory and the temporary output are removed: after an error there is
//! no output file, no temporary and no child left.

use std::ffi::OsStr;
use std::io::{self, BufWriter, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use cachepart_trace::{Counts, Header, Record, Writer};

use crate::error::{CaptureError, CaptureResult};
use crate::fifo::{Counted, Fifo};
use crate::options::{CaptureOptions, CaptureSummary, StreamSummary};
use crate::output::TempOutput;
use crate::process::{Ended, TiedChild};
use crate::progress::Tally;
use crate::window::{Admit, Window};

/// One capture route: the tool's command line and how to decode what it
/// writes into the FIFO.
pub(crate) trait Route {
    /// The command to start, writing its trace into `fifo`.
    fn command(&self, fifo: &Path) -> Command;
    /// The error when the tool cannot be spawned.
    fn spawn_error(&self, source: io::Error) -> CaptureError;
    /// The error when the tool wrote nothing and exited with `status`: it
    /// could not start the program.
    fn start_error(&self, command: String, status: ExitStatus) -> CaptureError;
    /// Decodes the FIFO's bytes into `sink` until end-of-file.
    fn decode(&self, input: &mut (dyn Read + Send), sink: &mut Sink<'_>) -> CaptureResult<Counts>;
}

/// Where decoded records go: a trace [`Writer`] or a caller's consumer
/// (any `FnMut(Record) -> CaptureResult<()>` is one). An error stops the
/// capture. The fallible counterpart of the trace crate's
/// `cachepart_trace::RecordSink`, which a frame decoder fills.
pub(crate) trait CaptureSink {
    /// Takes one record.
    fn push(&mut self, r: Record) -> CaptureResult<()>;

    /// Takes `records` in order, as [`Self::push`] of each would; a route
    /// that decodes a run of records at once (the raw words of the qemu
    /// plugin and cpgrind) hands them over here, and a trace writer copies
    /// them in one go instead of one call a record.
    fn push_slice(&mut self, records: &[Record]) -> CaptureResult<()> {
        records.iter().try_for_each(|&r| self.push(r))
    }
}

impl<F: FnMut(Record) -> CaptureResult<()>> CaptureSink for F {
    fn push(&mut self, r: Record) -> CaptureResult<()> {
        self(r)
    }
}

/// A [`CaptureSink`] as routes take it.
pub(crate) type Sink<'a> = dyn CaptureSink + 'a;

/// A trace [`Writer`] as a [`CaptureSink`].
struct WriterSink<'w, W: std::io::Write>(&'w mut Writer<W>);

impl<W: std::io::Write> CaptureSink for WriterSink<'_, W> {
    fn push(&mut self, r: Record) -> CaptureResult<()> {
        Ok(self.0.push(r)?)
    }

    fn push_slice(&mut self, records: &[Record]) -> CaptureResult<()> {
        Ok(self.0.push_slice(records)?)
    }
}

/// A sink that notes every record it passes on in a progress [`Tally`]
/// (a whole capture with progress shown), runs of records included.
struct Tallied<'t, 'p, 's> {
    tally: &'t mut Tally<'p>,
    sink: &'t mut Sink<'s>,
}

impl CaptureSink for Tallied<'_, '_, '_> {
    fn push(&mut self, r: Record) -> CaptureResult<()> {
        self.tally.note(r, true);
        self.sink.push(r)
    }

    fn push_slice(&mut self, records: &[Record]) -> CaptureResult<()> {
        for &r in records {
            self.tally.note(r, true);
        }
        self.sink.push_slice(records)
    }
}

/// The error of a capture of `program` that was cancelled.
pub(crate) fn interrupted(program: &OsStr) -> CaptureError {
    CaptureError::Interrupted {
        command: program.to_string_lossy().into_owned(),
    }
}

/// Runs `route` for `program` with its trace going through a FIFO into
/// `output` (through a temporary file renamed on success).
pub(crate) fn run_route(
    route: &dyn Route,
    program: &OsStr,
    output: &Path,
    header: &Header,
    opts: &CaptureOptions,
    tool_version: String,
) -> CaptureResult<CaptureSummary> {
    if opts.cancelled() {
        return Err(interrupted(program));
    }
    let (out, file) = TempOutput::beside(output)?;
    let mut writer =
        Writer::with_level(BufWriter::with_capacity(1 << 20, file), header, opts.level)?;
    if opts.compress_threads > 0 {
        writer = writer.with_threads(opts.compress_threads);
    }
    let start = Instant::now();
    let ran = run_tool(route, program, opts, &mut WriterSink(&mut writer))?;
    let (_, written) = writer.finish()?;
    out.commit(output)?;
    Ok(CaptureSummary {
        counts: ran.counts,
        written,
        status: ran.status,
        seconds: start.elapsed().as_secs_f64(),
        tool_version,
        window_ended: ran.window_ended,
    })
}

/// Runs `route` for `program` with every record going through a FIFO into
/// `sink`; nothing is written to disk but the FIFO.
pub(crate) fn run_stream(
    route: &dyn Route,
    program: &OsStr,
    opts: &CaptureOptions,
    tool_version: String,
    sink: &mut Sink<'_>,
) -> CaptureResult<StreamSummary> {
    let start = Instant::now();
    let ran = run_tool(route, program, opts, sink)?;
    Ok(StreamSummary {
        counts: ran.counts,
        status: ran.status,
        seconds: start.elapsed().as_secs_f64(),
        tool_version,
        window_ended: ran.window_ended,
    })
}

/// How a tool's run went: the records passed on, how the program ended,
/// and whether the capture stopped it at its window's end.
pub(crate) struct Ran {
    pub(crate) counts: Counts,
    pub(crate) status: ExitStatus,
    pub(crate) window_ended: bool,
}

/// Runs the tool of `route` for `program` and decodes what it writes
/// into the FIFO into `sink`, through the instruction window of `opts`;
/// returns the counts passed on and how the program ended (stopped by the
/// capture when its window ended). The FIFO's directory is gone when this
/// returns, whatever the outcome.
pub(crate) fn run_tool(
    route: &dyn Route,
    program: &OsStr,
    opts: &CaptureOptions,
    sink: &mut Sink<'_>,
) -> CaptureResult<Ran> {
    if opts.cancelled() {
        return Err(interrupted(program));
    }
    let fifo = Fifo::new()?;

    // Hold a read-write handle so that neither our open nor the tool's
    // blocks, and EOF comes only after the tool has exited.
    let keep = fifo.open_keep()?;
    let read_end = fifo.open_read()?;

    let mut child =
        TiedChild::spawn(&mut route.command(fifo.path())).map_err(|e| route.spawn_error(e))?;
    let cancel = opts.cancel.as_deref();
    // raised when decoding failed: the tool is of no more use
    let failed = AtomicBool::new(false);
    // raised when the window has ended: the rest of the run is not wanted
    let window_ended = AtomicBool::new(false);
    let stop =
        || failed.load(Ordering::SeqCst) || window_ended.load(Ordering::SeqCst) || opts.cancelled();
    let mut window = Window::new(opts.skip, opts.instructions);
    let whole = window.is_whole();

    let (streamed, ended, bytes) = std::thread::scope(|scope| {
        let waiter = scope.spawn(|| {
            let ended = child.wait_or_stop(stop);
            drop(keep);
            ended
        });
        let mut input = Counted::new(read_end, cancel);
        let mut tally = opts.progress.as_deref().map(Tally::new);
        let streamed = if whole {
            match &mut tally {
                None => route.decode(&mut input, sink),
                Some(tally) => route.decode(&mut input, &mut Tallied { tally, sink }),
            }
        } else {
            route
                .decode(&mut input, &mut |r| {
                    let admit = window.admit(r);
                    if let Some(t) = &mut tally {
                        t.note(r, matches!(admit, Admit::Keep | Admit::Last));
                    }
                    match admit {
                        Admit::Before | Admit::After => Ok(()),
                        Admit::Keep => sink.push(r),
                        Admit::Last => {
                            let done = sink.push(r);
                            window_ended.store(true, Ordering::SeqCst);
                            done
                        }
                    }
                })
                .map(|_| window.kept().clone())
        };
        drop(tally);
        if streamed.is_err() {
            failed.store(true, Ordering::SeqCst);
        }
        let bytes = input.bytes;
        // the tool gets EPIPE (or is killed) rather than block on a full pipe
        drop(input);
        let ended = waiter.join().expect("the tool's waiter does not panic");
        (streamed, ended, bytes)
    });
    if opts.cancelled() {
        return Err(interrupted(program));
    }
    let ended = ended.map_err(|source| CaptureError::Io {
        what: "waiting for the capture of",
        path: PathBuf::from(program),
        source,
    })?;
    let ended_window = window_ended.load(Ordering::SeqCst);
    let status = match ended {
        Ended::Exited(status) => status,
        // the capture killed the program at its window's end
        Ended::Stopped if ended_window && streamed.is_ok() => {
            use std::os::unix::process::ExitStatusExt;
            ExitStatus::from_raw(libc::SIGKILL)
        }
        // otherwise only a decoding error stops the tool when not cancelled
        Ended::Stopped => return Err(streamed.err().unwrap_or_else(|| interrupted(program))),
    };
    if bytes == 0 && !status.success() {
        // The tool wrote nothing: it could not start the program.
        return Err(route.start_error(program.to_string_lossy().into_owned(), status));
    }
    if !whole && streamed.is_ok() && window.kept().records == 0 {
        return Err(CaptureError::SkippedPastEnd {
            command: program.to_string_lossy().into_owned(),
            instructions: window.seen(),
            skip: opts.skip,
        });
    }
    Ok(Ran {
        counts: streamed?,
        status,
        window_ended: ended_window,
    })
}
