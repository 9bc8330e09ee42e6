//! The index file's layout: its constants, the fixed-size header (encode
//! and parse, with its checksum), and the trace identity it records (the
//! trace's length and trailer).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use cachepart_trace::codec::fnv1a;

use crate::error::{CurveError, Result};
use crate::options::Totals;

pub(super) const MAGIC: [u8; 8] = *b"CPSHARDX";
pub(super) const VERSION: u16 = 1;
pub(super) const HEADER: usize = 176;
/// Bytes of a trace's trailer (its last bytes).
pub(super) const TRAILER: usize = 24;
/// Most distinct lines in a base sample (ids are `u32`).
pub(super) const MAX_LINES: u64 = 1 << 32;
/// zstd level of the sections.
pub(super) const LEVEL: i32 = 3;

/// A trace file's length and its last [`TRAILER`] bytes (its trailer:
/// index offset, record count and index checksum).
pub(super) fn trace_identity(trace: &Path) -> Result<(u64, [u8; TRAILER])> {
    let io = CurveError::io_at(trace);
    let mut f = File::open(trace).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    let mut t = [0u8; TRAILER];
    if len >= TRAILER as u64 {
        f.seek(SeekFrom::Start(len - TRAILER as u64)).map_err(io)?;
        f.read_exact(&mut t).map_err(io)?;
    }
    Ok((len, t))
}

/// The fixed-size header.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Header {
    pub(super) line_bytes: u32,
    pub(super) ifetch: bool,
    pub(super) exact_below: u32,
    pub(super) base_t: u64,
    pub(super) base_ref_t: u64,
    pub(super) base_salt: u64,
    pub(super) base_ref_salt: u64,
    pub(super) totals: Totals,
    pub(super) trace_len: u64,
    pub(super) trailer: [u8; TRAILER],
    pub(super) lines: u64,
    pub(super) runs: u64,
    pub(super) refs: u64,
    pub(super) lines_z: u64,
    pub(super) runs_z: u64,
    pub(super) refs_z: u64,
    pub(super) runs_raw: u64,
    pub(super) refs_raw: u64,
}

impl Header {
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(HEADER);
        b.extend_from_slice(&MAGIC);
        b.extend_from_slice(&VERSION.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&self.line_bytes.to_le_bytes());
        b.extend_from_slice(&[u8::from(self.ifetch), 0, 0, 0]);
        b.extend_from_slice(&self.exact_below.to_le_bytes());
        for v in [
            self.base_t,
            self.base_ref_t,
            self.base_salt,
            self.base_ref_salt,
            self.totals.accesses,
            self.totals.instructions,
            self.trace_len,
        ] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&self.trailer);
        for v in [
            self.lines,
            self.runs,
            self.refs,
            self.lines_z,
            self.runs_z,
            self.refs_z,
            self.runs_raw,
            self.refs_raw,
        ] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        let sum = fnv1a(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        b.extend_from_slice(&[0; 4]);
        debug_assert_eq!(b.len(), HEADER);
        b
    }

    /// Parses `b`; errors name the byte offset in the file.
    pub(super) fn parse(b: &[u8; HEADER]) -> std::result::Result<Header, (u64, String)> {
        let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let u64_at = |o: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[o..o + 8]);
            u64::from_le_bytes(x)
        };
        if b[..8] != MAGIC {
            return Err((0, "bad magic: not a SHARDS sample index".into()));
        }
        let version = u16_at(8);
        if version != VERSION {
            return Err((
                8,
                format!("version {version}: this build reads version {VERSION}"),
            ));
        }
        let sum = fnv1a(&b[..168]);
        if u32_at(168) != sum {
            return Err((168, "header checksum mismatch (corrupt header)".into()));
        }
        if u16_at(10) != 0 {
            return Err((10, format!("flags {:#x}: expected 0", u16_at(10))));
        }
        if b[16] > 1 {
            return Err((16, format!("fetch flag {}: expected 0 or 1", b[16])));
        }
        let mut trailer = [0u8; TRAILER];
        trailer.copy_from_slice(&b[80..104]);
        Ok(Header {
            line_bytes: u32_at(12),
            ifetch: b[16] == 1,
            exact_below: u32_at(20),
            base_t: u64_at(24),
            base_ref_t: u64_at(32),
            base_salt: u64_at(40),
            base_ref_salt: u64_at(48),
            totals: Totals {
                accesses: u64_at(56),
                instructions: u64_at(64),
            },
            trace_len: u64_at(72),
            trailer,
            lines: u64_at(104),
            runs: u64_at(112),
            refs: u64_at(120),
            lines_z: u64_at(128),
            runs_z: u64_at(136),
            refs_z: u64_at(144),
            runs_raw: u64_at(152),
            refs_raw: u64_at(160),
        })
    }
}
