//! `trace capture`: record a real program's memory accesses, streamed
//! straight into the binary format; what both routes share, and the
//! valgrind lackey route.
//!
//! Both routes ([`capture_lackey`] here, [`crate::capture_qemu`] in
//! `capture_qemu.rs`) run the program under a tool that writes into a FIFO
//! in a fresh private directory, decode the FIFO into a [`Writer`] and
//! share the errors ([`CaptureError`]), options ([`CaptureOptions`]), the
//! summary ([`CaptureSummary`]) and the guarantees below; a route is a
//! `Route`: the command to start, and how to decode its bytes.
//!
//! [`capture_lackey`] runs
//! `valgrind --tool=lackey --trace-mem=yes --log-file=FIFO CMD ARGS...`,
//! where FIFO is a named pipe (made by coreutils' `mkfifo`) in a fresh
//! private directory. This process reads the pipe through a
//! [`LackeyReader`] into a [`Writer`], so memory stays bounded and lackey's
//! text never reaches the disk. The trace is written to a temporary file
//! beside the output and renamed into place only when the capture
//! succeeds; on any error it is removed, so there is never a partial
//! output file.
//!
//! The program's stdin, stdout and stderr are the caller's: only valgrind's
//! log (the trace and its `==pid==` banner) goes through the pipe.
//!
//! A program that exits with a non-zero status (or is killed by a signal)
//! still yields a trace of everything it did up to then:
//! [`CaptureSummary::status`] says how it ended and the caller decides
//! what to make of it (`cachepart trace capture` keeps the trace, warns and
//! exits with the program's status). A command that does not exist, a
//! missing tool and malformed tool output are [`CaptureError`]s.
//!
//! The pipe never blocks the capture: this process holds a read-write
//! handle of the FIFO while the tool runs, so opening the read end does not
//! wait for the tool (valgrind never opens its log when it cannot start the
//! program), and the read end sees end-of-file once the tool has exited
//! and that handle is dropped.

use std::ffi::{OsStr, OsString};
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use thiserror::Error;

use crate::error::TraceError;
use crate::header::Header;
use crate::lackey::LackeyReader;
use crate::stats::Counts;
use crate::writer::{WriteSummary, Writer, DEFAULT_LEVEL};

/// Errors of [`capture_lackey`] and [`crate::capture_qemu`]. After any of
/// them no output file exists.
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
    /// lackey wrote something that is not a lackey trace; the error names
    /// the line (counted from the start of valgrind's log).
    #[error("malformed lackey output: {0}")]
    Malformed(#[source] TraceError),
    /// The qemu plugin wrote a word that is not a record, or stopped inside
    /// a record.
    #[error("malformed qemu plugin output at byte offset {offset}: {reason}")]
    MalformedStream {
        /// Byte offset in the plugin's stream.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// `mkfifo` failed.
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
    /// qemu route: also record an instruction fetch per executed
    /// instruction (lackey always does).
    pub ifetch: bool,
    /// The header to start from (frame size, page size hint, extra
    /// metadata); the capture adds `source-format`, `tool`, `command` and
    /// the tool's version.
    pub header: Header,
    /// zstd compression level.
    pub level: i32,
    /// Threads compressing the trace's frames while the tool runs (0: one
    /// per available CPU, at most [`crate::MAX_DEFAULT_THREADS`]; the file
    /// does not depend on it).
    pub compress_threads: usize,
}

impl Default for CaptureOptions {
    fn default() -> Self {
        CaptureOptions {
            valgrind: PathBuf::from("valgrind"),
            qemu: PathBuf::from(format!("qemu-{}", std::env::consts::ARCH)),
            cc: PathBuf::from("gcc"),
            plugin_dir: None,
            ifetch: false,
            header: Header::default(),
            level: DEFAULT_LEVEL,
            compress_threads: 0,
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

    /// Whether the program exited with status 0.
    pub fn success(&self) -> bool {
        self.status.success()
    }

    /// Accesses captured per wall-clock second.
    pub fn accesses_per_second(&self) -> f64 {
        self.accesses() as f64 / self.seconds.max(1e-9)
    }
}

/// Runs `command` (program and arguments) under valgrind lackey and writes
/// its memory trace to `output` in the binary format. See the module
/// documentation for the guarantees.
pub fn capture_lackey(
    command: &[OsString],
    output: &Path,
    opts: &CaptureOptions,
) -> CaptureResult<CaptureSummary> {
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
    let route = Lackey {
        valgrind: &opts.valgrind,
        command,
    };
    run_route(&route, program, output, &header, opts, version)
}

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
    /// Decodes the FIFO's bytes into `writer` until end-of-file.
    fn decode(
        &self,
        input: &mut (dyn Read + Send),
        writer: Writer<BufWriter<File>>,
    ) -> CaptureResult<(Counts, WriteSummary)>;
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
        cmd.args(["--tool=lackey", "--trace-mem=yes"])
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
        if status.code() == Some(127) {
            CaptureError::CommandNotFound { command }
        } else {
            CaptureError::ValgrindFailed { command, status }
        }
    }

    fn decode(
        &self,
        input: &mut (dyn Read + Send),
        writer: Writer<BufWriter<File>>,
    ) -> CaptureResult<(Counts, WriteSummary)> {
        stream(input, writer)
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
    let work = TempDir::new()?;
    let fifo = work.path.join("trace.fifo");
    make_fifo(&fifo)?;
    let mut out = TempOutput::new(output)?;
    let file = File::create(&out.path).map_err(|source| CaptureError::Io {
        what: "creating",
        path: out.path.clone(),
        source,
    })?;
    let mut writer =
        Writer::with_level(BufWriter::with_capacity(1 << 20, file), header, opts.level)?;
    if opts.compress_threads > 0 {
        writer = writer.with_threads(opts.compress_threads);
    }

    // Hold a read-write handle so that neither our open nor the tool's
    // blocks, and EOF comes only after the tool has exited.
    let fifo_err = |what| {
        let path = fifo.clone();
        move |source| CaptureError::Io { what, path, source }
    };
    let keep = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .map_err(fifo_err("opening"))?;
    let read_end = File::open(&fifo).map_err(fifo_err("opening"))?;

    let start = Instant::now();
    let mut child = route
        .command(&fifo)
        .spawn()
        .map_err(|e| route.spawn_error(e))?;
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        drop(keep);
        status
    });

    let mut input = Counted {
        inner: read_end,
        bytes: 0,
        short: false,
    };
    let streamed = route.decode(&mut input, writer);
    if streamed.is_err() {
        // Let the tool run to its end rather than block on a full pipe.
        let _ = io::copy(&mut input, &mut io::sink());
    }
    let status = waiter
        .join()
        .expect("the tool's waiter does not panic")
        .map_err(|source| CaptureError::Io {
            what: "waiting for the capture of",
            path: PathBuf::from(program),
            source,
        })?;
    if input.bytes == 0 && !status.success() {
        // The tool wrote nothing: it could not start the program.
        return Err(route.start_error(program.to_string_lossy().into_owned(), status));
    }
    let (counts, written) = streamed?;
    out.commit(output)?;
    Ok(CaptureSummary {
        counts,
        written,
        status,
        seconds: start.elapsed().as_secs_f64(),
        tool_version,
    })
}

/// Reads lackey text from `input` into `writer` until end-of-file.
fn stream(
    input: &mut (dyn Read + Send),
    mut writer: Writer<BufWriter<File>>,
) -> CaptureResult<(Counts, WriteSummary)> {
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
        writer.push(r)?;
    }
    let (_, written) = writer.finish()?;
    Ok((counts, written))
}

/// The standard output of `program --version`; a program that cannot run
/// or exits with an error becomes `missing(reason)`.
pub(crate) fn version_output(
    program: &Path,
    missing: impl Fn(io::Error) -> CaptureError,
) -> CaptureResult<String> {
    let out = Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(&missing)?;
    if !out.status.success() {
        return Err(missing(io::Error::other(format!(
            "`--version` exited with {}",
            out.status
        ))));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `valgrind --version`, or [`CaptureError::ValgrindMissing`].
fn valgrind_version(valgrind: &Path) -> CaptureResult<String> {
    let text = version_output(valgrind, |source| CaptureError::ValgrindMissing {
        program: valgrind.to_path_buf(),
        source,
    })?;
    Ok(text.trim().to_string())
}

/// The file `program` names, directly (with a `/`) or as an executable on
/// `PATH` (the first one, as `execvp` and valgrind look it up); `None` if
/// there is none.
pub(crate) fn resolve_command(program: &OsStr) -> Option<PathBuf> {
    let p = Path::new(program);
    if program.is_empty() {
        return None;
    }
    if program.as_encoded_bytes().contains(&b'/') {
        return p.is_file().then(|| p.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(p))
        .find(|f| {
            std::fs::metadata(f).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The command line as one string a POSIX shell would split back into the
/// same words (non-UTF-8 bytes are replaced).
pub(crate) fn shell_words(command: &[OsString]) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./,:=+@%".contains(c);
    command
        .iter()
        .map(|w| {
            let w = w.to_string_lossy();
            if !w.is_empty() && w.chars().all(safe) {
                w.into_owned()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
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

/// Makes a FIFO with coreutils' `mkfifo`.
fn make_fifo(path: &Path) -> CaptureResult<()> {
    let fail = |reason: String| CaptureError::Fifo {
        path: path.to_path_buf(),
        reason,
    };
    let out = Command::new("mkfifo")
        .args(["-m", "600"])
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| fail(format!("cannot run mkfifo (coreutils): {e}")))?;
    if !out.status.success() {
        return Err(fail(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(())
}

/// A `Read` of the FIFO that counts the bytes it passes and batches.
///
/// lackey makes one `write` per trace line. A reader that drains the pipe
/// as soon as a line arrives is woken once per line, which costs more
/// than lackey itself (three times slower capture, measured). So after a
/// short read, the next read waits [`BATCH_WAIT`] first and lets the pipe
/// fill: then each wake-up takes thousands of lines and the writer is
/// neither blocked (the pipe's 64 KiB do not fill in that time at lackey's
/// rate) nor has anyone to wake.
struct Counted<R> {
    inner: R,
    bytes: u64,
    short: bool,
}

/// A read shorter than this makes the next one wait.
const SHORT_READ: usize = 16 << 10;
/// How long the next read waits after a short one.
const BATCH_WAIT: std::time::Duration = std::time::Duration::from_micros(300);

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.short {
            std::thread::sleep(BATCH_WAIT);
        }
        let n = self.inner.read(buf)?;
        self.short = n > 0 && n < SHORT_READ.min(buf.len());
        self.bytes += n as u64;
        Ok(n)
    }
}

/// Distinguishes the temporary names of captures in one process.
static SERIAL: AtomicU64 = AtomicU64::new(0);

pub(crate) fn serial() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    )
}

/// A private directory under the system temp dir, removed on drop.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new() -> CaptureResult<TempDir> {
        let base = std::env::temp_dir();
        let mut last = None;
        for _ in 0..100 {
            let path = base.join(format!("cachepart-capture-{}", serial()));
            match DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(source) => {
                    return Err(CaptureError::Io {
                        what: "creating the directory",
                        path,
                        source,
                    })
                }
            }
        }
        Err(CaptureError::Io {
            what: "creating a directory in",
            path: base,
            source: last.unwrap_or_else(|| io::Error::other("no free name")),
        })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The temporary output file beside the final one, removed on drop unless
/// committed.
struct TempOutput {
    path: PathBuf,
    committed: bool,
}

impl TempOutput {
    fn new(output: &Path) -> CaptureResult<TempOutput> {
        let name = output.file_name().ok_or_else(|| CaptureError::Io {
            what: "writing",
            path: output.to_path_buf(),
            source: io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name"),
        })?;
        let dir = output
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let path = dir.join(format!(
            ".{}.capture-{}.tmp",
            name.to_string_lossy(),
            serial()
        ));
        Ok(TempOutput {
            path,
            committed: false,
        })
    }

    fn commit(&mut self, output: &Path) -> CaptureResult<()> {
        std::fs::rename(&self.path, output).map_err(|source| CaptureError::Io {
            what: "renaming the trace to",
            path: output.to_path_buf(),
            source,
        })?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for TempOutput {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[&str]) -> Vec<OsString> {
        ws.iter().map(OsString::from).collect()
    }

    #[test]
    fn shell_words_quote_only_what_needs_it() {
        assert_eq!(
            shell_words(&words(&["ls", "-la", "/usr/lib"])),
            "ls -la /usr/lib"
        );
        assert_eq!(
            shell_words(&words(&["sh", "-c", "echo it's", ""])),
            r"sh -c 'echo it'\''s' ''"
        );
    }

    #[test]
    fn percent_is_escaped_for_valgrind() {
        assert_eq!(escape_percent(OsStr::new("/tmp/a%p/f")), "/tmp/a%%p/f");
        assert_eq!(escape_percent(OsStr::new("/tmp/f")), "/tmp/f");
    }

    #[test]
    fn commands_are_looked_up_like_valgrind_does() {
        let sh = resolve_command(OsStr::new("sh")).unwrap();
        assert!(sh.is_absolute() && sh.ends_with("sh"), "{}", sh.display());
        assert_eq!(
            resolve_command(OsStr::new("/bin/sh")),
            Some(PathBuf::from("/bin/sh"))
        );
        assert_eq!(
            resolve_command(OsStr::new("cachepart-no-such-command")),
            None
        );
        assert_eq!(resolve_command(OsStr::new("./no/such/file")), None);
        assert_eq!(resolve_command(OsStr::new("")), None);
    }

    #[test]
    fn missing_valgrind_names_the_debian_package() {
        let opts = CaptureOptions {
            valgrind: PathBuf::from("/nonexistent/valgrind"),
            ..CaptureOptions::default()
        };
        let out = std::env::temp_dir().join(format!("cachepart-unit-{}.cpt", serial()));
        let err = capture_lackey(&words(&["true"]), &out, &opts).unwrap_err();
        assert!(matches!(err, CaptureError::ValgrindMissing { .. }));
        assert!(
            err.to_string().contains("Debian package `valgrind`"),
            "{err}"
        );
        assert!(!out.exists());
    }
}
