//! The reading side of a frame (see the parent module for the layout).
//!
//! After zstd, the planes of the whole frame are checked at once (kinds,
//! sizes and gaps in range: a fold with no early exit, which the
//! compiler vectorizes). A frame that passes, as every frame a writer
//! makes does, is decoded by a loop that checks only its escapes, in
//! blocks of [`BLOCK`] records:
//!
//! * each record's top 16 bits (kind, size, gap) are put together from
//!   the three planes for the whole block first (a loop the compiler
//!   vectorizes), so that a record is its address ORed with one shifted
//!   `u16`;
//! * per record a branch on the kind picks the section, and a one-byte
//!   varint (most address deltas of a real trace) is read without a loop;
//! * the records go into a block array, handed to the sink in one
//!   [`RecordSink::push_slice`] (a vector copies it in one `memcpy`
//!   rather than checking its capacity per record).
//!
//! Any other frame is decoded by the checked loop, which checks every
//! record and names the first bad one. Both read the sections in the same
//! order and fail on the same record with the same error, the records
//! before it given to the sink.
//!
//! The kind branch is kept on purpose: a real trace's kinds follow its
//! program's loops, which the branch predictor learns. Selecting the
//! section without a branch (conditional moves, or a block's addresses
//! decoded section by section first and its records assembled after), and
//! reading longer varints from one 8-byte load, measured slower: each
//! record then waits on the previous one's section position.

use zstd::bulk::Decompressor;

use super::{bad, undelta48, FrameHeader, MASK48, SECTIONS};
use crate::error::{Result, TraceError};
use crate::io_util::Cursor;
use crate::record::{Record, RecordError};
use crate::sink::RecordSink;

/// Records per block of the valid-frame loop: its array of each record's
/// top 16 bits stays in L1.
const BLOCK: usize = 2048;

/// Decompresses frames; keeps its zstd context and scratch buffer.
pub(crate) struct FrameDecoder {
    dec: Decompressor<'static>,
    /// The decompressed frame (visible to the frame tests, which check
    /// that a corrupt header sizes nothing).
    pub(super) raw: Vec<u8>,
}

/// A decompressed frame's planes and the bounds of its varint sections.
struct Planes<'a> {
    raw: &'a [u8],
    kinds: &'a [u8],
    sizes: &'a [u8],
    gaps: &'a [u8],
    /// Start of the instruction, data and escape sections, and the end.
    bounds: [usize; 4],
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

    /// As [`FrameDecoder::decode`], the records pushed to `out` in trace
    /// order as they are decoded.
    pub(crate) fn decode_to<S: RecordSink>(
        &mut self,
        h: FrameHeader,
        body: &[u8],
        offset: u64,
        first: u64,
        out: &mut S,
    ) -> Result<()> {
        let p = self.decompress(h, body, offset)?;
        out.reserve(h.records as usize);
        // (a fold with no early exit, which the compiler vectorizes)
        let invalid = p
            .kinds
            .iter()
            .zip(p.sizes)
            .zip(p.gaps)
            .fold(false, |any, ((&k, &s), &g)| {
                any | (k > 5) | (s > 0x7f) | (g > 0x3f) | ((s == 0) & (k != 4))
            });
        if invalid {
            decode_checked(&p, offset, first, out)
        } else {
            decode_valid(&p, offset, first, out)
        }
    }

    /// As [`FrameDecoder::decode_to`], by the checked loop alone: the
    /// reference the valid-frame loop is tested against.
    #[cfg(test)]
    pub(crate) fn decode_reference<S: RecordSink>(
        &mut self,
        h: FrameHeader,
        body: &[u8],
        offset: u64,
        first: u64,
        out: &mut S,
    ) -> Result<()> {
        let p = self.decompress(h, body, offset)?;
        out.reserve(h.records as usize);
        decode_checked(&p, offset, first, out)
    }

    /// Decompresses the frame and splits it into its planes and sections.
    /// The header's raw length is bounded by its record count
    /// ([`FrameHeader::parse`]); a zstd frame that records its content
    /// size (as every frame a writer makes does) must agree with it before
    /// the buffer is sized, so that a corrupt length allocates nothing.
    fn decompress(&mut self, h: FrameHeader, body: &[u8], offset: u64) -> Result<Planes<'_>> {
        match zstd::zstd_safe::get_frame_content_size(body) {
            Ok(Some(size)) if size != u64::from(h.raw_len) => {
                return Err(bad(
                    offset,
                    format!("zstd frame holds {size} bytes, header says {}", h.raw_len),
                ));
            }
            Ok(_) => {}
            Err(_) => return Err(bad(offset, "zstd: not a zstd frame header")),
        }
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
        let vars = raw.len() - planes_end.min(raw.len());
        if li > vars || ld > vars - li {
            return Err(bad(offset, "address sections overrun the frame"));
        }
        Ok(Planes {
            raw,
            kinds: &raw[SECTIONS..SECTIONS + n],
            sizes: &raw[SECTIONS + n..SECTIONS + 2 * n],
            gaps: &raw[SECTIONS + 2 * n..planes_end],
            bounds: [planes_end, planes_end + li, planes_end + li + ld, raw.len()],
        })
    }
}

/// The decode of a frame whose planes passed the check: only escapes are
/// checked.
fn decode_valid<S: RecordSink>(p: &Planes<'_>, offset: u64, first: u64, out: &mut S) -> Result<()> {
    let [b0, b1, b2, b3] = p.bounds;
    let mut ic = Cursor::new(&p.raw[b0..b1]);
    let mut dc = Cursor::new(&p.raw[b1..b2]);
    let mut ec = Cursor::new(&p.raw[b2..b3]);
    let (mut pi, mut pd) = (0u64, 0u64);
    let mut high = [0u16; BLOCK];
    let mut recs = [Record::from_checked_access(0); BLOCK];
    let n = p.kinds.len();
    let mut start = 0;
    while start < n {
        let len = BLOCK.min(n - start);
        let kinds = &p.kinds[start..start + len];
        let sizes = &p.sizes[start..start + len];
        let gaps = &p.gaps[start..start + len];
        // each record's top 16 bits (a loop the compiler vectorizes)
        for (h, ((&k, &s), &g)) in high.iter_mut().zip(kinds.iter().zip(sizes).zip(gaps)) {
            *h = u16::from(k) | u16::from(s) << 3 | u16::from(g) << 10;
        }
        for (j, &h) in high[..len].iter().enumerate() {
            let (a, section) = match h & 7 {
                2 => match get_varint(&mut ic) {
                    Some(z) => {
                        pi = undelta48(z, pi);
                        (Some(pi), "instruction address")
                    }
                    None => (None, "instruction address"),
                },
                4 => (get_varint(&mut ec), "escape"),
                _ => match get_varint(&mut dc) {
                    Some(z) => {
                        pd = undelta48(z, pd);
                        (Some(pd), "data address")
                    }
                    None => (None, "data address"),
                },
            };
            let Some(a) = a else {
                out.push_slice(&recs[..j]);
                let c = match h & 7 {
                    2 => &ic,
                    4 => &ec,
                    _ => &dc,
                };
                return Err(bad(offset, varint_fault(c, section)));
            };
            let word = a | u64::from(h) << 48;
            recs[j] = if h & 7 == 4 {
                match Record::from_raw(word) {
                    Ok(r) => r,
                    Err(source) => {
                        out.push_slice(&recs[..j]);
                        return Err(TraceError::BadRecord {
                            offset,
                            record: first + (start + j) as u64,
                            source,
                        });
                    }
                }
            } else {
                Record::from_checked_access(word)
            };
        }
        out.push_slice(&recs[..len]);
        start += len;
    }
    if ic.remaining() != 0 || dc.remaining() != 0 || ec.remaining() != 0 {
        return Err(bad(offset, "bytes left over after the last record"));
    }
    Ok(())
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

/// [`get_varint`] past its first byte: a byte at a time. The cursor
/// moves only past a varint read (so that [`varint_fault`] can say what is
/// wrong with one that is not).
fn get_long_varint(c: &mut Cursor<'_>) -> Option<u64> {
    let mut v = 0u64;
    for i in 0..7 {
        let b = *c.buf.get(c.pos + i)?;
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            if v > MASK48 {
                return None;
            }
            c.pos += i + 1;
            return Some(v);
        }
    }
    None
}

/// Why the varint at the cursor of `section` cannot be read (the error
/// path only): the section ends inside it, it holds more than 48 bits, or
/// it runs past 7 bytes.
fn varint_fault(c: &Cursor<'_>, section: &str) -> String {
    let rest = c.buf.get(c.pos..).unwrap_or_default();
    let bytes = rest.iter().take(7);
    match rest.iter().take(7).position(|&b| b & 0x80 == 0) {
        Some(end) => format!(
            "{section} section: varint {} is above 48 bits",
            hex_bytes(bytes.take(end + 1))
        ),
        None if rest.len() < 7 => format!("{section} section ends early"),
        None => format!(
            "{section} section: varint {} runs past 7 bytes",
            hex_bytes(bytes)
        ),
    }
}

/// Bytes as `ff ff 7f`.
fn hex_bytes<'a>(bytes: impl Iterator<Item = &'a u8>) -> String {
    bytes
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Decodes the frame one record at a time, every record checked: the
/// first bad record or section is the error.
fn decode_checked<S: RecordSink>(
    p: &Planes<'_>,
    offset: u64,
    first: u64,
    out: &mut S,
) -> Result<()> {
    let [b0, b1, b2, b3] = p.bounds;
    let mut ic = Cursor::new(&p.raw[b0..b1]);
    let mut dc = Cursor::new(&p.raw[b1..b2]);
    let mut ec = Cursor::new(&p.raw[b2..b3]);
    let (mut pi, mut pd) = (0u64, 0u64);
    for i in 0..p.kinds.len() {
        let rec_no = first + i as u64;
        let bad_rec = |source| TraceError::BadRecord {
            offset,
            record: rec_no,
            source,
        };
        let (k, s, g) = (p.kinds[i], p.sizes[i], p.gaps[i]);
        // 6 and 7 are undefined: named as such, not read from a section
        if k > 5 {
            return Err(bad_rec(RecordError::KindCode(k)));
        }
        if s > 0x7f {
            return Err(bad_rec(RecordError::Size(u64::from(s))));
        }
        if g > 0x3f {
            return Err(bad_rec(RecordError::Gap(u64::from(g))));
        }
        let read = |c: &mut Cursor<'_>, section| {
            get_varint(c).ok_or_else(|| bad(offset, varint_fault(c, section)))
        };
        let a = match k {
            2 => {
                pi = undelta48(read(&mut ic, "instruction address")?, pi);
                pi
            }
            // Data accesses: load, store, modify, dependent load.
            0 | 1 | 3 | 5 => {
                pd = undelta48(read(&mut dc, "data address")?, pd);
                pd
            }
            _ => read(&mut ec, "escape")?,
        };
        let word = a | u64::from(k) << 48 | u64::from(s) << 51 | u64::from(g) << 58;
        out.push(Record::from_raw(word).map_err(bad_rec)?);
    }
    if ic.remaining() != 0 || dc.remaining() != 0 || ec.remaining() != 0 {
        return Err(bad(offset, "bytes left over after the last record"));
    }
    Ok(())
}
