//! The footer index: where each frame starts and which records it holds.
//!
//! Layout (little-endian): tag `CPIX`, frame count u32, then per frame its
//! byte offset u64, first record number u64 and record count u32; then the
//! 24-byte trailer that ends the file: index offset u64, total records u64,
//! FNV-1a checksum u32 of the index bytes, and the tag `CPTE`.

use crate::codec::fnv1a;
use crate::error::{Result, TraceError};
use crate::io_util::Cursor;

/// Tag that starts the index.
pub(crate) const INDEX_TAG: [u8; 4] = *b"CPIX";
/// Tag that ends the file.
pub(crate) const END_TAG: [u8; 4] = *b"CPTE";
/// Bytes of the trailer.
pub(crate) const TRAILER: usize = 24;
const ENTRY: usize = 20;

/// Where one frame is and which records it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameInfo {
    /// Byte offset of the frame header in the file.
    pub offset: u64,
    /// Number of the frame's first record in the file (0-based).
    pub first_record: u64,
    /// Number of records in the frame.
    pub records: u32,
}

/// Encodes the index and the trailer.
pub(crate) fn encode(frames: &[FrameInfo], index_offset: u64, total: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + frames.len() * ENTRY + TRAILER);
    out.extend_from_slice(&INDEX_TAG);
    out.extend_from_slice(&(frames.len() as u32).to_le_bytes());
    for f in frames {
        out.extend_from_slice(&f.offset.to_le_bytes());
        out.extend_from_slice(&f.first_record.to_le_bytes());
        out.extend_from_slice(&f.records.to_le_bytes());
    }
    let sum = fnv1a(&out);
    out.extend_from_slice(&index_offset.to_le_bytes());
    out.extend_from_slice(&total.to_le_bytes());
    out.extend_from_slice(&sum.to_le_bytes());
    out.extend_from_slice(&END_TAG);
    out
}

/// The parsed trailer.
pub(crate) struct Trailer {
    pub(crate) index_offset: u64,
    pub(crate) total: u64,
    pub(crate) checksum: u32,
}

/// Parses the trailer found at `offset` (the last 24 bytes of the file).
pub(crate) fn parse_trailer(b: &[u8; TRAILER], offset: u64) -> Result<Trailer> {
    if b[20..] != END_TAG {
        return Err(corrupt(
            offset,
            "missing end tag (file truncated or not finished)",
        ));
    }
    let mut c = Cursor::new(b);
    Ok(Trailer {
        index_offset: c.u64().unwrap_or(0),
        total: c.u64().unwrap_or(0),
        checksum: c.u32().unwrap_or(0),
    })
}

/// Parses and checks the index bytes (from its tag to the trailer) against
/// the trailer, the header length and the file length.
pub(crate) fn parse(bytes: &[u8], t: &Trailer, data_start: u64) -> Result<Vec<FrameInfo>> {
    let at = t.index_offset;
    if fnv1a(bytes) != t.checksum {
        return Err(corrupt(at, "checksum mismatch"));
    }
    let mut c = Cursor::new(bytes);
    if c.take(4) != Some(&INDEX_TAG[..]) {
        return Err(corrupt(at, "missing index tag"));
    }
    let n = c.u32().unwrap_or(0) as usize;
    if c.remaining() != n.saturating_mul(ENTRY) {
        return Err(corrupt(at, format!("length does not match {n} frames")));
    }
    let mut frames = Vec::with_capacity(n);
    let mut next_offset = data_start;
    let mut next_record = 0u64;
    for i in 0..n {
        let f = FrameInfo {
            offset: c.u64().unwrap_or(0),
            first_record: c.u64().unwrap_or(0),
            records: c.u32().unwrap_or(0),
        };
        if f.offset < next_offset || f.offset >= at {
            return Err(corrupt(
                at,
                format!("frame {i} offset {} out of order", f.offset),
            ));
        }
        if f.first_record != next_record || f.records == 0 {
            return Err(corrupt(
                at,
                format!("frame {i} record numbers inconsistent"),
            ));
        }
        next_offset = f.offset + 1;
        next_record += u64::from(f.records);
        frames.push(f);
    }
    if next_record != t.total {
        return Err(corrupt(
            at,
            format!(
                "frames hold {next_record} records, trailer says {}",
                t.total
            ),
        ));
    }
    Ok(frames)
}

fn corrupt(offset: u64, reason: impl Into<String>) -> TraceError {
    TraceError::CorruptIndex {
        offset,
        reason: reason.into(),
    }
}
