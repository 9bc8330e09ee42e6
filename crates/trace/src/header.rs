//! The file header: magic, version, flags and metadata.
//!
//! Layout (little-endian), see `docs/trace-format.md`:
//! magic `CPTRACE\0` (8), version u16, flags u16, header length u32,
//! records per frame u32, page size hint u32, metadata count u32, then per
//! entry a u16 key length, the key, a u32 value length and the value (UTF-8).

use std::io::Read;

use crate::error::{Result, TraceError};
use crate::io_util::{read_full, Cursor};

/// The 8 bytes every trace file starts with.
pub const MAGIC: [u8; 8] = *b"CPTRACE\0";
/// The format version this crate writes and reads.
pub const VERSION: u16 = 1;
/// Default number of records per frame (1 Mi).
pub const DEFAULT_FRAME_RECORDS: u32 = 1 << 20;
/// Largest header accepted (1 MiB), so a corrupt length cannot exhaust memory.
const MAX_HEADER: u32 = 1 << 20;
/// Size of the fixed part of the header.
const FIXED: usize = 28;

/// The trace header: hints and free-form metadata (`command`, `source`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Flag bits; none are defined in version 1, so they must be 0.
    pub flags: u16,
    /// Records per frame used by the writer.
    pub frame_records: u32,
    /// Page size hint in bytes (for footprint statistics).
    pub page_size: u32,
    /// Metadata as ordered key-value pairs.
    pub meta: Vec<(String, String)>,
}

impl Default for Header {
    fn default() -> Self {
        Header {
            flags: 0,
            frame_records: DEFAULT_FRAME_RECORDS,
            page_size: 4096,
            meta: Vec::new(),
        }
    }
}

impl Header {
    /// Adds a metadata entry (builder style).
    pub fn with_meta(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.meta.push((key.into(), value.into()));
        self
    }

    /// The value of the first metadata entry named `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.meta
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Encodes the header to bytes.
    pub(crate) fn encode(&self) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&self.flags.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes()); // length, patched below
        out.extend_from_slice(&self.frame_records.to_le_bytes());
        out.extend_from_slice(&self.page_size.to_le_bytes());
        out.extend_from_slice(&(self.meta.len() as u32).to_le_bytes());
        for (k, v) in &self.meta {
            let kl = u16::try_from(k.len()).map_err(|_| bad(16, "metadata key too long"))?;
            out.extend_from_slice(&kl.to_le_bytes());
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(&(v.len() as u32).to_le_bytes());
            out.extend_from_slice(v.as_bytes());
        }
        let len = u32::try_from(out.len())
            .ok()
            .filter(|&l| l <= MAX_HEADER)
            .ok_or_else(|| bad(12, "metadata too large"))?;
        out[12..16].copy_from_slice(&len.to_le_bytes());
        Ok(out)
    }

    /// Reads and checks a header; returns it and its length in bytes.
    pub(crate) fn read<R: Read + ?Sized>(r: &mut R) -> Result<(Header, u64)> {
        let mut fixed = [0u8; FIXED];
        let n = read_full(r, &mut fixed)?;
        if n < MAGIC.len() || fixed[..8] != MAGIC {
            if n >= MAGIC.len() || !MAGIC.starts_with(&fixed[..n]) {
                return Err(TraceError::BadMagic { offset: 0 });
            }
            return Err(TraceError::Truncated {
                what: "header",
                offset: 0,
            });
        }
        if n < 10 {
            return Err(TraceError::Truncated {
                what: "header",
                offset: 0,
            });
        }
        let version = u16::from_le_bytes([fixed[8], fixed[9]]);
        if version != VERSION {
            return Err(TraceError::Version {
                offset: 8,
                found: version,
                supported: VERSION,
            });
        }
        if n < FIXED {
            return Err(TraceError::Truncated {
                what: "header",
                offset: 0,
            });
        }
        let mut c = Cursor::new(&fixed[10..]);
        let flags = c.u16().unwrap_or(0);
        let len = c.u32().unwrap_or(0);
        let frame_records = c.u32().unwrap_or(0);
        let page_size = c.u32().unwrap_or(0);
        let count = c.u32().unwrap_or(0);
        if flags != 0 {
            return Err(bad(10, format!("unknown flags {flags:#06x}")));
        }
        if len < FIXED as u32 || len > MAX_HEADER {
            return Err(bad(12, format!("header length {len} out of range")));
        }
        if frame_records == 0 {
            return Err(bad(16, "zero records per frame"));
        }
        if page_size == 0 || !page_size.is_power_of_two() {
            return Err(bad(
                20,
                format!("page size {page_size} is not a power of two"),
            ));
        }
        let mut rest = vec![0u8; len as usize - FIXED];
        if read_full(r, &mut rest)? < rest.len() {
            return Err(TraceError::Truncated {
                what: "header",
                offset: 0,
            });
        }
        let mut c = Cursor::new(&rest);
        let mut meta = Vec::new();
        for _ in 0..count {
            let at = (FIXED + c.pos) as u64;
            let entry = (|| {
                let kl = c.u16()? as usize;
                let k = c.take(kl)?.to_vec();
                let vl = c.u32()? as usize;
                let v = c.take(vl)?.to_vec();
                Some((k, v))
            })();
            let (k, v) = entry.ok_or_else(|| bad(at, "metadata runs past the header length"))?;
            let k = String::from_utf8(k).map_err(|_| bad(at, "metadata key is not UTF-8"))?;
            let v = String::from_utf8(v).map_err(|_| bad(at, "metadata value is not UTF-8"))?;
            meta.push((k, v));
        }
        if c.remaining() != 0 {
            return Err(bad((FIXED + c.pos) as u64, "bytes after the metadata"));
        }
        Ok((
            Header {
                flags,
                frame_records,
                page_size,
                meta,
            },
            u64::from(len),
        ))
    }
}

fn bad(offset: u64, reason: impl Into<String>) -> TraceError {
    TraceError::BadHeader {
        offset,
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips() {
        let h = Header::default()
            .with_meta("command", "ls -l")
            .with_meta("source", "lackey");
        let bytes = h.encode().unwrap();
        let (back, len) = Header::read(&mut &bytes[..]).unwrap();
        assert_eq!(back, h);
        assert_eq!(len, bytes.len() as u64);
        assert_eq!(back.get("command"), Some("ls -l"));
    }

    #[test]
    fn bad_magic_and_version() {
        let bytes = Header::default().encode().unwrap();
        let mut b = bytes.clone();
        b[0] = b'X';
        assert!(matches!(
            Header::read(&mut &b[..]),
            Err(TraceError::BadMagic { offset: 0 })
        ));
        let mut b = bytes.clone();
        b[8] = 9;
        assert!(matches!(
            Header::read(&mut &b[..]),
            Err(TraceError::Version { found: 9, .. })
        ));
        assert!(matches!(
            Header::read(&mut &bytes[..20]),
            Err(TraceError::Truncated { .. })
        ));
    }
}
