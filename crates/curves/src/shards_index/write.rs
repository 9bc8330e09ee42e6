//! Writing an index: the [`Recorder`] that collects a trace's base sample
//! while [`crate::Shards`] reads it, and [`build_index`], which compresses
//! the sections and writes the file.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};

use cachepart_trace::codec::put_varint;
use cachepart_trace::{Prefetch, Reader};

use super::format::{trace_identity, Header, HEADER, LEVEL, MAX_LINES};
use super::index_path;
use crate::error::{CurveError, Result};
use crate::lookback::Reach;
use crate::options::Options;
use crate::shards::{
    base_keys, threshold, Shards, StoredReach, BASE_RATE, BASE_REF_RATE, MAX_EXACT_BELOW,
};
use crate::until_error::UntilError;

/// Collects the base sample while a trace is read (the sink of
/// [`Shards::index_builder`]).
pub(crate) struct Recorder {
    ids: HashMap<u64, u32>,
    lines: Vec<u64>,
    /// The open run: id and references so far (0: none).
    run: (u32, u64),
    runs: Section,
    run_count: u64,
    runs_raw: u64,
    refs: Section,
    ref_count: u64,
    refs_raw: u64,
    /// Record number of the last reference-sample entry.
    last_record: u64,
    line_refs: u64,
    cap: u64,
    error: Option<String>,
}

/// A section's zstd encoder, fed through a buffer.
struct Section {
    buf: Vec<u8>,
    enc: zstd::stream::write::Encoder<'static, Vec<u8>>,
}

impl Section {
    fn new() -> std::io::Result<Self> {
        let mut enc = zstd::stream::write::Encoder::new(Vec::new(), LEVEL)?;
        enc.include_checksum(true)?;
        Ok(Section {
            buf: Vec::with_capacity(1 << 16),
            enc,
        })
    }

    #[inline]
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.buf.extend_from_slice(bytes);
        self.spill()
    }

    /// Appends varints of `values`; the bytes appended.
    #[inline]
    fn put_varints(&mut self, values: &[u64]) -> std::io::Result<u64> {
        let before = self.buf.len();
        for &v in values {
            put_varint(&mut self.buf, v);
        }
        let n = (self.buf.len() - before) as u64;
        self.spill()?;
        Ok(n)
    }

    /// Compresses the buffer once it holds 64 KiB.
    fn spill(&mut self) -> std::io::Result<()> {
        if self.buf.len() >= 1 << 16 {
            self.enc.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    fn finish(mut self) -> std::io::Result<Vec<u8>> {
        self.enc.write_all(&self.buf)?;
        self.enc.finish()
    }
}

impl Recorder {
    fn new(cap: u64) -> std::io::Result<Self> {
        Ok(Recorder {
            ids: HashMap::new(),
            lines: Vec::new(),
            run: (0, 0),
            runs: Section::new()?,
            run_count: 0,
            runs_raw: 0,
            refs: Section::new()?,
            ref_count: 0,
            refs_raw: 0,
            last_record: 0,
            line_refs: 0,
            cap,
            error: None,
        })
    }

    fn fail(&mut self, e: String) {
        self.error.get_or_insert(e);
    }

    /// A reference to a base-sampled line.
    pub(crate) fn line(&mut self, line: u64) {
        self.line_refs += 1;
        let next = self.lines.len();
        let id = *self.ids.entry(line).or_insert(next as u32);
        if id as usize == next {
            if next as u64 >= MAX_LINES {
                self.fail(format!("more than {MAX_LINES} base-sampled lines"));
            }
            self.lines.push(line);
        }
        if self.run.1 > 0 && self.run.0 == id {
            self.run.1 += 1;
        } else {
            self.close_run();
            self.run = (id, 1);
        }
    }

    fn close_run(&mut self) {
        let (id, n) = self.run;
        if n == 0 {
            return;
        }
        let head = (u64::from(id) << 1) | u64::from(n > 1);
        let r = if n > 1 {
            self.runs.put_varints(&[head, n - 1])
        } else {
            self.runs.put_varints(&[head])
        };
        self.run_count += 1;
        match r {
            Ok(len) => self.runs_raw += len,
            Err(e) => self.fail(e.to_string()),
        }
        self.run = (0, 0);
    }

    /// A reference of the reference sample's base stage (record numbers
    /// come in order).
    pub(crate) fn reference(&mut self, record: u64, reach: Reach) {
        let code = match StoredReach::from(reach) {
            StoredReach::Capped(d) => d.min(self.cap) << 1,
            StoredReach::Truncated(seen) => (seen.min(self.cap) << 1) | 1,
        };
        let r = self.refs.put_varints(&[record - self.last_record, code]);
        self.last_record = record;
        self.ref_count += 1;
        match r {
            Ok(len) => self.refs_raw += len,
            Err(e) => self.fail(e.to_string()),
        }
    }
}

/// What [`build_index`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexSummary {
    /// The index file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Line references of the trace.
    pub accesses: u64,
    /// References in the base sample.
    pub sampled_refs: u64,
    /// Distinct lines in the base sample.
    pub sampled_lines: u64,
    /// References in the reference sample's base stage.
    pub ref_samples: u64,
}

/// Builds the sample index of the trace at `trace` (lines and fetches as
/// `opts` says; reference-sample distances capped at `exact_below` lines,
/// 0 for none) and writes it to [`index_path`]`(trace)`, through a
/// temporary file renamed at the end: an error leaves no index behind.
pub fn build_index(trace: &Path, opts: &Options, exact_below: u32) -> Result<IndexSummary> {
    build_index_with_base_salt(trace, opts, exact_below, 0)
}

/// [`build_index`] for another base salt
/// ([`ShardsConfig::base_salt`](crate::shards::ShardsConfig::base_salt)): it serves only configurations with that
/// base salt.
pub fn build_index_with_base_salt(
    trace: &Path,
    opts: &Options,
    exact_below: u32,
    base_salt: u64,
) -> Result<IndexSummary> {
    if exact_below > MAX_EXACT_BELOW {
        return Err(CurveError::Sampling(format!(
            "exact-below-lines {exact_below}: expected at most {MAX_EXACT_BELOW}"
        )));
    }
    // Where the index goes must be free for a file: a directory (or a
    // device) there is refused before the trace is read, not at the rename
    let out = index_path(trace);
    if let Ok(m) = std::fs::metadata(&out) {
        if !m.is_file() {
            return Err(CurveError::io_at(&out)(std::io::Error::other(
                "not a regular file: expected the trace's index there, or nothing",
            )));
        }
    }
    let io = CurveError::io_at(trace);
    let named = CurveError::in_trace(trace);
    // `-` is refused by name: the index is built from a file and goes
    // beside it
    let file = cachepart_trace::open_seekable(trace).map_err(io)?;
    let (trace_len, trailer) = trace_identity(trace)?;
    let reader =
        Reader::new(BufReader::with_capacity(1 << 20, file)).map_err(|e| named(e.into()))?;
    // Frames are decoded on another thread while the sample is taken.
    let mut records = UntilError::new(Prefetch::reader(reader).map_err(|e| named(e.into()))?);
    let recorder = Recorder::new(u64::from(exact_below)).map_err(io)?;
    let mut b = Shards::index_builder(opts, exact_below, base_salt, Box::new(recorder))?;
    b.extend(&mut records);
    records.finish().map_err(|e| named(e.into()))?;
    let (rec, totals) = b.into_recording();
    let mut rec = rec.ok_or_else(|| CurveError::Sampling("no recorder".into()))?;
    rec.close_run();
    if let Some(e) = rec.error.take() {
        return Err(CurveError::Sampling(format!("{}: {e}", trace.display())));
    }
    let oio = CurveError::io_at(&out);
    let mut lines = Vec::with_capacity(rec.lines.len() * 8);
    for l in &rec.lines {
        lines.extend_from_slice(&l.to_le_bytes());
    }
    let lines_z = {
        let mut s = Section::new().map_err(oio)?;
        s.put(&lines).map_err(oio)?;
        s.finish().map_err(oio)?
    };
    let runs_z = rec.runs.finish().map_err(oio)?;
    let refs_z = rec.refs.finish().map_err(oio)?;
    let head = Header {
        line_bytes: opts.line_bytes as u32,
        ifetch: opts.include_ifetch,
        exact_below,
        base_t: threshold(BASE_RATE),
        base_ref_t: threshold(BASE_REF_RATE),
        base_salt: base_keys(base_salt).0,
        base_ref_salt: base_keys(base_salt).1,
        totals,
        trace_len,
        trailer,
        lines: rec.lines.len() as u64,
        runs: rec.run_count,
        refs: rec.ref_count,
        lines_z: lines_z.len() as u64,
        runs_z: runs_z.len() as u64,
        refs_z: refs_z.len() as u64,
        runs_raw: rec.runs_raw,
        refs_raw: rec.refs_raw,
    };
    let tmp = PathBuf::from(format!("{}.tmp-{}", out.display(), std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::io::BufWriter::new(File::create(&tmp)?);
        f.write_all(&head.encode())?;
        f.write_all(&lines_z)?;
        f.write_all(&runs_z)?;
        f.write_all(&refs_z)?;
        f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, &out)
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_file(&tmp);
        return Err(oio(e));
    }
    Ok(IndexSummary {
        bytes: (HEADER + lines_z.len() + runs_z.len() + refs_z.len()) as u64,
        path: out,
        accesses: totals.accesses,
        sampled_refs: rec.line_refs,
        sampled_lines: rec.lines.len() as u64,
        ref_samples: rec.ref_count,
    })
}
