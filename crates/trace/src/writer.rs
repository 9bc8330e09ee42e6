//! The streaming writer of the binary format, with bounded memory.
//!
//! Records are buffered up to one frame (`Header::frame_records`), then
//! transformed, compressed and written; the footer index is written by
//! [`Writer::finish`]. A writer dropped without `finish` leaves a file that
//! readers report as truncated after its last complete frame.
//!
//! Full frames are compressed on worker threads
//! ([`Writer::with_threads`]; by default one per available CPU, at most
//! [`MAX_DEFAULT_THREADS`], started with the first full frame) while the
//! caller goes on producing records; they are written in order, so the
//! file is byte for byte the one a single thread writes.

use std::io::Write;

use crate::compress_pool::{Pool, Ready};
use crate::error::{Result, TraceError};
use crate::frame::{FrameEncoder, MAX_FRAME_RECORDS};
use crate::header::Header;
use crate::index::{self, FrameInfo};
use crate::record::Record;

/// Default zstd level: a good ratio at several hundred MB/s.
pub const DEFAULT_LEVEL: i32 = 3;

/// Most compression threads a writer starts by default.
pub const MAX_DEFAULT_THREADS: usize = 4;

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
    /// Records handed to the encoder (written or in flight).
    total: u64,
    level: i32,
    threads: usize,
    pool: Option<Pool>,
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
            level,
            threads: std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(MAX_DEFAULT_THREADS),
            pool: None,
        })
    }

    /// The same writer compressing on `threads` worker threads (1: in
    /// the caller's thread). The output does not depend on it.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
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

    /// Appends the records of `records` in order, as [`Writer::push`] of
    /// each would, copying them a frame's share at a time.
    pub fn push_slice(&mut self, mut records: &[Record]) -> Result<()> {
        while !records.is_empty() {
            let room = self.frame_records - self.buf.len();
            let (now, rest) = records.split_at(room.min(records.len()));
            self.buf.extend_from_slice(now);
            if self.buf.len() >= self.frame_records {
                self.flush_frame()?;
            }
            records = rest;
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
        let n = self.buf.len();
        // A last, partial frame of a writer that never filled one is
        // compressed here: no thread is started for a small trace.
        if self.threads > 1 && (self.pool.is_some() || n >= self.frame_records) {
            let mut pool = match self.pool.take() {
                Some(p) => p,
                None => Pool::new(self.threads, self.level)?,
            };
            let next = pool
                .spare
                .pop()
                .unwrap_or_else(|| Vec::with_capacity(self.frame_records.min(1 << 20)));
            let full = std::mem::replace(&mut self.buf, next);
            self.total += n as u64;
            let ready = pool.submit(full);
            self.pool = Some(pool);
            return self.write_ready(ready?);
        }
        let mut bytes = std::mem::take(&mut self.scratch);
        bytes.clear();
        self.enc.encode(&self.buf, &mut bytes)?;
        let written = self.write_frame(&bytes, n as u32);
        self.scratch = bytes;
        written?;
        self.total += n as u64;
        self.buf.clear();
        Ok(())
    }

    /// Writes frames that came back from the pool, in order.
    fn write_ready(&mut self, ready: Vec<Ready>) -> Result<()> {
        for r in ready {
            self.write_frame(&r.bytes, r.records)?;
        }
        Ok(())
    }

    /// Writes one compressed frame and enters it in the index.
    fn write_frame(&mut self, bytes: &[u8], records: u32) -> Result<()> {
        self.out.write_all(bytes)?;
        let first_record = self
            .frames
            .last()
            .map_or(0, |f| f.first_record + u64::from(f.records));
        self.frames.push(FrameInfo {
            offset: self.offset,
            first_record,
            records,
        });
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Writes the last frame, the index and the trailer; returns the output
    /// and a summary.
    pub fn finish(mut self) -> Result<(W, WriteSummary)> {
        self.flush_frame()?;
        if let Some(pool) = self.pool.as_mut() {
            let ready = pool.finish()?;
            self.write_ready(ready)?;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Kind;
    use crate::Reader;

    fn records(n: u64) -> Vec<Record> {
        let mut x = 1u64;
        (0..n)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let kind = [Kind::Load, Kind::Store, Kind::Ifetch][(x >> 60) as usize % 3];
                Record::access(kind, 0x4000_0000 + (x >> 20) % (1 << 24), 8, (i % 5) as u32)
                    .unwrap()
            })
            .collect()
    }

    /// A writer into memory of `frame` records a frame on `threads`.
    fn writer(frame: u32, threads: usize) -> Writer<Vec<u8>> {
        let header = Header {
            frame_records: frame,
            ..Header::default()
        };
        Writer::new(Vec::new(), &header)
            .unwrap()
            .with_threads(threads)
    }

    fn write(recs: &[Record], frame: u32, threads: usize) -> (Vec<u8>, WriteSummary) {
        let mut w = writer(frame, threads);
        w.extend(recs.iter().copied()).unwrap();
        assert_eq!(w.records(), recs.len() as u64);
        w.finish().unwrap()
    }

    #[test]
    fn threads_do_not_change_a_byte() {
        let recs = records(100_000);
        for frame in [1_000, 4_096, 33_333, 100_000, 1 << 20] {
            let (one, s1) = write(&recs, frame, 1);
            for threads in [2, 3, 4] {
                let (many, s) = write(&recs, frame, threads);
                assert_eq!(s, s1, "frame {frame}, {threads} threads");
                assert!(
                    one == many,
                    "frame {frame}, {threads} threads: bytes differ"
                );
            }
            let back: Vec<Record> = Reader::new(&one[..])
                .unwrap()
                .collect::<Result<_>>()
                .unwrap();
            assert_eq!(back, recs);
        }
        // An empty trace, and one record.
        for n in [0, 1] {
            let (a, _) = write(&recs[..n], 1_000, 1);
            let (b, _) = write(&recs[..n], 1_000, 4);
            assert_eq!(a, b);
        }
    }

    #[test]
    fn slices_write_the_bytes_of_one_push_each() {
        let recs = records(5_000);
        for frame in [3, 999, 4_096, 5_000] {
            for threads in [1, 3] {
                let (one_by_one, s1) = write(&recs, frame, threads);
                // pieces that end inside, at and across frame boundaries
                for piece in [1, 2, 998, 999, 1_000, 4_096, 5_000, 6_000] {
                    let mut w = writer(frame, threads);
                    w.push_slice(&[]).unwrap();
                    for part in recs.chunks(piece) {
                        w.push_slice(part).unwrap();
                    }
                    assert_eq!(w.records(), recs.len() as u64);
                    let (bytes, s) = w.finish().unwrap();
                    assert_eq!(s, s1, "frame {frame}, pieces of {piece}");
                    assert!(bytes == one_by_one, "frame {frame}, pieces of {piece}");
                }
            }
        }
    }
}
