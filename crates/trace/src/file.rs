//! A trace file opened through its index: seek to any record, and decode
//! frames in parallel.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Mutex;

use rayon::prelude::*;

use crate::error::{Result, TraceError};
use crate::frame::{FrameDecoder, FrameHeader, FRAME_HEADER};
use crate::header::Header;
use crate::index::{self, FrameInfo, TRAILER};
use crate::io_util::read_full;
use crate::record::Record;
use crate::sink::RecordSink;

/// Largest index accepted (64 MiB, ~3 M frames).
const MAX_INDEX: u64 = 64 << 20;

/// An indexed trace file.
pub struct TraceFile {
    file: Mutex<File>,
    header: Header,
    frames: Vec<FrameInfo>,
    records: u64,
    index_offset: u64,
    len: u64,
}

impl TraceFile {
    /// Opens `path`, reading and checking the header, trailer and index.
    pub fn open(path: impl AsRef<Path>) -> Result<TraceFile> {
        let mut file = crate::io_util::open_seekable(path.as_ref())?;
        let len = file.metadata()?.len();
        let (header, data_start) = Header::read(&mut file)?;
        if len < data_start + TRAILER as u64 + 8 {
            return Err(TraceError::Truncated {
                what: "file (no index)",
                offset: data_start,
            });
        }
        let trailer_at = len - TRAILER as u64;
        let mut tb = [0u8; TRAILER];
        file.seek(SeekFrom::Start(trailer_at))?;
        file.read_exact(&mut tb)?;
        let t = index::parse_trailer(&tb, trailer_at)?;
        if t.index_offset < data_start
            || t.index_offset > trailer_at - 8
            || trailer_at - t.index_offset > MAX_INDEX
        {
            return Err(TraceError::CorruptIndex {
                offset: trailer_at,
                reason: format!("index offset {} out of range", t.index_offset),
            });
        }
        let mut bytes = vec![0u8; (trailer_at - t.index_offset) as usize];
        file.seek(SeekFrom::Start(t.index_offset))?;
        file.read_exact(&mut bytes)?;
        let frames = index::parse(&bytes, &t, data_start)?;
        Ok(TraceFile {
            file: Mutex::new(file),
            header,
            frames,
            records: t.total,
            index_offset: t.index_offset,
            len,
        })
    }

    /// The file header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Number of records.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The frames, in file order.
    pub fn frames(&self) -> &[FrameInfo] {
        &self.frames
    }

    /// File length in bytes.
    pub fn len_bytes(&self) -> u64 {
        self.len
    }

    /// The frame holding record `n`.
    pub fn frame_of(&self, n: u64) -> Result<usize> {
        if n >= self.records {
            return Err(TraceError::SeekPastEnd {
                record: n,
                records: self.records,
            });
        }
        Ok(self.frames.partition_point(|f| f.first_record <= n) - 1)
    }

    fn read_compressed(&self, i: usize, body: &mut Vec<u8>) -> Result<FrameHeader> {
        let f = self.frames[i];
        let end = self
            .frames
            .get(i + 1)
            .map_or(self.index_offset, |g| g.offset);
        let mut hb = [0u8; FRAME_HEADER];
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.seek(SeekFrom::Start(f.offset))?;
        if read_full(&mut *file, &mut hb)? < FRAME_HEADER {
            return Err(TraceError::Truncated {
                what: "frame",
                offset: f.offset,
            });
        }
        let h = FrameHeader::parse(&hb, f.offset)?;
        if h.records != f.records
            || f.offset + (FRAME_HEADER as u64) + u64::from(h.compressed_len) != end
        {
            return Err(TraceError::CorruptIndex {
                offset: self.index_offset,
                reason: format!("entry {i} does not match the frame at {}", f.offset),
            });
        }
        body.resize(h.compressed_len as usize, 0);
        if read_full(&mut *file, body)? < body.len() {
            return Err(TraceError::Truncated {
                what: "frame",
                offset: f.offset,
            });
        }
        Ok(h)
    }

    fn decode_into(
        &self,
        i: usize,
        dec: &mut FrameDecoder,
        body: &mut Vec<u8>,
        out: &mut Vec<Record>,
    ) -> Result<()> {
        let h = self.read_compressed(i, body)?;
        let f = self.frames[i];
        dec.decode(h, body, f.offset, f.first_record, out)
    }

    /// Decodes frame `i`, pushing each record to `sink` as it is decoded
    /// (after [`RecordSink::reserve`] with the frame's record count), with
    /// the zstd context and buffers of `scratch`: a thread that decodes
    /// many frames keeps one [`FrameScratch`] and allocates nothing per
    /// frame. On an error the records before it have been pushed.
    pub fn decode_frame<S: RecordSink>(
        &self,
        i: usize,
        scratch: &mut FrameScratch,
        sink: &mut S,
    ) -> Result<()> {
        let h = self.read_compressed(i, &mut scratch.body)?;
        let f = self.frames[i];
        scratch
            .dec
            .decode_to(h, &scratch.body, f.offset, f.first_record, sink)
    }

    /// Decodes frame `i`.
    pub fn read_frame(&self, i: usize) -> Result<Vec<Record>> {
        let mut out = Vec::new();
        self.decode_into(i, &mut FrameDecoder::new()?, &mut Vec::new(), &mut out)?;
        Ok(out)
    }

    /// Streams the records from record `n` on (seek through the index);
    /// one frame in memory at a time.
    pub fn records_from(&self, n: u64) -> Result<RecordsFrom<'_>> {
        let (frame, skip) = if n == self.records {
            (self.frames.len(), 0)
        } else {
            let i = self.frame_of(n)?;
            (i, (n - self.frames[i].first_record) as usize)
        };
        Ok(RecordsFrom {
            file: self,
            frame,
            pos: skip,
            loaded: false,
            dec: FrameDecoder::new()?,
            body: Vec::new(),
            buf: Vec::new(),
            failed: false,
        })
    }

    /// Decodes the frames in parallel (rayon) and maps each with `f`
    /// (given the frame's index entry and its records); results are in
    /// frame order. Only the frames being worked on are in memory.
    pub fn par_map_frames<T, F>(&self, f: F) -> Result<Vec<T>>
    where
        T: Send,
        F: Fn(&FrameInfo, &[Record]) -> T + Sync + Send,
    {
        (0..self.frames.len())
            .into_par_iter()
            .map_init(
                || (FrameDecoder::new(), Vec::new(), Vec::new()),
                |(dec, body, out), i| {
                    let dec = dec
                        .as_mut()
                        .map_err(|e| TraceError::Io(std::io::Error::other(e.to_string())))?;
                    self.decode_into(i, dec, body, out)?;
                    Ok(f(&self.frames[i], out))
                },
            )
            .collect()
    }

    /// All records, decoded in parallel (memory: the whole trace).
    pub fn read_all_parallel(&self) -> Result<Vec<Record>> {
        let parts = self.par_map_frames(|_, recs| recs.to_vec())?;
        Ok(parts.concat())
    }
}

/// What [`TraceFile::decode_frame`] keeps between frames: a zstd
/// context and the buffers of the compressed and the decompressed frame.
pub struct FrameScratch {
    dec: FrameDecoder,
    body: Vec<u8>,
}

impl FrameScratch {
    /// Fresh state; fails only if zstd cannot make a context.
    pub fn new() -> Result<FrameScratch> {
        Ok(FrameScratch {
            dec: FrameDecoder::new()?,
            body: Vec::new(),
        })
    }
}

impl std::fmt::Debug for FrameScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameScratch").finish_non_exhaustive()
    }
}

/// Records of a [`TraceFile`] from a given record on.
pub struct RecordsFrom<'a> {
    file: &'a TraceFile,
    frame: usize,
    pos: usize,
    loaded: bool,
    dec: FrameDecoder,
    body: Vec<u8>,
    buf: Vec<Record>,
    failed: bool,
}

impl Iterator for RecordsFrom<'_> {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Result<Record>> {
        if self.failed {
            return None;
        }
        loop {
            if self.loaded {
                if let Some(&r) = self.buf.get(self.pos) {
                    self.pos += 1;
                    return Some(Ok(r));
                }
                self.frame += 1;
                self.pos = 0;
                self.loaded = false;
            }
            if self.frame >= self.file.frames.len() {
                return None;
            }
            if let Err(e) =
                self.file
                    .decode_into(self.frame, &mut self.dec, &mut self.body, &mut self.buf)
            {
                self.failed = true;
                return Some(Err(e));
            }
            self.loaded = true;
        }
    }
}
