//! The qemu route of `trace capture`: a real program run under qemu-user
//! with cachepart's own TCG plugin, its raw records streamed through a FIFO
//! into the binary format.
//!
//! [`capture_qemu`] builds the plugin if needed (`plugin.rs`), then
//! runs
//! `qemu-x86_64 -plugin PLUGIN.so,out=FIFO[,ifetch=on][,skip=N,start=M] -0 CMD /path/of/CMD ARGS...`
//! (qemu-user does not search `PATH`, so the program is resolved here and
//! its `argv[0]` kept as given). The plugin writes 8-byte records in the
//! bit layout of [`Record`](cachepart_trace::Record), in chunks of a
//! million per guest thread; `qemu_stream.rs` checks each word and feeds
//! the trace writer. Everything else (the FIFO, the temporary output, the
//! child's lifetime, the program's exit status, the errors) is shared
//! with the lackey route in `route.rs`.
//!
//! What the trace holds: every guest load and store (x86 read-modify-write
//! instructions give a load and a store, not lackey's modify), with the
//! guest instructions between them as gaps, or with
//! [`CaptureOptions::ifetch`] an instruction fetch record per executed
//! instruction (and gaps of 0, like lackey). Only the started process is
//! traced, as with lackey: a forked child writes nothing, and qemu-user
//! runs exec'ed programs natively. qemu-user skips the plugin's exit
//! callbacks when the program dies of a signal; the plugin writes its
//! buffer before the `kill`/`tkill`/`tgkill` system calls, so a program
//! that kills itself leaves a complete trace, but a fault loses the
//! records still buffered (up to 1 Mi per thread), and a trace with none
//! at all is [`CaptureError::QemuKilled`]. The records of several guest threads
//! come in chunks separated by [`Event::ThreadSwitch`](cachepart_trace::Event)
//! escapes (the payload is qemu's vcpu index).

use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use cachepart_trace::Counts;

use crate::command::{resolve_command, shell_words};
use crate::error::{CaptureError, CaptureResult};
use crate::options::{CaptureOptions, CaptureSummary};
use crate::plugin::{default_plugin_dir, ensure_plugin, plugin_api, qemu_release};
use crate::process::version_output;
use crate::qemu_stream::decode_raw;
use crate::route::{run_route, Route, Sink};

/// Runs `command` (program and arguments) under qemu-user with the
/// cachepart plugin and writes its memory trace to `output` in the binary
/// format. Builds the plugin on first use (see
/// [`crate::default_plugin_dir`]). The guarantees are those of
/// [`crate::capture_lackey`]: no output file after an error, the program's
/// exit status in the summary.
pub fn capture_qemu(
    command: &[OsString],
    output: &Path,
    opts: &CaptureOptions,
) -> CaptureResult<CaptureSummary> {
    let program = command.first().ok_or(CaptureError::EmptyCommand)?;
    let QemuPlugin {
        qemu_version: version,
        api,
        path: plugin,
    } = qemu_plugin(opts)?;
    let path = resolve_command(program).ok_or_else(|| CaptureError::CommandNotFound {
        command: program.to_string_lossy().into_owned(),
    })?;
    let header = opts
        .header
        .clone()
        .with_meta("source-format", "qemu")
        .with_meta("tool", "qemu")
        .with_meta("command", shell_words(command))
        .with_meta("qemu-version", version.clone())
        .with_meta("qemu-plugin-api", api.to_string())
        .with_meta("ifetch", if opts.ifetch { "yes" } else { "no" });
    let route = Qemu {
        qemu: &opts.qemu,
        plugin: &plugin,
        ifetch: opts.ifetch,
        skip: opts.plugin_skip(),
        start: opts.skip,
        argv0: program,
        path: &path,
        args: &command[1..],
    };
    run_route(&route, program, output, &header, opts, version)
}

/// The cachepart plugin, built for the qemu-user of a [`CaptureOptions`].
#[derive(Clone, Debug)]
pub struct QemuPlugin {
    /// The first line of `qemu-x86_64 --version`.
    pub qemu_version: String,
    /// The plugin API version the plugin declares.
    pub api: u32,
    /// The plugin's shared object.
    pub path: PathBuf,
}

/// Checks that `opts.qemu` runs and returns the cachepart plugin for it,
/// building it with `opts.cc` into `opts.plugin_dir` (or
/// [`default_plugin_dir`]) if it is not there yet. It can then be used by
/// hand: `qemu-x86_64 -plugin PATH,out=FILE[,ifetch=on] PROGRAM ARGS...`
/// writes raw 8-byte records (see `docs/trace-format.md`) to FILE.
pub fn qemu_plugin(opts: &CaptureOptions) -> CaptureResult<QemuPlugin> {
    let version = qemu_version(&opts.qemu)?;
    let release = qemu_release(&version).ok_or_else(|| CaptureError::QemuMissing {
        program: opts.qemu.clone(),
        source: io::Error::other(format!(
            "`--version` printed {version:?}, not `... version X.Y...`"
        )),
    })?;
    let api = plugin_api(release);
    let dir = opts.plugin_dir.clone().unwrap_or_else(default_plugin_dir);
    let path = ensure_plugin(&opts.cc, &dir, api)?;
    Ok(QemuPlugin {
        qemu_version: version,
        api,
        path,
    })
}

/// The qemu route.
struct Qemu<'a> {
    qemu: &'a Path,
    plugin: &'a Path,
    ifetch: bool,
    /// Instructions the plugin counts without recording (0: none), and
    /// where the window starts.
    skip: u64,
    start: u64,
    argv0: &'a OsStr,
    path: &'a Path,
    args: &'a [OsString],
}

impl Route for Qemu<'_> {
    fn command(&self, fifo: &Path) -> Command {
        let mut spec = escape_commas(self.plugin.as_os_str());
        spec.push(",out=");
        spec.push(escape_commas(fifo.as_os_str()));
        if self.ifetch {
            spec.push(",ifetch=on");
        }
        if self.skip > 0 {
            spec.push(format!(",skip={},start={}", self.skip, self.start));
        }
        let mut cmd = Command::new(self.qemu);
        cmd.arg("-plugin")
            .arg(spec)
            .arg("-0")
            .arg(self.argv0)
            .arg(self.path)
            .args(self.args);
        cmd
    }

    fn spawn_error(&self, source: io::Error) -> CaptureError {
        CaptureError::QemuMissing {
            program: self.qemu.to_path_buf(),
            source,
        }
    }

    fn start_error(&self, command: String, status: ExitStatus) -> CaptureError {
        use std::os::unix::process::ExitStatusExt;
        if status.signal().is_some() {
            CaptureError::QemuKilled { command, status }
        } else {
            CaptureError::QemuFailed { command, status }
        }
    }

    fn decode(&self, input: &mut (dyn Read + Send), sink: &mut Sink<'_>) -> CaptureResult<Counts> {
        decode_raw(input, sink, "qemu plugin")
    }
}

/// The first line of `qemu --version`, or [`CaptureError::QemuMissing`].
fn qemu_version(qemu: &Path) -> CaptureResult<String> {
    let text = version_output(qemu, |source| CaptureError::QemuMissing {
        program: qemu.to_path_buf(),
        source,
    })?;
    Ok(text.lines().next().unwrap_or("").trim().to_string())
}

/// qemu's option syntax splits at commas; a literal comma is doubled.
fn escape_commas(s: &OsStr) -> OsString {
    if !s.as_encoded_bytes().contains(&b',') {
        return s.to_os_string();
    }
    OsString::from(s.to_string_lossy().replace(',', ",,"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commas_are_doubled_for_qemu() {
        assert_eq!(escape_commas(OsStr::new("/tmp/a,b/f")), "/tmp/a,,b/f");
        assert_eq!(escape_commas(OsStr::new("/tmp/f")), "/tmp/f");
    }

    #[test]
    fn missing_qemu_names_the_debian_package() {
        let opts = CaptureOptions {
            qemu: PathBuf::from("/nonexistent/qemu-x86_64"),
            ..CaptureOptions::default()
        };
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("t.cpt");
        let err = capture_qemu(&[OsString::from("true")], &out, &opts).unwrap_err();
        assert!(matches!(err, CaptureError::QemuMissing { .. }), "{err:?}");
        assert!(
            err.to_string().contains("Debian package `qemu-user`"),
            "{err}"
        );
        assert!(!out.exists());
    }
}
