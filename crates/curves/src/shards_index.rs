//! The SHARDS sample index: a file next to a trace (`TRACE.cpt.shards`)
//! that holds the trace's *base sample*, so that SHARDS at a rate at or
//! below [`BASE_RATE`] reads about `BASE_RATE` of the trace's line
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
//!   passes the base threshold of [`BASE_REF_RATE`]): each record number
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

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use cachepart_trace::codec::{fnv1a, put_varint};
use cachepart_trace::{Prefetch, Reader};

use crate::error::{CurveError, Result};
use crate::hash::mix64;
use crate::lookback::Reach;
use crate::options::{Options, Totals};
use crate::shards::{
    base_keys, line_key, threshold, RefStage, Sampling, Shards, ShardsConfig, ShardsEstimate,
    StoredReach, BASE_RATE, BASE_REF_RATE, DEFAULT_EXACT_BELOW, MAX_EXACT_BELOW,
};
use crate::until_error::UntilError;

const MAGIC: [u8; 8] = *b"CPSHARDX";
const VERSION: u16 = 1;
const HEADER: usize = 176;
/// Bytes of a trace's trailer (its last bytes).
const TRAILER: usize = 24;
/// Most distinct lines in a base sample (ids are `u32`).
const MAX_LINES: u64 = 1 << 32;
/// zstd level of the sections.
const LEVEL: i32 = 3;

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

/// Reads an LEB128 varint at `*pos` of `b`: `Ok(None)` when `b` ends
/// before it does (more bytes needed), an error when it runs past 10
/// bytes.
#[inline(always)]
fn get_varint(b: &[u8], pos: &mut usize) -> std::result::Result<Option<u64>, String> {
    let mut v = 0u64;
    for i in 0..10 {
        let Some(&x) = b.get(*pos + i) else {
            return Ok(None);
        };
        v |= u64::from(x & 0x7f) << (7 * i);
        if x < 0x80 {
            *pos += i + 1;
            return Ok(Some(v));
        }
    }
    Err(format!("varint at byte {} runs past 10 bytes", *pos))
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
/// ([`ShardsConfig::base_salt`]): it serves only configurations with that
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
    let io = CurveError::io_at(trace);
    let (trace_len, trailer) = trace_identity(trace)?;
    let file = File::open(trace).map_err(io)?;
    let reader = Reader::new(BufReader::with_capacity(1 << 20, file))?;
    // Frames are decoded on another thread while the sample is taken.
    let mut records = UntilError::new(Prefetch::reader(reader)?);
    let recorder = Recorder::new(u64::from(exact_below)).map_err(io)?;
    let mut b = Shards::index_builder(opts, exact_below, base_salt, Box::new(recorder))?;
    b.extend(&mut records);
    records.finish()?;
    let (rec, totals) = b.into_recording();
    let mut rec = rec.ok_or_else(|| CurveError::Sampling("no recorder".into()))?;
    rec.close_run();
    if let Some(e) = rec.error.take() {
        return Err(CurveError::Sampling(format!("{}: {e}", trace.display())));
    }
    let out = index_path(trace);
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

/// A trace file's length and its last [`TRAILER`] bytes (its trailer:
/// index offset, record count and index checksum).
fn trace_identity(trace: &Path) -> Result<(u64, [u8; TRAILER])> {
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
struct Header {
    line_bytes: u32,
    ifetch: bool,
    exact_below: u32,
    base_t: u64,
    base_ref_t: u64,
    base_salt: u64,
    base_ref_salt: u64,
    totals: Totals,
    trace_len: u64,
    trailer: [u8; TRAILER],
    lines: u64,
    runs: u64,
    refs: u64,
    lines_z: u64,
    runs_z: u64,
    refs_z: u64,
    runs_raw: u64,
    refs_raw: u64,
}

impl Header {
    fn encode(&self) -> Vec<u8> {
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
    fn parse(b: &[u8; HEADER]) -> std::result::Result<Header, (u64, String)> {
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

/// An opened sample index: its header and line table in memory, its
/// reference sample compressed in memory; [`ShardsIndex::estimate`]
/// decodes the reference sample and streams the runs from the file.
#[derive(Debug)]
pub struct ShardsIndex {
    path: PathBuf,
    head: Header,
    lines: Vec<u64>,
    refs_z: Vec<u8>,
}

impl ShardsIndex {
    /// Opens and checks the index at `path`: header, section lengths
    /// against the file's, and the line table and reference sample.
    pub fn open(path: &Path) -> Result<ShardsIndex> {
        let err = |offset: u64, reason: String| CurveError::Index {
            path: path.to_path_buf(),
            offset,
            reason,
        };
        let io = CurveError::io_at(path);
        let mut f = File::open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        let mut hb = [0u8; HEADER];
        if len < HEADER as u64 {
            return Err(err(
                len,
                format!("truncated: {len} bytes, header is {HEADER}"),
            ));
        }
        f.read_exact(&mut hb).map_err(io)?;
        let head = Header::parse(&hb).map_err(|(o, r)| err(o, r))?;
        let want = (HEADER as u64)
            .checked_add(head.lines_z)
            .and_then(|x| x.checked_add(head.runs_z))
            .and_then(|x| x.checked_add(head.refs_z));
        if want != Some(len) {
            return Err(err(
                128,
                format!("section lengths do not add up to the file's {len} bytes (truncated or corrupt)"),
            ));
        }
        if head.lines > MAX_LINES {
            return Err(err(104, format!("line count {} out of range", head.lines)));
        }
        let lines_at = HEADER as u64;
        let refs_at = lines_at + head.lines_z + head.runs_z;
        let lines_raw = read_section(&mut f, lines_at, head.lines_z, head.lines * 8)
            .map_err(|r| err(lines_at, format!("line table: {r}")))?;
        let lines = lines_raw
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        f.seek(SeekFrom::Start(refs_at)).map_err(io)?;
        let mut refs_z = Vec::new();
        Read::by_ref(&mut f)
            .take(head.refs_z)
            .read_to_end(&mut refs_z)
            .map_err(io)?;
        Ok(ShardsIndex {
            path: path.to_path_buf(),
            head,
            lines,
            refs_z,
        })
    }

    /// The reference sample's counts by distance (`0..=C` of `stage` and
    /// `c`) and its truncated look-backs, from the stored sample.
    fn ref_counts(&self, stage: RefStage, c: u64) -> Result<(Vec<u64>, u64)> {
        let at = HEADER as u64 + self.head.lines_z + self.head.runs_z;
        let err = |reason: String| CurveError::Index {
            path: self.path.clone(),
            offset: at,
            reason: format!("reference sample: {reason}"),
        };
        let raw = decode_section(&self.refs_z, self.head.refs_raw).map_err(err)?;
        let mut counts = vec![0u64; c as usize + 1];
        let mut truncated = 0u64;
        let (mut pos, mut record, mut n) = (0usize, 0u64, 0u64);
        while pos < raw.len() {
            let entry = |pos: &mut usize| -> std::result::Result<(u64, u64), String> {
                let more =
                    |v: Option<u64>| v.ok_or_else(|| "the last entry is cut short".to_string());
                let delta = more(get_varint(&raw, pos)?)?;
                let code = more(get_varint(&raw, pos)?)?;
                Ok((delta, code))
            };
            let (delta, code) = entry(&mut pos).map_err(err)?;
            record = record
                .checked_add(delta)
                .ok_or_else(|| err(format!("entry {n}: record number overflows")))?;
            n += 1;
            let (value, trunc) = (code >> 1, code & 1 == 1);
            if value > u64::from(self.head.exact_below) {
                return Err(err(format!(
                    "entry {n}: distance {value} above the index's C {}",
                    self.head.exact_below
                )));
            }
            if stage.second(record) {
                let stored = if trunc {
                    StoredReach::Truncated(value)
                } else {
                    StoredReach::Capped(value)
                };
                let (d, t) = stored.distance(c);
                counts[d as usize] += 1;
                truncated += u64::from(t);
            }
        }
        if n != self.head.refs {
            return Err(err(format!("{n} entries, header says {}", self.head.refs)));
        }
        Ok((counts, truncated))
    }

    /// The index file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Line references of the trace.
    pub fn accesses(&self) -> u64 {
        self.head.totals.accesses
    }

    /// Distinct lines in the base sample.
    pub fn sampled_lines(&self) -> u64 {
        self.head.lines
    }

    /// References in the reference sample's base stage.
    pub fn ref_samples(&self) -> u64 {
        self.head.refs
    }

    /// `C` of the stored reference sample: configurations with
    /// `exact_below_lines` up to it are served.
    pub fn exact_below_lines(&self) -> u32 {
        self.head.exact_below
    }

    /// Checks that the index was built from the trace at `trace` as it is
    /// now (same length and trailer).
    pub fn check_trace(&self, trace: &Path) -> Result<()> {
        let (len, trailer) = trace_identity(trace)?;
        if len != self.head.trace_len || trailer != self.head.trailer {
            return Err(CurveError::Index {
                path: self.path.clone(),
                offset: 72,
                reason: format!(
                    "built from another version of {} ({} bytes then, {len} now, or another trailer): \
                     rebuild it with `cachepart trace shards-index {}`",
                    trace.display(),
                    self.head.trace_len,
                    trace.display()
                ),
            });
        }
        Ok(())
    }

    /// Whether the index serves SHARDS with `opts` and `cfg`: `Ok`, or
    /// why not.
    pub fn serves(&self, opts: &Options, cfg: &ShardsConfig) -> std::result::Result<(), String> {
        let h = &self.head;
        if h.base_t != threshold(BASE_RATE) || h.base_ref_t != threshold(BASE_REF_RATE) {
            return Err(
                "the index was built with another base rate (another cachepart version)".into(),
            );
        }
        if (h.base_salt, h.base_ref_salt) != base_keys(cfg.base_salt) {
            return Err(format!(
                "the index was built for another base salt than {}",
                cfg.base_salt
            ));
        }
        if opts.line_bytes != u64::from(h.line_bytes) || opts.include_ifetch != h.ifetch {
            return Err(format!(
                "the index has {}-byte lines{}; asked for {}-byte lines{}",
                h.line_bytes,
                if h.ifetch { " with fetches" } else { "" },
                opts.line_bytes,
                if opts.include_ifetch {
                    " with fetches"
                } else {
                    ""
                }
            ));
        }
        let rate = match cfg.sampling {
            Sampling::FixedRate { rate } => rate,
            Sampling::FixedSize { initial_rate, .. } => initial_rate,
        };
        if rate > BASE_RATE {
            return Err(format!(
                "rate {rate} is above the index's base rate {BASE_RATE}"
            ));
        }
        if cfg.exact_below_lines > 0 {
            if cfg.exact_below_lines > h.exact_below {
                return Err(format!(
                    "exact-below-lines {} is above the index's {}",
                    cfg.exact_below_lines, h.exact_below
                ));
            }
            let ref_rate = rate * cfg.reference_fraction;
            if ref_rate > BASE_REF_RATE {
                return Err(format!(
                    "the reference sample's rate {ref_rate} is above the index's {BASE_REF_RATE}"
                ));
            }
        }
        Ok(())
    }

    /// The SHARDS estimate for `opts` and `cfg` from the index: the same
    /// as [`crate::shards`] over the trace's records.
    pub fn estimate(&self, opts: &Options, cfg: &ShardsConfig) -> Result<ShardsEstimate> {
        self.serves(opts, cfg).map_err(CurveError::NotServed)?;
        let mut b = Shards::new(opts, cfg)?;
        b.set_totals(self.head.totals);
        let stage = b.ref_stage();
        let c = u64::from(cfg.exact_below_lines);
        let refs = stage.map(|st| self.ref_counts(st, c)).transpose();
        let key = line_key(cfg.salt);
        let hashes: Vec<u64> = self.lines.iter().map(|&l| mix64(l ^ key)).collect();
        let runs = self.replay_runs(|id, repeats| {
            let h = *hashes.get(id as usize)?;
            if h <= b.state.t {
                b.state.sampled_ref(u64::from(id), h);
                b.state.repeats(h, repeats);
            }
            Some(())
        });
        runs?;
        if let Some((counts, truncated)) = refs? {
            b.state.add_ref_counts(&counts, truncated);
        }
        Ok(b.finish())
    }

    /// Streams the runs section: `f(id, repeats)` per run, in trace order.
    fn replay_runs(&self, mut f: impl FnMut(u32, u64) -> Option<()>) -> Result<()> {
        let at = HEADER as u64 + self.head.lines_z;
        let err = |reason: String| CurveError::Index {
            path: self.path.clone(),
            offset: at,
            reason: format!("runs: {reason}"),
        };
        let mut file = File::open(&self.path).map_err(|e| err(e.to_string()))?;
        file.seek(SeekFrom::Start(at))
            .map_err(|e| err(e.to_string()))?;
        let mut dec = zstd::stream::read::Decoder::new(file.take(self.head.runs_z))
            .map_err(|e| err(e.to_string()))?;
        let mut buf = vec![0u8; 1 << 16];
        let (mut runs, mut raw, mut carry) = (0u64, 0u64, 0usize);
        loop {
            let n = dec
                .read(&mut buf[carry..])
                .map_err(|e| err(e.to_string()))?;
            let end = n == 0;
            let have = carry + n;
            raw += n as u64;
            let mut pos = 0usize;
            loop {
                let start = pos;
                let v = match get_varint(&buf[..have], &mut pos).map_err(&err)? {
                    Some(v) => v,
                    None => {
                        pos = start;
                        break;
                    }
                };
                let repeats = if v & 1 == 1 {
                    match get_varint(&buf[..have], &mut pos).map_err(&err)? {
                        Some(r) => r,
                        None => {
                            pos = start;
                            break;
                        }
                    }
                } else {
                    0
                };
                runs += 1;
                let id = u32::try_from(v >> 1).ok();
                if id.and_then(|id| f(id, repeats)).is_none() {
                    return Err(err(format!(
                        "run {runs}: line id {} not below the {} lines",
                        v >> 1,
                        self.head.lines
                    )));
                }
            }
            if end {
                if pos != have {
                    return Err(err(format!(
                        "the last run is cut short ({} stray bytes)",
                        have - pos
                    )));
                }
                break;
            }
            buf.copy_within(pos..have, 0);
            carry = have - pos;
            if carry == buf.len() {
                return Err(err("a run longer than the buffer".into()));
            }
        }
        if runs != self.head.runs || raw != self.head.runs_raw {
            return Err(err(format!(
                "{runs} runs in {raw} bytes decoded, header says {} in {}",
                self.head.runs, self.head.runs_raw
            )));
        }
        Ok(())
    }
}

/// Reads and decompresses `len` bytes at `at`, expecting `want` bytes.
fn read_section(
    f: &mut File,
    at: u64,
    len: u64,
    want: u64,
) -> std::result::Result<Vec<u8>, String> {
    f.seek(SeekFrom::Start(at)).map_err(|e| e.to_string())?;
    let mut z = Vec::new();
    Read::by_ref(f)
        .take(len)
        .read_to_end(&mut z)
        .map_err(|e| e.to_string())?;
    decode_section(&z, want)
}

/// Decompresses one section's zstd frame, expecting `want` bytes.
fn decode_section(z: &[u8], want: u64) -> std::result::Result<Vec<u8>, String> {
    // At most `want` bytes are decoded (and allocated, a bounded amount
    // at a time): a corrupt length cannot make it allocate more.
    let mut out = Vec::with_capacity(want.min(1 << 26) as usize);
    let mut dec = zstd::stream::read::Decoder::with_buffer(z).map_err(|e| e.to_string())?;
    Read::by_ref(&mut dec)
        .take(want.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| format!("corrupt: {e}"))?;
    if out.len() as u64 != want {
        return Err(format!("{} bytes decoded, header says {want}", out.len()));
    }
    Ok(out)
}

/// The configuration an index is usually built with: `C` =
/// [`DEFAULT_EXACT_BELOW`].
pub const DEFAULT_INDEX_EXACT_BELOW: u32 = DEFAULT_EXACT_BELOW;
