//! One frame: a run of records, transformed into planes and compressed
//! with zstd as one independent zstd frame.
//!
//! On disk a frame is a 16-byte frame header (tag `CPFR`, compressed length
//! u32, record count u32, raw length u32) and the zstd frame. Before
//! compression the records are laid out as (all little-endian):
//!
//! * u32 length of the instruction-address section, u32 length of the
//!   data-address section;
//! * the kind plane (one byte per record), the size/event-code plane and
//!   the gap plane;
//! * instruction-fetch addresses: zigzag varints of the 48-bit wrapping
//!   difference to the previous fetch address of the frame;
//! * data addresses (load, store, modify): the same against the previous
//!   data address of the frame;
//! * escape payloads, as plain varints.
//!
//! Each frame starts from address 0, so frames decode independently.

use crate::error::{Result, TraceError};
use crate::io_util::Cursor;
use crate::record::MAX_PAYLOAD;

mod decoder;
mod encoder;
#[cfg(test)]
mod tests;
pub(crate) use decoder::FrameDecoder;
pub(crate) use encoder::FrameEncoder;

/// Tag that starts every frame.
pub(crate) const FRAME_TAG: [u8; 4] = *b"CPFR";
/// Bytes of a frame header.
pub(crate) const FRAME_HEADER: usize = 16;
/// Largest record count a frame may declare (16 Mi), bounding memory.
pub(crate) const MAX_FRAME_RECORDS: u32 = 1 << 24;
/// Largest raw bytes per record: three plane bytes and a 7-byte varint.
const MAX_RAW_PER_RECORD: u64 = 10;
const SECTIONS: usize = 8;
const MASK48: u64 = MAX_PAYLOAD;

/// The fixed header in front of each frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FrameHeader {
    pub(crate) compressed_len: u32,
    pub(crate) records: u32,
    pub(crate) raw_len: u32,
}

impl FrameHeader {
    /// Parses and bounds-checks a frame header found at `offset`.
    pub(crate) fn parse(b: &[u8; FRAME_HEADER], offset: u64) -> Result<FrameHeader> {
        if b[..4] != FRAME_TAG {
            return Err(bad(offset, "missing frame tag"));
        }
        let mut c = Cursor::new(&b[4..]);
        let h = FrameHeader {
            compressed_len: c.u32().unwrap_or(0),
            records: c.u32().unwrap_or(0),
            raw_len: c.u32().unwrap_or(0),
        };
        if h.records == 0 || h.records > MAX_FRAME_RECORDS {
            return Err(bad(
                offset,
                format!("record count {} out of range", h.records),
            ));
        }
        let max_raw = SECTIONS as u64 + u64::from(h.records) * MAX_RAW_PER_RECORD;
        if u64::from(h.raw_len) > max_raw
            || (h.raw_len as usize) < SECTIONS + 3 * h.records as usize
        {
            return Err(bad(
                offset,
                format!("raw length {} out of range", h.raw_len),
            ));
        }
        let max_comp = zstd::zstd_safe::compress_bound(h.raw_len as usize) as u64 + 64;
        if h.compressed_len == 0 || u64::from(h.compressed_len) > max_comp {
            return Err(bad(
                offset,
                format!("compressed length {} out of range", h.compressed_len),
            ));
        }
        Ok(h)
    }

    fn encode(&self) -> [u8; FRAME_HEADER] {
        let mut b = [0u8; FRAME_HEADER];
        b[..4].copy_from_slice(&FRAME_TAG);
        b[4..8].copy_from_slice(&self.compressed_len.to_le_bytes());
        b[8..12].copy_from_slice(&self.records.to_le_bytes());
        b[12..16].copy_from_slice(&self.raw_len.to_le_bytes());
        b
    }
}

fn bad(offset: u64, reason: impl Into<String>) -> TraceError {
    TraceError::BadFrame {
        offset,
        reason: reason.into(),
    }
}

/// Zigzag code of the signed 48-bit difference `cur - prev`.
fn delta48(cur: u64, prev: u64) -> u64 {
    let d = cur.wrapping_sub(prev) & MASK48;
    let s = ((d << 16) as i64) >> 16;
    ((s << 1) ^ (s >> 63)) as u64 & ((MASK48 << 1) | 1)
}

fn undelta48(z: u64, prev: u64) -> u64 {
    let s = ((z >> 1) as i64) ^ -((z & 1) as i64);
    prev.wrapping_add(s as u64) & MASK48
}
