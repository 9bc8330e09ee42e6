//! The pipe a tool writes its trace into: a FIFO in a fresh private
//! temporary directory (both gone when the [`Fifo`] is dropped, whatever
//! the capture's outcome), and [`Counted`], the batching reader of its
//! read end.
//!
//! The pipe never blocks the capture: the capture holds a read-write
//! handle ([`Fifo::open_keep`]) while the tool runs, so opening the read
//! end does not wait for the tool (valgrind never opens its log when it
//! cannot start the program), and the read end sees end-of-file once the
//! tool has exited and that handle is dropped.

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tempfile::TempDir;

use crate::error::{CaptureError, CaptureResult};

/// A FIFO `trace.fifo` in a private (0700) directory under the system
/// temporary directory (`$TMPDIR`), removed with its directory on drop.
#[derive(Debug)]
pub(crate) struct Fifo {
    path: PathBuf,
    // dropped after `path` is no longer used: removes the directory
    _dir: TempDir,
}

impl Fifo {
    /// Makes the directory and the FIFO (mode 0600).
    pub(crate) fn new() -> CaptureResult<Fifo> {
        let dir = tempfile::Builder::new()
            .prefix("cachepart-capture-")
            .tempdir()
            .map_err(|source| CaptureError::Io {
                what: "creating a directory in",
                path: std::env::temp_dir(),
                source,
            })?;
        let path = dir.path().join("trace.fifo");
        let fail = |reason: String| CaptureError::Fifo {
            path: path.clone(),
            reason,
        };
        let c_path = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| fail("the path contains a NUL byte".to_string()))?;
        // SAFETY: `c_path` is a valid NUL-terminated string that outlives
        // the call.
        if unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) } != 0 {
            return Err(fail(io::Error::last_os_error().to_string()));
        }
        Ok(Fifo { path, _dir: dir })
    }

    /// The FIFO's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// A read-write handle: while it is open the pipe has a writer (so the
    /// read end never sees end-of-file too early) and a reader (so the
    /// tool's open never blocks).
    pub(crate) fn open_keep(&self) -> CaptureResult<File> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.path)
            .map_err(|source| self.error(source))
    }

    /// The read end (does not block once [`Fifo::open_keep`]'s handle is
    /// open).
    pub(crate) fn open_read(&self) -> CaptureResult<File> {
        File::open(&self.path).map_err(|source| self.error(source))
    }

    fn error(&self, source: io::Error) -> CaptureError {
        CaptureError::Io {
            what: "opening",
            path: self.path.clone(),
            source,
        }
    }
}

/// A `Read` of the FIFO that counts the bytes it passes, batches, and
/// fails with [`cancelled_error`] once the cancellation flag is raised.
///
/// lackey makes one `write` per trace line. A reader that drains the pipe
/// as soon as a line arrives is woken once per line, which costs more
/// than lackey itself (three times slower capture, measured). So after a
/// short read, the next read waits [`BATCH_WAIT`] first and lets the pipe
/// fill: then each wake-up takes thousands of lines and the writer is
/// neither blocked (the pipe's 64 KiB do not fill in that time at lackey's
/// rate) nor has anyone to wake.
pub(crate) struct Counted<'a, R> {
    /// The read end.
    pub(crate) inner: R,
    /// Bytes read so far.
    pub(crate) bytes: u64,
    short: bool,
    cancel: Option<&'a AtomicBool>,
}

impl<'a, R> Counted<'a, R> {
    /// Counts and batches the reads of `inner`, checking `cancel` before
    /// each.
    pub(crate) fn new(inner: R, cancel: Option<&'a AtomicBool>) -> Self {
        Counted {
            inner,
            bytes: 0,
            short: false,
            cancel,
        }
    }
}

/// A read shorter than this makes the next one wait.
const SHORT_READ: usize = 16 << 10;
/// How long the next read waits after a short one.
const BATCH_WAIT: Duration = Duration::from_micros(300);

/// The error a read returns once the capture is cancelled.
pub(crate) fn cancelled_error() -> io::Error {
    io::Error::other("the capture was interrupted")
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
            return Err(cancelled_error());
        }
        if self.short {
            std::thread::sleep(BATCH_WAIT);
        }
        let n = self.inner.read(buf)?;
        self.short = n > 0 && n < SHORT_READ.min(buf.len());
        self.bytes += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    #[test]
    fn the_fifo_and_its_directory_vanish_on_drop() {
        let fifo = Fifo::new().unwrap();
        let path = fifo.path().to_path_buf();
        assert!(std::fs::metadata(&path).unwrap().file_type().is_fifo());
        let dir = path.parent().unwrap().to_path_buf();
        drop(fifo);
        assert!(!dir.exists(), "{}", dir.display());
    }

    #[test]
    fn a_cancelled_read_fails() {
        let flag = AtomicBool::new(false);
        let mut r = Counted::new(&b"abcdef"[..], Some(&flag));
        let mut buf = [0u8; 4];
        assert_eq!(r.read(&mut buf).unwrap(), 4);
        flag.store(true, Ordering::SeqCst);
        let err = r.read(&mut buf).unwrap_err();
        assert_eq!(err.to_string(), cancelled_error().to_string());
        assert_eq!(r.bytes, 4);
    }
}
