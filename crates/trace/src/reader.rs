//! The streaming reader of the binary format: one frame in memory at a
//! time, from any [`Read`] (a pipe is fine: no seeking).
//!
//! The reader checks every frame and, at the end, the index against the
//! frames it has seen. After the first error the iterator ends.

use std::io::Read;

use crate::error::{Result, TraceError};
use crate::frame::{FrameDecoder, FrameHeader, FRAME_HEADER, FRAME_TAG};
use crate::header::Header;
use crate::index::{self, FrameInfo, INDEX_TAG, TRAILER};
use crate::io_util::read_full;
use crate::record::Record;

/// Reads records in order from a binary trace.
pub struct Reader<R: Read> {
    inner: R,
    header: Header,
    data_start: u64,
    offset: u64,
    next_record: u64,
    frames: Vec<FrameInfo>,
    dec: FrameDecoder,
    body: Vec<u8>,
    buf: Vec<Record>,
    pos: usize,
    done: bool,
}

impl<R: Read> Reader<R> {
    /// Reads and checks the header.
    pub fn new(mut inner: R) -> Result<Reader<R>> {
        let (header, len) = Header::read(&mut inner)?;
        Ok(Reader {
            inner,
            header,
            data_start: len,
            offset: len,
            next_record: 0,
            frames: Vec::new(),
            dec: FrameDecoder::new()?,
            body: Vec::new(),
            buf: Vec::new(),
            pos: 0,
            done: false,
        })
    }

    /// The file header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Decodes the next frame; `None` after the index has been read and
    /// checked.
    pub fn next_frame(&mut self) -> Result<Option<&[Record]>> {
        let mut buf = std::mem::take(&mut self.buf);
        let r = self.advance(&mut buf);
        self.buf = buf;
        self.pos = 0;
        Ok(r?.then_some(&self.buf[..]))
    }

    /// [`Reader::next_frame`] that hands the frame's records over in `out`
    /// instead of lending them: the frame is decoded straight into `out`
    /// (its old contents dropped, its allocation reused). `Ok(false)` at
    /// the end (after the index has been read and checked). For a consumer
    /// that keeps whole frames (a read-ahead thread), this saves copying
    /// them, and the reader holds no frame buffer of its own.
    pub fn swap_frame(&mut self, out: &mut Vec<Record>) -> Result<bool> {
        self.advance(out)
    }

    /// Decodes the next frame into `out`; `Ok(false)` (and `out` empty) at
    /// the end. After the first error, or the end, every call gives
    /// `Ok(false)`.
    fn advance(&mut self, out: &mut Vec<Record>) -> Result<bool> {
        if self.done {
            out.clear();
            return Ok(false);
        }
        match self.read_frame(out) {
            Ok(true) => Ok(true),
            Ok(false) => {
                self.done = true;
                out.clear();
                Ok(false)
            }
            Err(e) => {
                self.done = true;
                out.clear();
                Err(e)
            }
        }
    }

    fn read_frame(&mut self, out: &mut Vec<Record>) -> Result<bool> {
        let at = self.offset;
        let mut hb = [0u8; FRAME_HEADER];
        let n = read_full(&mut self.inner, &mut hb[..4])?;
        if n < 4 {
            return Err(TraceError::Truncated {
                what: "file (no index)",
                offset: at,
            });
        }
        if hb[..4] == INDEX_TAG {
            self.read_index(at)?;
            return Ok(false);
        }
        if hb[..4] != FRAME_TAG {
            return Err(TraceError::BadFrame {
                offset: at,
                reason: "missing frame tag".into(),
            });
        }
        if read_full(&mut self.inner, &mut hb[4..])? < FRAME_HEADER - 4 {
            return Err(TraceError::Truncated {
                what: "frame",
                offset: at,
            });
        }
        let h = FrameHeader::parse(&hb, at)?;
        // Grow the buffer as bytes arrive: a cut file whose frame header
        // claims a huge length must not allocate that length up front.
        self.body.clear();
        let want = u64::from(h.compressed_len);
        if (&mut self.inner).take(want).read_to_end(&mut self.body)? < want as usize {
            return Err(TraceError::Truncated {
                what: "frame",
                offset: at,
            });
        }
        self.dec.decode(h, &self.body, at, self.next_record, out)?;
        self.frames.push(FrameInfo {
            offset: at,
            first_record: self.next_record,
            records: h.records,
        });
        self.offset += (FRAME_HEADER + self.body.len()) as u64;
        self.next_record += u64::from(h.records);
        Ok(true)
    }

    fn read_index(&mut self, at: u64) -> Result<()> {
        let mut count = [0u8; 4];
        let want = self.frames.len() * 20 + TRAILER;
        if read_full(&mut self.inner, &mut count)? < 4 {
            return Err(TraceError::Truncated {
                what: "index",
                offset: at,
            });
        }
        if u32::from_le_bytes(count) as usize != self.frames.len() {
            return Err(TraceError::CorruptIndex {
                offset: at,
                reason: format!(
                    "index lists {} frames, file has {}",
                    u32::from_le_bytes(count),
                    self.frames.len()
                ),
            });
        }
        let mut rest = vec![0u8; want];
        if read_full(&mut self.inner, &mut rest)? < want {
            return Err(TraceError::Truncated {
                what: "index",
                offset: at,
            });
        }
        let mut bytes = Vec::with_capacity(8 + want);
        bytes.extend_from_slice(&INDEX_TAG);
        bytes.extend_from_slice(&count);
        bytes.extend_from_slice(&rest[..want - TRAILER]);
        let mut tb = [0u8; TRAILER];
        tb.copy_from_slice(&rest[want - TRAILER..]);
        let trailer_at = at + bytes.len() as u64;
        let t = index::parse_trailer(&tb, trailer_at)?;
        if t.index_offset != at {
            return Err(TraceError::CorruptIndex {
                offset: trailer_at,
                reason: format!("trailer points to {}, index is at {at}", t.index_offset),
            });
        }
        let frames = index::parse(&bytes, &t, self.data_start)?;
        if frames != self.frames {
            return Err(TraceError::CorruptIndex {
                offset: at,
                reason: "entries do not match the frames".into(),
            });
        }
        let mut extra = [0u8; 1];
        if read_full(&mut self.inner, &mut extra)? != 0 {
            return Err(TraceError::CorruptIndex {
                offset: trailer_at + TRAILER as u64,
                reason: "bytes after the trailer".into(),
            });
        }
        Ok(())
    }
}

impl<R: Read> Iterator for Reader<R> {
    type Item = Result<Record>;

    #[inline]
    fn next(&mut self) -> Option<Result<Record>> {
        loop {
            if let Some(&r) = self.buf.get(self.pos) {
                self.pos += 1;
                return Some(Ok(r));
            }
            match self.next_frame() {
                Ok(Some(_)) => {}
                Ok(None) => return None,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::MAX_FRAME_RECORDS;

    /// A cut file whose frame header claims ~160 MB of compressed bytes is
    /// truncated at that frame, without allocating what it claims.
    #[test]
    fn huge_claimed_frame_is_not_allocated() {
        let mut bytes = Header::default().encode().unwrap();
        let at = bytes.len() as u64;
        let raw_len = 8 + MAX_FRAME_RECORDS * 9;
        bytes.extend_from_slice(&FRAME_TAG);
        bytes.extend_from_slice(&(raw_len + 1000).to_le_bytes());
        bytes.extend_from_slice(&MAX_FRAME_RECORDS.to_le_bytes());
        bytes.extend_from_slice(&raw_len.to_le_bytes());
        bytes.extend_from_slice(&[0u8; 100]);
        let mut r = Reader::new(&bytes[..]).unwrap();
        let err = r.next_frame().unwrap_err();
        assert!(
            matches!(err, TraceError::Truncated { what: "frame", offset } if offset == at),
            "{err}"
        );
        assert!(r.body.capacity() < 1 << 20, "{}", r.body.capacity());
    }
}
