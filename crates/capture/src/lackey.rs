//! The valgrind lackey route of a capture: [`capture_lackey`].
//!
//! It runs
//! `valgrind --tool=lackey --trace-mem=yes --vgdb=no --log-file=FIFO CMD ARGS...`,
//! where FIFO is a named pipe in a fresh private directory, and reads the
//! pipe through a [`LackeyReader`] into a trace writer, so memory stays
//! bounded and lackey's text never reaches the disk; [`stream_lackey`]
//! hands the records to the caller instead and writes no trace at all. The rest (the FIFO,
//! the temporary output, the child's lifetime, the program's exit status)
//! is shared with the qemu route in `route.rs`.

use std::ffi::{OsStr, OsString};
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use cachepart_trace::{Counts, LackeyReader, Record, TraceError};

use crate::command::{resolve_command, shell_words};
use crate::error::{CaptureError, CaptureResult};
use crate::options::{CaptureOptions, CaptureSummary, StreamSummary};
use crate::process::version_output;
use crate::route::{run_route, run_stream, Route, Sink};

/// Runs `command` (program and arguments) under valgrind lackey and writes
/// its memory trace to `output` in the binary format. See the crate
/// documentation for the guarantees.
pub fn capture_lackey(
    command: &[OsString],
    output: &Path,
    opts: &CaptureOptions,
) -> CaptureResult<CaptureSummary> {
    let (program, version, header) = prepare(command, opts)?;
    let route = Lackey {
        valgrind: &opts.valgrind,
        command,
    };
    run_route(&route, program, output, &header, opts, version)
}

/// Runs `command` under valgrind lackey and hands every record of its
/// memory trace to `consume`, in order, as it is decoded: one pass, no
/// trace file (only the FIFO, in a private directory removed on return).
/// The guarantees are [`capture_lackey`]'s (the tool killed and reaped
/// after an error or cancellation, the program's status in the summary);
/// `opts.header`, `level` and `compress_threads` are not used.
pub fn stream_lackey(
    command: &[OsString],
    opts: &CaptureOptions,
    consume: &mut dyn FnMut(Record),
) -> CaptureResult<StreamSummary> {
    let (program, version, _) = prepare(command, opts)?;
    let route = Lackey {
        valgrind: &opts.valgrind,
        command,
    };
    run_stream(&route, program, opts, version, &mut |r| {
        consume(r);
        Ok(())
    })
}

/// The program, valgrind's version and the trace header of a capture of
/// `command`; fails when valgrind or the program cannot be found.
fn prepare<'a>(
    command: &'a [OsString],
    opts: &CaptureOptions,
) -> CaptureResult<(&'a OsString, String, cachepart_trace::Header)> {
    let program = command.first().ok_or(CaptureError::EmptyCommand)?;
    let version = valgrind_version(&opts.valgrind)?;
    if resolve_command(program).is_none() {
        return Err(CaptureError::CommandNotFound {
            command: program.to_string_lossy().into_owned(),
        });
    }
    let header = opts
        .header
        .clone()
        .with_meta("source-format", "lackey")
        .with_meta("tool", "lackey")
        .with_meta("command", shell_words(command))
        .with_meta("valgrind-version", version.clone());
    Ok((program, version, header))
}

/// The lackey route.
struct Lackey<'a> {
    valgrind: &'a Path,
    command: &'a [OsString],
}

impl Route for Lackey<'_> {
    fn command(&self, fifo: &Path) -> Command {
        let mut log_arg = OsString::from("--log-file=");
        log_arg.push(escape_percent(fifo.as_os_str()));
        let mut cmd = Command::new(self.valgrind);
        // --vgdb=no: no gdbserver FIFOs in $TMPDIR, which a killed
        // valgrind could not remove
        cmd.args(["--tool=lackey", "--trace-mem=yes", "--vgdb=no"])
            .arg(log_arg)
            .args(self.command);
        cmd
    }

    fn spawn_error(&self, source: io::Error) -> CaptureError {
        CaptureError::ValgrindMissing {
            program: self.valgrind.to_path_buf(),
            source,
        }
    }

    fn start_error(&self, command: String, status: ExitStatus) -> CaptureError {
        valgrind_start_error(command, status)
    }

    fn decode(&self, input: &mut (dyn Read + Send), sink: &mut Sink<'_>) -> CaptureResult<Counts> {
        stream(input, sink)
    }
}

/// The error of a valgrind (lackey or cpgrind) that wrote nothing and
/// exited with `status`: 127 is valgrind's "command not found".
pub(crate) fn valgrind_start_error(command: String, status: ExitStatus) -> CaptureError {
    if status.code() == Some(127) {
        CaptureError::CommandNotFound { command }
    } else {
        CaptureError::ValgrindFailed { command, status }
    }
}

/// Reads lackey text from `input` into `sink` until end-of-file.
fn stream(input: &mut (dyn Read + Send), sink: &mut Sink<'_>) -> CaptureResult<Counts> {
    let mut counts = Counts::default();
    for r in LackeyReader::new(BufReader::with_capacity(1 << 20, input)) {
        let r = r.map_err(|e| match e {
            TraceError::Io(source) => CaptureError::Io {
                what: "reading valgrind's log through",
                path: PathBuf::from("the FIFO"),
                source,
            },
            e => CaptureError::Malformed(e),
        })?;
        counts.add(r);
        sink.push(r)?;
    }
    Ok(counts)
}

/// `valgrind --version`, or [`CaptureError::ValgrindMissing`].
pub(crate) fn valgrind_version(valgrind: &Path) -> CaptureResult<String> {
    let text = version_output(valgrind, |source| CaptureError::ValgrindMissing {
        program: valgrind.to_path_buf(),
        source,
    })?;
    Ok(text.trim().to_string())
}

/// valgrind expands `%p`, `%q{VAR}` and `%%` in `--log-file`.
fn escape_percent(s: &OsStr) -> OsString {
    let bytes = s.as_encoded_bytes();
    if !bytes.contains(&b'%') {
        return s.to_os_string();
    }
    let mut out = OsString::new();
    for (i, part) in s.to_string_lossy().split('%').enumerate() {
        if i > 0 {
            out.push("%%");
        }
        out.push(part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_is_escaped_for_valgrind() {
        assert_eq!(escape_percent(OsStr::new("/tmp/a%p/f")), "/tmp/a%%p/f");
        assert_eq!(escape_percent(OsStr::new("/tmp/f")), "/tmp/f");
    }

    #[test]
    fn missing_valgrind_names_the_debian_package() {
        let opts = CaptureOptions {
            valgrind: PathBuf::from("/nonexistent/valgrind"),
            ..CaptureOptions::default()
        };
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("t.cpt");
        let err = capture_lackey(&[OsString::from("true")], &out, &opts).unwrap_err();
        assert!(matches!(err, CaptureError::ValgrindMissing { .. }));
        assert!(
            err.to_string().contains("Debian package `valgrind`"),
            "{err}"
        );
        assert!(!out.exists());
    }
}
