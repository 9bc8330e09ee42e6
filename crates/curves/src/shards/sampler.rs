//! The sampling filter: one pass over a chunk of records that counts
//! them and picks the few that matter (sampled lines, reference-sample
//! records, line crossings, escapes), and the sampling stages it applies.

use cachepart_trace::{Kind, Record};

use crate::hash::mix64;
use crate::raw::decode;

const IFETCH: u64 = Kind::Ifetch as u64;
const ESCAPE: u64 = Kind::Escape as u64;

/// Records processed at once by the sampling filter.
pub(super) const CHUNK: usize = 1 << 16;

/// Chunks filtered in parallel at once by [`Shards::extend_from_slice`].
pub(super) const BATCH: usize = 16;

/// Pick flag: the record is an escape, crosses a line boundary or its
/// first line may be sampled.
pub(super) const PICK_LINE: u32 = 1 << 31;
/// Pick flag: the record is in the reference sample.
pub(super) const PICK_REF: u32 = 1 << 30;

/// What the filter found in a chunk.
pub(super) struct Filtered {
    /// Positions of the records that matter, with `PICK_*` flags, and the
    /// index in `lines` of their first line.
    pub(super) picks: Vec<(u32, u32)>,
    /// The chunk's line references, in order (reference sample only).
    pub(super) lines: Vec<u64>,
    pub(super) instructions: u64,
    pub(super) accesses: u64,
}

/// The sampling filter over one chunk, whose first record is number
/// `start` of the trace: counts each record's instructions and references
/// from its bits (as [`decode`], which [`Shards::handle`] applies to the
/// picked records; a crossing reference's further lines are counted
/// there), hashes the first line of each reference for the line sample
/// and, with `r_t`, its record number for the reference sample.
pub(super) fn filter(recs: &[Record], start: u64, feed: (u32, bool), s: &Sampler) -> Filtered {
    let (shift, ifetch) = feed;
    // Grown as needed: a few percent of the records are picked.
    let mut picks = Vec::with_capacity(1024);
    let keep_lines = s.ref_t.is_some();
    let mut lines = Vec::with_capacity(if keep_lines { recs.len() } else { 0 });
    let mut instructions = 0u64;
    let mut accesses = 0u64;
    let line_mask = (1u64 << shift) - 1;
    for (i, &r) in recs.iter().enumerate() {
        let kind = r.kind_code();
        instructions += r.gap_u64() + u64::from(kind == IFETCH);
        if kind == IFETCH && !ifetch {
            continue;
        }
        let is_escape = kind == ESCAPE;
        let addr = r.addr_unchecked();
        let end = addr.wrapping_add(r.size_unchecked()).wrapping_sub(1);
        let cross = (addr ^ end) > line_mask;
        accesses += u64::from(!is_escape);
        let line = is_escape | cross | (mix64((addr >> shift) ^ s.salt) <= s.t);
        let refs = !is_escape && s.ref_picked(start + i as u64);
        let at = lines.len() as u32;
        if keep_lines && !is_escape {
            lines.push(addr >> shift);
            if cross {
                let d = decode(r, shift, ifetch);
                lines.extend(d.first + 1..=d.last);
            }
        }
        if line | refs {
            let flags = if line { PICK_LINE } else { 0 } | if refs { PICK_REF } else { 0 };
            picks.push((i as u32 | flags, at));
        }
    }
    Filtered {
        picks,
        lines,
        instructions,
        accesses,
    }
}

/// The filter's sampling decisions (a superset of the final ones: the
/// first stage only when sampling in two stages): line hashes at most
/// `t`; record numbers whose hash is at most `ref_t` (none when the
/// reference sample is off).
#[derive(Clone, Copy, Debug)]
pub(super) struct Sampler {
    pub(super) salt: u64,
    pub(super) t: u64,
    pub(super) ref_salt: u64,
    pub(super) ref_t: Option<u64>,
}

impl Sampler {
    #[inline(always)]
    pub(super) fn ref_picked(&self, record: u64) -> bool {
        self.ref_t
            .is_some_and(|t| mix64(record ^ self.ref_salt) <= t)
    }
}

/// A base stage: a number is kept when its hash under `key` is at most
/// `t`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BaseStage {
    pub(crate) key: u64,
    pub(crate) t: u64,
}

impl BaseStage {
    #[inline(always)]
    pub(super) fn keeps(&self, x: u64) -> bool {
        mix64(x ^ self.key) <= self.t
    }
}

/// The reference sample's decision on a record number: it passes the base
/// stage, if any, and its salted hash is at most `t`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RefStage {
    pub(crate) salt: u64,
    pub(crate) t: u64,
    pub(crate) base: Option<BaseStage>,
}

impl RefStage {
    /// Whether the second stage keeps record `record` (the filter has
    /// checked the first).
    #[inline(always)]
    pub(crate) fn second(&self, record: u64) -> bool {
        self.base.is_none() || mix64(record ^ self.salt) <= self.t
    }

    /// The stage the filter applies: the base stage, or the only one.
    pub(super) fn first(&self) -> BaseStage {
        self.base.unwrap_or(BaseStage {
            key: self.salt,
            t: self.t,
        })
    }
}
