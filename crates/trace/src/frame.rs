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

use zstd::bulk::Decompressor;

use crate::error::{Result, TraceError};
use crate::io_util::Cursor;
use crate::record::{Record, RecordError, MAX_PAYLOAD};
use crate::sink::RecordSink;

mod encoder;
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

/// A varint of at most 48 bits; one byte (most deltas of a real trace)
/// without a loop.
#[inline(always)]
fn get_varint(c: &mut Cursor<'_>) -> Option<u64> {
    match c.buf.get(c.pos) {
        Some(&b) if b < 0x80 => {
            c.pos += 1;
            Some(u64::from(b))
        }
        _ => get_long_varint(c),
    }
}

fn get_long_varint(c: &mut Cursor<'_>) -> Option<u64> {
    let mut v = 0u64;
    for i in 0..7 {
        let b = *c.buf.get(c.pos)?;
        c.pos += 1;
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return (v <= MASK48).then_some(v);
        }
    }
    None
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

/// Decompresses frames; keeps its zstd context and scratch buffer.
pub(crate) struct FrameDecoder {
    dec: Decompressor<'static>,
    raw: Vec<u8>,
}

impl FrameDecoder {
    pub(crate) fn new() -> Result<FrameDecoder> {
        Ok(FrameDecoder {
            dec: Decompressor::new()?,
            raw: Vec::new(),
        })
    }

    /// Decodes the frame whose header `h` sits at byte `offset` and whose
    /// first record has number `first`; replaces the contents of `out`.
    pub(crate) fn decode(
        &mut self,
        h: FrameHeader,
        body: &[u8],
        offset: u64,
        first: u64,
        out: &mut Vec<Record>,
    ) -> Result<()> {
        out.clear();
        self.decode_to(h, body, offset, first, out)
    }

    /// As [`FrameDecoder::decode`], each record pushed to `out` as it is
    /// decoded.
    pub(crate) fn decode_to<S: RecordSink>(
        &mut self,
        h: FrameHeader,
        body: &[u8],
        offset: u64,
        first: u64,
        out: &mut S,
    ) -> Result<()> {
        self.raw.clear();
        self.raw.reserve(h.raw_len as usize);
        let got = self
            .dec
            .decompress_to_buffer(body, &mut self.raw)
            .map_err(|e| bad(offset, format!("zstd: {e}")))?;
        if got != h.raw_len as usize {
            return Err(bad(
                offset,
                format!("decompressed {got} bytes, header says {}", h.raw_len),
            ));
        }
        let n = h.records as usize;
        let raw = &self.raw[..];
        let mut c = Cursor::new(raw);
        let li = c.u32().unwrap_or(0) as usize;
        let ld = c.u32().unwrap_or(0) as usize;
        let planes_end = SECTIONS + 3 * n;
        let vars = &raw[planes_end.min(raw.len())..];
        if li > vars.len() || ld > vars.len() - li {
            return Err(bad(offset, "address sections overrun the frame"));
        }
        let kinds = &raw[SECTIONS..SECTIONS + n];
        let sizes = &raw[SECTIONS + n..SECTIONS + 2 * n];
        let gaps = &raw[SECTIONS + 2 * n..planes_end];
        let mut ic = Cursor::new(&vars[..li]);
        let mut dc = Cursor::new(&vars[li..li + ld]);
        let mut ec = Cursor::new(&vars[li + ld..]);
        let (mut pi, mut pd) = (0u64, 0u64);
        out.reserve(n);
        // Most frames hold only valid kinds, sizes and gaps: checked here
        // for the whole frame at once, their records need no check of
        // their own but the escapes'. Any other frame takes the checked
        // loop, which names the first bad record.
        // (a fold with no early exit, which the compiler vectorizes)
        let invalid = kinds
            .iter()
            .zip(sizes)
            .zip(gaps)
            .fold(false, |any, ((&k, &s), &g)| {
                any | (k > 5) | (s > 0x7f) | (g > 0x3f) | ((s == 0) & (k != 4))
            });
        let valid = !invalid;
        if valid {
            for (i, ((&k, &s), &g)) in kinds.iter().zip(sizes).zip(gaps).enumerate() {
                let a = match k {
                    2 => {
                        let z = get_varint(&mut ic)
                            .ok_or_else(|| bad(offset, "instruction address section ends early"))?;
                        pi = undelta48(z, pi);
                        pi
                    }
                    4 => get_varint(&mut ec)
                        .ok_or_else(|| bad(offset, "escape section ends early"))?,
                    _ => {
                        let z = get_varint(&mut dc)
                            .ok_or_else(|| bad(offset, "data address section ends early"))?;
                        pd = undelta48(z, pd);
                        pd
                    }
                };
                let word = a | u64::from(k) << 48 | u64::from(s) << 51 | u64::from(g) << 58;
                out.push(if k == 4 {
                    Record::from_raw(word).map_err(|source| TraceError::BadRecord {
                        offset,
                        record: first + i as u64,
                        source,
                    })?
                } else {
                    Record::from_checked_access(word)
                });
            }
        } else {
            for i in 0..n {
                let rec_no = first + i as u64;
                let bad_rec = |source| TraceError::BadRecord {
                    offset,
                    record: rec_no,
                    source,
                };
                let (k, s, g) = (kinds[i], sizes[i], gaps[i]);
                if k > 7 {
                    return Err(bad_rec(RecordError::KindCode(k)));
                }
                if s > 0x7f {
                    return Err(bad_rec(RecordError::Size(u64::from(s))));
                }
                if g > 0x3f {
                    return Err(bad_rec(RecordError::Gap(u64::from(g))));
                }
                let a = match k {
                    2 => {
                        let z = get_varint(&mut ic)
                            .ok_or_else(|| bad(offset, "instruction address section ends early"))?;
                        pi = undelta48(z, pi);
                        pi
                    }
                    // Data accesses: load, store, modify, dependent load.
                    0 | 1 | 3 | 5 => {
                        let z = get_varint(&mut dc)
                            .ok_or_else(|| bad(offset, "data address section ends early"))?;
                        pd = undelta48(z, pd);
                        pd
                    }
                    _ => get_varint(&mut ec)
                        .ok_or_else(|| bad(offset, "escape section ends early"))?,
                };
                let word = a | u64::from(k) << 48 | u64::from(s) << 51 | u64::from(g) << 58;
                out.push(Record::from_raw(word).map_err(bad_rec)?);
            }
        }
        if ic.remaining() != 0 || dc.remaining() != 0 || ec.remaining() != 0 {
            return Err(bad(offset, "bytes left over after the last record"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Kind;

    #[test]
    fn deltas_round_trip_at_the_edges() {
        for (a, b) in [(0, MASK48), (MASK48, 0), (5, 3), (3, 5), (1 << 47, 0)] {
            assert_eq!(undelta48(delta48(a, b), b), a);
        }
    }

    #[test]
    fn frame_round_trips() {
        let recs: Vec<Record> = (0..1000u64)
            .map(|i| match i % 5 {
                0 => Record::access(Kind::Ifetch, 0x40_0000 + i * 3, 3, 0).unwrap(),
                1 => Record::access(Kind::Load, 0x7fff_0000_0000 - i * 8, 8, 1).unwrap(),
                2 => Record::event(crate::Event::ThreadSwitch(i), 2).unwrap(),
                // Dependent loads share the data address section.
                3 => Record::access(Kind::DepLoad, 0x1000_0000 + i * 64, 8, 4).unwrap(),
                _ => Record::access(Kind::Store, 0xffff_ffff_ff60_0000, 8, 63).unwrap(),
            })
            .collect();
        let mut enc = FrameEncoder::new(3).unwrap();
        let mut buf = Vec::new();
        enc.encode(&recs, &mut buf).unwrap();
        let mut hb = [0u8; FRAME_HEADER];
        hb.copy_from_slice(&buf[..FRAME_HEADER]);
        let h = FrameHeader::parse(&hb, 0).unwrap();
        let mut dec = FrameDecoder::new().unwrap();
        let mut out = Vec::new();
        dec.decode(h, &buf[FRAME_HEADER..], 0, 0, &mut out).unwrap();
        assert_eq!(out, recs);
    }
}
