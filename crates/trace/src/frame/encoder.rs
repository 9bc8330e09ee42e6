//! The writing side of a frame (see the parent module for the layout).

use zstd::bulk::Compressor;
use zstd::zstd_safe::CParameter;

use super::{delta48, FrameHeader, MASK48, MAX_FRAME_RECORDS, SECTIONS};
use crate::codec::put_varint;
use crate::error::Result;
use crate::record::{Kind, Record};

/// Compresses frames; keeps its zstd context and scratch buffers.
pub(crate) struct FrameEncoder {
    comp: Compressor<'static>,
    raw: Vec<u8>,
    ivar: Vec<u8>,
    dvar: Vec<u8>,
    evar: Vec<u8>,
}

impl FrameEncoder {
    pub(crate) fn new(level: i32) -> Result<FrameEncoder> {
        let mut comp = Compressor::new(level)?;
        comp.set_parameter(CParameter::ChecksumFlag(true))?;
        Ok(FrameEncoder {
            comp,
            raw: Vec::new(),
            ivar: Vec::new(),
            dvar: Vec::new(),
            evar: Vec::new(),
        })
    }

    /// Appends the frame (header and compressed body) holding `records`
    /// (1..=[`MAX_FRAME_RECORDS`]) to `out`.
    pub(crate) fn encode(&mut self, records: &[Record], out: &mut Vec<u8>) -> Result<()> {
        let n = records.len();
        debug_assert!(n > 0 && n <= MAX_FRAME_RECORDS as usize);
        self.raw.clear();
        self.ivar.clear();
        self.dvar.clear();
        self.evar.clear();
        self.raw.resize(SECTIONS + 3 * n, 0);
        let (mut pi, mut pd) = (0u64, 0u64);
        {
            let planes = &mut self.raw[SECTIONS..];
            let (kinds, rest) = planes.split_at_mut(n);
            let (sizes, gaps) = rest.split_at_mut(n);
            for (i, r) in records.iter().enumerate() {
                let raw = r.raw();
                kinds[i] = ((raw >> 48) & 7) as u8;
                sizes[i] = ((raw >> 51) & 0x7f) as u8;
                gaps[i] = (raw >> 58) as u8;
                let a = raw & MASK48;
                match r.kind() {
                    Kind::Ifetch => {
                        put_varint(&mut self.ivar, delta48(a, pi));
                        pi = a;
                    }
                    Kind::Escape => put_varint(&mut self.evar, a),
                    _ => {
                        put_varint(&mut self.dvar, delta48(a, pd));
                        pd = a;
                    }
                }
            }
        }
        self.raw[..4].copy_from_slice(&(self.ivar.len() as u32).to_le_bytes());
        self.raw[4..8].copy_from_slice(&(self.dvar.len() as u32).to_le_bytes());
        self.raw.extend_from_slice(&self.ivar);
        self.raw.extend_from_slice(&self.dvar);
        self.raw.extend_from_slice(&self.evar);
        let body = self.comp.compress(&self.raw)?;
        let h = FrameHeader {
            compressed_len: body.len() as u32,
            records: n as u32,
            raw_len: self.raw.len() as u32,
        };
        out.extend_from_slice(&h.encode());
        out.extend_from_slice(&body);
        Ok(())
    }
}
