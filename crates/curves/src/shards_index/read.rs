//! Reading an index: [`ShardsIndex`] opens and checks the file, says which
//! configurations it serves, and replays its base sample through the same
//! estimator as a pass over the trace.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use cachepart_trace::codec::get_varint;

use super::format::{trace_identity, Header, HEADER, MAX_LINES};
use crate::error::{CurveError, Result};
use crate::hash::mix64;
use crate::options::Options;
use crate::shards::{
    base_keys, line_key, threshold, RefStage, Sampling, Shards, ShardsConfig, ShardsEstimate,
    StoredReach, BASE_RATE, BASE_REF_RATE,
};

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
                let delta = more(get_varint(&raw, pos).map_err(|e| e.to_string())?)?;
                let code = more(get_varint(&raw, pos).map_err(|e| e.to_string())?)?;
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
                let v = match get_varint(&buf[..have], &mut pos).map_err(|e| err(e.to_string()))? {
                    Some(v) => v,
                    None => {
                        pos = start;
                        break;
                    }
                };
                let repeats = if v & 1 == 1 {
                    match get_varint(&buf[..have], &mut pos).map_err(|e| err(e.to_string()))? {
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
