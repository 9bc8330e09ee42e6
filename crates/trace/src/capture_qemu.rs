//! The qemu route of `trace capture`: a real program run under qemu-user
//! with cachepart's own TCG plugin, its raw records streamed through a FIFO
//! into the binary format.
//!
//! [`capture_qemu`] builds the plugin if needed (`qemu_plugin.rs`), then
//! runs
//! `qemu-x86_64 -plugin PLUGIN.so,out=FIFO[,ifetch=on] -0 CMD /path/of/CMD ARGS...`
//! (qemu-user does not search `PATH`, so the program is resolved here and
//! its `argv[0]` kept as given). The plugin writes 8-byte records in the
//! bit layout of [`Record`], in chunks of a million per guest thread; this
//! side checks each word with [`Record::from_raw`] and feeds the
//! [`Writer`](crate::Writer). Everything else (the FIFO, the temporary
//! output, the program's exit status, the errors) is shared with the
//! lackey route in `capture.rs`.
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
//! come in chunks separated by [`Event::ThreadSwitch`](crate::Event)
//! escapes (the payload is qemu's vcpu index).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, BufWriter, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::mpsc;

use crate::capture::{
    resolve_command, run_route, shell_words, version_output, CaptureError, CaptureOptions,
    CaptureResult, CaptureSummary, Route,
};
use crate::qemu_plugin::{default_plugin_dir, ensure_plugin, plugin_api, qemu_release};
use crate::record::Record;
use crate::stats::Counts;
use crate::writer::{WriteSummary, Writer};

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

    fn decode(
        &self,
        input: &mut (dyn Read + Send),
        writer: Writer<BufWriter<File>>,
    ) -> CaptureResult<(Counts, WriteSummary)> {
        decode_raw(input, writer)
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

/// Bytes read from the pipe at a time.
const CHUNK: usize = 1 << 20;
/// Chunks read ahead of the writer (64 MiB at most).
const QUEUE: usize = 64;

/// Reads the plugin's raw little-endian records from `input` into `writer`
/// until end-of-file, checking each one.
///
/// A reader thread drains the pipe into a bounded queue of chunks while
/// this thread checks and compresses them: qemu then keeps running while a
/// frame is compressed instead of blocking on a full pipe (on two cores the
/// capture runs at the slower of the two rather than at their sum).
fn decode_raw(
    input: &mut (dyn Read + Send),
    mut writer: Writer<BufWriter<File>>,
) -> CaptureResult<(Counts, WriteSummary)> {
    let (full_tx, full_rx) = mpsc::sync_channel::<Vec<u8>>(QUEUE);
    let (empty_tx, empty_rx) = mpsc::channel::<Vec<u8>>();
    let mut counts = Counts::default();
    let (consumed, read) = std::thread::scope(|scope| {
        let reader = scope.spawn(move || read_chunks(input, &full_tx, &empty_rx));
        let consumed = (|| -> CaptureResult<u64> {
            let mut offset = 0u64;
            for chunk in full_rx {
                for (i, word) in chunk.chunks_exact(8).enumerate() {
                    let mut bytes = [0u8; 8];
                    bytes.copy_from_slice(word);
                    let r = Record::from_raw(u64::from_le_bytes(bytes)).map_err(|e| {
                        CaptureError::MalformedStream {
                            offset: offset + 8 * i as u64,
                            reason: e.to_string(),
                        }
                    })?;
                    counts.add(r);
                    writer.push(r)?;
                }
                offset += chunk.len() as u64;
                let _ = empty_tx.send(chunk);
            }
            Ok(offset)
        })();
        // on an error `full_rx` is gone: the reader stops at its next chunk
        (consumed, reader.join())
    });
    let offset = consumed?;
    let leftover = read
        .map_err(|_| CaptureError::Io {
            what: "reading the qemu plugin's output through",
            path: PathBuf::from("the FIFO"),
            source: io::Error::other("the reader thread panicked"),
        })?
        .map_err(|source| CaptureError::Io {
            what: "reading the qemu plugin's output through",
            path: PathBuf::from("the FIFO"),
            source,
        })?;
    if leftover != 0 {
        return Err(CaptureError::MalformedStream {
            offset,
            reason: format!("the stream ends {leftover} bytes into a record"),
        });
    }
    let (_, written) = writer.finish()?;
    Ok((counts, written))
}

/// Reads `input` to its end in chunks of whole 8-byte words, sent to
/// `full` (buffers come back through `empty`); returns the bytes of an
/// incomplete last word. Stops early when `full`'s receiver is gone.
fn read_chunks(
    input: &mut (dyn Read + Send),
    full: &mpsc::SyncSender<Vec<u8>>,
    empty: &mpsc::Receiver<Vec<u8>>,
) -> io::Result<usize> {
    let mut carry = [0u8; 8];
    let mut carried = 0usize;
    loop {
        let mut buf = empty.try_recv().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(&carry[..carried]);
        let start = buf.len();
        buf.resize(CHUNK, 0);
        let n = loop {
            match input.read(&mut buf[start..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => break r?,
            }
        };
        if n == 0 {
            return Ok(carried);
        }
        let have = start + n;
        let whole = have - have % 8;
        carried = have - whole;
        carry[..carried].copy_from_slice(&buf[whole..have]);
        buf.truncate(whole);
        if !buf.is_empty() && full.send(buf).is_err() {
            return Ok(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::Header;
    use crate::record::{Event, Kind};

    fn decode_bytes(bytes: &[u8]) -> CaptureResult<(Counts, WriteSummary)> {
        let path = std::env::temp_dir().join(format!(
            "cachepart-qemu-unit-{}.cpt",
            crate::capture::serial()
        ));
        let w = Writer::new(
            BufWriter::new(File::create(&path).unwrap()),
            &Header::default(),
        )
        .unwrap();
        // read in odd-sized pieces, so records straddle reads
        struct Drip<'a>(&'a [u8]);
        impl Read for Drip<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(buf.len()).min(5);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let r = decode_raw(&mut Drip(bytes), w);
        let _ = std::fs::remove_file(&path);
        r
    }

    fn raw(records: &[Record]) -> Vec<u8> {
        records.iter().flat_map(|r| r.raw().to_le_bytes()).collect()
    }

    #[test]
    fn raw_records_are_decoded_across_reads() {
        let recs = [
            Record::access(Kind::Load, 0x7fff_0000_1000, 8, 3).unwrap(),
            Record::event(Event::InstrGap(1000), 0).unwrap(),
            Record::access(Kind::Store, 0x1000, 4, 0).unwrap(),
            Record::event(Event::ThreadSwitch(1), 0).unwrap(),
        ];
        let (c, w) = decode_bytes(&raw(&recs)).unwrap();
        assert_eq!((c.records, c.loads, c.stores, c.escapes), (4, 1, 1, 2));
        assert_eq!(c.instructions, 1003);
        assert_eq!(w.records, 4);
    }

    #[test]
    fn bad_words_name_their_byte_offset() {
        let mut bytes = raw(&[Record::access(Kind::Load, 0x1000, 8, 0).unwrap()]);
        bytes.extend_from_slice(&(6u64 << 48).to_le_bytes());
        let err = decode_bytes(&bytes).unwrap_err();
        assert_eq!(
            err.to_string(),
            "malformed qemu plugin output at byte offset 8: undefined kind code 6"
        );
        bytes.truncate(11);
        let err = decode_bytes(&bytes).unwrap_err();
        assert_eq!(
            err.to_string(),
            "malformed qemu plugin output at byte offset 8: the stream ends 3 bytes into a record"
        );
    }

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
        let out = std::env::temp_dir().join(format!(
            "cachepart-qemu-unit-{}.cpt",
            crate::capture::serial()
        ));
        let err = capture_qemu(&[OsString::from("true")], &out, &opts).unwrap_err();
        assert!(matches!(err, CaptureError::QemuMissing { .. }), "{err:?}");
        assert!(
            err.to_string().contains("Debian package `qemu-user`"),
            "{err}"
        );
        assert!(!out.exists());
    }
}
