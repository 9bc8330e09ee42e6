//! The streaming writer of the binary format, with bounded memory.
//!
//! Records are buffered up to one frame (`Header::frame_records`), then
//! transformed, compressed and written; the footer index is written by
//! [`Writer::finish`]. A writer dropped without `finish` leaves a file that
//! readers report as truncated after its last complete frame.

use std::io::Write;

use crate::error::{Result, TraceError};
use crate::frame::{FrameEncoder, MAX_FRAME_RECORDS};
use crate::header::Header;
use crate::index::{self, FrameInfo};
use crate::record::Record;

/// Default zstd level: a good ratio at several hundred MB/s.
pub const DEFAULT_LEVEL: i32 = 3;

/// What a finished writer wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteSummary {
    /// Records written.
    pub records: u64,
    /// Frames written.
    pub frames: u64,
    /// Bytes written, header to trailer.
    pub bytes: u64,
}

/// Writes records to any [`Write`] in the binary trace format.
pub struct Writer<W: Write> {
    out: W,
    frame_records: usize,
    buf: Vec<Record>,
    enc: FrameEncoder,
    scratch: Vec<u8>,
    offset: u64,
    frames: Vec<FrameInfo>,
    total: u64,
}

impl<W: Write> Writer<W> {
    /// Starts a trace with `header`, at the default compression level.
    pub fn new(out: W, header: &Header) -> Result<Writer<W>> {
        Writer::with_level(out, header, DEFAULT_LEVEL)
    }

    /// Starts a trace with `header` at zstd compression `level` (1..=22).
    pub fn with_level(mut out: W, header: &Header, level: i32) -> Result<Writer<W>> {
        if header.frame_records == 0 || header.frame_records > MAX_FRAME_RECORDS {
            return Err(TraceError::Config(format!(
                "records per frame must be in 1..={MAX_FRAME_RECORDS}"
            )));
        }
        if header.flags != 0 {
            return Err(TraceError::Config("no header flags are defined".into()));
        }
        let bytes = header.encode()?;
        out.write_all(&bytes)?;
        let frame_records = header.frame_records as usize;
        Ok(Writer {
            out,
            frame_records,
            buf: Vec::with_capacity(frame_records.min(1 << 20)),
            enc: FrameEncoder::new(level)?,
            scratch: Vec::new(),
            offset: bytes.len() as u64,
            frames: Vec::new(),
            total: 0,
        })
    }

    /// Appends one record.
    #[inline]
    pub fn push(&mut self, r: Record) -> Result<()> {
        self.buf.push(r);
        if self.buf.len() >= self.frame_records {
            self.flush_frame()?;
        }
        Ok(())
    }

    /// Appends every record of `records`.
    pub fn extend<I: IntoIterator<Item = Record>>(&mut self, records: I) -> Result<()> {
        for r in records {
            self.push(r)?;
        }
        Ok(())
    }

    /// Records pushed so far.
    pub fn records(&self) -> u64 {
        self.total + self.buf.len() as u64
    }

    fn flush_frame(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.scratch.clear();
        self.enc.encode(&self.buf, &mut self.scratch)?;
        self.out.write_all(&self.scratch)?;
        self.frames.push(FrameInfo {
            offset: self.offset,
            first_record: self.total,
            records: self.buf.len() as u32,
        });
        self.offset += self.scratch.len() as u64;
        self.total += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Writes the last frame, the index and the trailer; returns the output
    /// and a summary.
    pub fn finish(mut self) -> Result<(W, WriteSummary)> {
        self.flush_frame()?;
        let idx = index::encode(&self.frames, self.offset, self.total);
        self.out.write_all(&idx)?;
        self.out.flush()?;
        let summary = WriteSummary {
            records: self.total,
            frames: self.frames.len() as u64,
            bytes: self.offset + idx.len() as u64,
        };
        Ok((self.out, summary))
    }
}
