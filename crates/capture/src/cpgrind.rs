//! The cpgrind route of a capture: the program under cachepart's own
//! valgrind tool (`vgtool.rs` builds it), whose raw records, in the qemu
//! plugin's stream format, go through a FIFO into the binary format.
//!
//! [`capture_cpgrind`] builds the tool if needed, then runs
//! `VALGRIND_LIB=DIR valgrind --tool=cpgrind -q --vgdb=no --cp-out=FIFO
//! [--cp-ifetch=yes] --cp-dep-window=N CMD ARGS...`; the stream is decoded
//! by the qemu route's `decode_raw`, and everything else (the FIFO, the
//! window, the temporary output, the child's lifetime, the errors) is
//! shared with the other routes in `route.rs`. The records are lackey's
//! (loads, stores, modifies and, with [`CaptureOptions::ifetch`],
//! instruction fetches), with loads whose address comes from a recent
//! load's data marked dependent ([`CaptureOptions::dep_window`]).

use std::ffi::OsString;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use cachepart_trace::{Counts, Header, Record};

use crate::command::{resolve_command, shell_words};
use crate::error::{CaptureError, CaptureResult};
use crate::lackey::{valgrind_start_error, valgrind_version};
use crate::options::{CaptureOptions, CaptureSummary, StreamSummary};
use crate::qemu_stream::decode_raw;
use crate::route::{run_route, run_stream, Route, Sink};
use crate::vgtool::{build_name, default_tool_dir, ensure_tool, find_valgrind_files, TOOL};

/// Runs `command` (program and arguments) under valgrind with cachepart's
/// tool cpgrind and writes its memory trace, with dependency hints, to
/// `output` in the binary format. Builds the tool on first use (see
/// [`crate::default_tool_dir`]). The guarantees are those of
/// [`crate::capture_lackey`].
pub fn capture_cpgrind(
    command: &[OsString],
    output: &Path,
    opts: &CaptureOptions,
) -> CaptureResult<CaptureSummary> {
    let (program, version, header, lib) = prepare(command, opts)?;
    let route = Cpgrind::new(opts, &lib, command);
    run_route(&route, program, output, &header, opts, version)
}

/// Runs `command` under cpgrind and hands every record to `consume`, in
/// order, as it is decoded: one pass, no trace file (as
/// [`crate::stream_lackey`]).
pub fn stream_cpgrind(
    command: &[OsString],
    opts: &CaptureOptions,
    consume: &mut dyn FnMut(Record),
) -> CaptureResult<StreamSummary> {
    let (program, version, _, lib) = prepare(command, opts)?;
    let route = Cpgrind::new(opts, &lib, command);
    run_stream(&route, program, opts, version, &mut |r| {
        consume(r);
        Ok(())
    })
}

/// Checks that valgrind runs and returns the directory to give it as
/// `VALGRIND_LIB` for `--tool=cpgrind`, building the tool with `opts.cc`
/// into `opts.tool_dir` (or [`default_tool_dir`]) if it is not there yet.
/// By hand: `VALGRIND_LIB=DIR valgrind --tool=cpgrind --cp-out=FILE
/// [--cp-ifetch=yes] [--cp-dep-window=N] PROGRAM ARGS...` writes raw
/// 8-byte records (see `docs/trace-format.md`) to FILE.
pub fn cpgrind_lib(opts: &CaptureOptions) -> CaptureResult<PathBuf> {
    let version = valgrind_version(&opts.valgrind)?;
    tool_lib(opts, &version)
}

fn tool_lib(opts: &CaptureOptions, version: &str) -> CaptureResult<PathBuf> {
    let files = find_valgrind_files(&opts.valgrind)?;
    let dir = opts.tool_dir.clone().unwrap_or_else(default_tool_dir);
    ensure_tool(&opts.cc, &dir, &files, version)
}

/// The program, valgrind's version, the trace header and the tool's
/// directory of a capture of `command`.
fn prepare<'a>(
    command: &'a [OsString],
    opts: &CaptureOptions,
) -> CaptureResult<(&'a OsString, String, Header, PathBuf)> {
    let program = command.first().ok_or(CaptureError::EmptyCommand)?;
    let version = valgrind_version(&opts.valgrind)?;
    let lib = tool_lib(opts, &version)?;
    if resolve_command(program).is_none() {
        return Err(CaptureError::CommandNotFound {
            command: program.to_string_lossy().into_owned(),
        });
    }
    let header = opts
        .header
        .clone()
        .with_meta("source-format", TOOL)
        .with_meta("tool", TOOL)
        .with_meta("command", shell_words(command))
        .with_meta("valgrind-version", version.clone())
        .with_meta("cpgrind-version", build_name(&version))
        .with_meta("ifetch", if opts.ifetch { "yes" } else { "no" })
        .with_meta("dep-window", opts.dep_window.to_string());
    Ok((program, version, header, lib))
}

/// The cpgrind route.
struct Cpgrind<'a> {
    valgrind: &'a Path,
    lib: &'a Path,
    ifetch: bool,
    dep_window: u64,
    command: &'a [OsString],
}

impl<'a> Cpgrind<'a> {
    /// The route of `command` under valgrind with the tool built in `lib`,
    /// with `opts`'s fetches and dependency window.
    fn new(opts: &'a CaptureOptions, lib: &'a Path, command: &'a [OsString]) -> Cpgrind<'a> {
        Cpgrind {
            valgrind: &opts.valgrind,
            lib,
            ifetch: opts.ifetch,
            dep_window: opts.dep_window,
            command,
        }
    }
}

impl Route for Cpgrind<'_> {
    fn command(&self, fifo: &Path) -> Command {
        let mut out = OsString::from("--cp-out=");
        out.push(fifo.as_os_str());
        let mut cmd = Command::new(self.valgrind);
        // -q: valgrind's banner would go to the program's stderr;
        // --vgdb=no: no gdbserver FIFOs left in $TMPDIR by a killed valgrind
        cmd.env("VALGRIND_LIB", self.lib)
            .arg(format!("--tool={TOOL}"))
            .args(["-q", "--vgdb=no"])
            .arg(out)
            .arg(format!(
                "--cp-ifetch={}",
                if self.ifetch { "yes" } else { "no" }
            ))
            .arg(format!("--cp-dep-window={}", self.dep_window))
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
        decode_raw(input, sink, TOOL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_valgrind_names_the_debian_package() {
        let opts = CaptureOptions {
            valgrind: PathBuf::from("/nonexistent/valgrind"),
            ..CaptureOptions::default()
        };
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("t.cpt");
        let err = capture_cpgrind(&[OsString::from("true")], &out, &opts).unwrap_err();
        assert!(
            matches!(err, CaptureError::ValgrindMissing { .. }),
            "{err:?}"
        );
        assert!(
            err.to_string().contains("Debian package `valgrind`"),
            "{err}"
        );
        assert!(!out.exists());
    }

    #[test]
    fn the_command_line_carries_the_options() {
        let cmd = [OsString::from("ls"), OsString::from("/usr")];
        let route = Cpgrind {
            valgrind: Path::new("valgrind"),
            lib: Path::new("/cache/cpgrind-x"),
            ifetch: true,
            dep_window: 64,
            command: &cmd,
        };
        let c = route.command(Path::new("/tmp/d/fifo"));
        let args: Vec<_> = c
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "--tool=cpgrind",
                "-q",
                "--vgdb=no",
                "--cp-out=/tmp/d/fifo",
                "--cp-ifetch=yes",
                "--cp-dep-window=64",
                "ls",
                "/usr"
            ]
        );
        let env: Vec<_> = c.get_envs().collect();
        assert_eq!(
            env,
            [(
                std::ffi::OsStr::new("VALGRIND_LIB"),
                Some(std::ffi::OsStr::new("/cache/cpgrind-x"))
            )]
        );
    }
}
