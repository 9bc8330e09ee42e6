//! Small byte-level helpers shared by the binary reader and writer.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Opens a binary trace to read it from start to end: `-` is standard
/// input (a pipe is fine: [`crate::Reader`] never seeks).
pub fn open_stream(path: &Path) -> io::Result<Box<dyn Read + Send>> {
    if path.as_os_str() == "-" {
        Ok(Box::new(io::stdin()))
    } else {
        Ok(Box::new(File::open(path)?))
    }
}

/// Opens a binary trace that will be seeked ([`crate::TraceFile`]: its
/// index is at the end): `-` is refused with a message that says so,
/// rather than looked for as a file named `-` (also for the commands that
/// read a trace file twice or write beside it, as `trace shards-index`).
pub fn open_seekable(path: &Path) -> io::Result<File> {
    if path.as_os_str() == "-" {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "standard input can not be read here: this command seeks to the trace's \
             index at its end, so it needs a file (save the trace to a file first)",
        ));
    }
    File::open(path)
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
pub(crate) fn read_full<R: Read + ?Sized>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// A little-endian cursor over a byte slice that never panics.
pub(crate) struct Cursor<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    pub(crate) fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_le_bytes([b[0], b[1]]))
    }

    pub(crate) fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn u64(&mut self) -> Option<u64> {
        self.take(8).map(|b| {
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            u64::from_le_bytes(a)
        })
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
}
