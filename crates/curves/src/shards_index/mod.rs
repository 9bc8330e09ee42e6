//! The SHARDS sample index: a file next to a trace (`TRACE.cpt.shards`)
//! that holds the trace's *base sample*, so that SHARDS at a rate at or
//! below [`BASE_RATE`](crate::shards::BASE_RATE) reads about `BASE_RATE` of the trace's line
//! references instead of decoding every record.
//!
//! SHARDS at such rates samples in two stages (see [`crate::shards`]): a
//! line is kept when its hash under a fixed base salt passes the base
//! threshold and its salted hash passes the rate's own. The index stores
//! what the first stage keeps, once, in trace order:
//!
//! * the distinct base-sampled lines (a table, by id);
//! * their references as runs: an id, and how many times in a row it was
//!   referenced with no other base-sampled line in between (a hot line's
//!   repeats are distance-0 hits at any rate, so a run is replayed in one
//!   step);
//! * the reference sample's base stage (records whose record-number hash
//!   passes the base threshold of [`BASE_REF_RATE`](crate::shards::BASE_REF_RATE)): each record number
//!   with its exact stack distance, capped at the index's `C`, from the
//!   same look-back as a pass over the trace;
//! * the trace's reference and instruction counts.
//!
//! [`ShardsIndex::estimate`] replays that through the same estimator as a
//! pass over the trace, so the estimate is the same, bit for bit, for
//! every rate, salt, `C` up to the index's, and reference fraction the
//! index serves ([`ShardsIndex::serves`] says why not otherwise).
//!
//! The file (little-endian): a 176-byte header (magic `CPSHARDX`, version,
//! line size, whether fetches count, `C`, the base thresholds and salts,
//! the counts, the trace's length and its 24-byte trailer, which identify
//! the trace it was built from, the section lengths, compressed and not,
//! and an FNV-1a checksum of the header), then three zstd frames with
//! content checksums: lines (`u64` each); runs (per run the LEB128 varint
//! of `id << 1 | more`, then the repeats as a varint when `more` is 1);
//! references (per entry the varint of the record number's increase since
//! the previous entry, then the varint of `distance << 1 | truncated`).
//!
//! The files: `format` (the header and the trace's identity), `write`
//! (the recorder and [`build_index`]) and `read` ([`ShardsIndex`]: open,
//! check, serve and replay).

mod format;
mod read;
mod write;

pub use read::ShardsIndex;
pub(crate) use write::Recorder;
pub use write::{build_index, build_index_with_base_salt, IndexSummary};

use std::path::{Path, PathBuf};

use crate::shards::DEFAULT_EXACT_BELOW;

/// The extension added to a trace's file name for its index.
pub const INDEX_EXTENSION: &str = "shards";

/// The index path of the trace at `trace`: the trace's name with
/// `.shards` appended.
pub fn index_path(trace: &Path) -> PathBuf {
    let mut s = trace.as_os_str().to_owned();
    s.push(".");
    s.push(INDEX_EXTENSION);
    PathBuf::from(s)
}

/// The configuration an index is usually built with: `C` =
/// [`DEFAULT_EXACT_BELOW`].
pub const DEFAULT_INDEX_EXACT_BELOW: u32 = DEFAULT_EXACT_BELOW;
