//! SHARDS: approximate LRU curves from a spatially hashed sample of lines
//! (Waldspurger, Park, Garthwaite and Ahmad, "Efficient MRC Construction
//! with SHARDS", FAST 2015).
//!
//! A line is sampled when the hash of its number ([`mix64`], salted) is
//! below a threshold `T`; the rate is `R = T / 2^64`. All references to a
//! sampled line are kept and fed to an exact [`LruStack`], so a sampled
//! reference sees `d_s` distinct *sampled* lines since its line's previous
//! reference, about `R` times the true distance `d`; it is counted at the
//! estimated distance `d_s / R`, with weight `1 / R` references.
//!
//! * **Fixed rate** ([`Sampling::FixedRate`]): `T` is fixed. The memory is
//!   about `R` times the footprint.
//! * **Fixed size** ([`Sampling::FixedSize`]): at most `max_lines` sampled
//!   lines are tracked. Sampling starts at `initial_rate`; when a new line
//!   would exceed the bound, the tracked line with the largest hash is
//!   dropped and `T` is lowered to its hash, so later references sample at
//!   the lower rate. Each reference is weighted by `1 / R` at the rate in
//!   force when it is seen, which is the paper's rescaling of earlier
//!   counts by `R_new / R_old` expressed in reference units.
//! * **Adjustment** ([`ShardsConfig::adjust`], the paper's `SHARDS_adj`):
//!   the number of sampled references deviates from its expectation `R N`
//!   when a hot line happens to be sampled or not; the paper adds the
//!   difference to the distance-0 bucket. As distance 0 never misses, this
//!   amounts to dividing the estimated misses by the true reference count
//!   `N` rather than by the sampled weight; that is what `adjust` does
//!   (for fixed size, too).
//!
//! * **Reference sample** ([`ShardsConfig::exact_below_lines`] `= C`,
//!   256 by default for fixed rate): the line sample resolves sizes below
//!   about `1 / R` lines only to whether a sampled line was re-referenced
//!   with no other sampled line in between, and its level swings with
//!   whether the hottest lines are sampled. So the sizes of at most `C`
//!   lines come from a sample of *references* (data records whose record
//!   number hashes below a threshold, at [`ShardsConfig::reference_fraction`]
//!   times the line rate, whatever their address): each
//!   one's exact distance below `C` is found by looking back over the last
//!   [`WINDOW`] line references ([`LookBack`]), and
//!   `misses(n) = N * (sampled references at distance n or more) / k` for
//!   `n <= C`, a binomial estimate with standard error at most
//!   `0.5 / sqrt(k)`, `k` the references sampled. Above `C` the line sample's estimate `S` gives the
//!   shape, scaled to agree at `C`: `misses(n) = misses(C) S(n) / S(C)`.
//!
//! * **Two stages** (rates at or below [`BASE_RATE`]): a line is sampled
//!   when its hash under a fixed base salt is below the base threshold
//!   (rate [`BASE_RATE`]) *and* its salted hash is below a second
//!   threshold (rate `R / BASE_RATE`). Both hashes are independent, so
//!   this is a uniform sample of rate `R` like the one-stage one; but the
//!   first stage does not depend on `R` or the salt, so a
//!   [`crate::ShardsIndex`] that stores a trace's base sample once serves
//!   every such rate and salt and gives the same estimate as a pass over
//!   the trace, bit for bit. The reference sample is drawn the same way
//!   below [`BASE_REF_RATE`].
//!
//! Error: above `C` the line sample's variance comes from which lines are
//! sampled, so it falls roughly as `1 / (R * footprint)`, or is dominated
//! by the hottest lines. `docs/curves.md` has the measured mean absolute
//! errors.

use std::collections::{BinaryHeap, VecDeque};

use cachepart_trace::Record;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::curve::{check_sizes, Curve};
use crate::error::{CurveError, Result};
use crate::hash::mix64;
use crate::lookback::{LookBack, Reach, WINDOW};
use crate::options::{Options, Totals};
use crate::raw::decode;
use crate::stack::LruStack;

/// How lines are sampled.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Sampling {
    /// A fixed sampling rate in `(0, 1]`.
    #[serde(rename_all = "kebab-case")]
    FixedRate {
        /// Fraction of lines sampled.
        rate: f64,
    },
    /// At most `max_lines` tracked lines, lowering the rate as needed.
    #[serde(rename_all = "kebab-case")]
    FixedSize {
        /// Largest number of sampled lines tracked at once.
        max_lines: usize,
        /// Rate at the start, in `(0, 1]`.
        initial_rate: f64,
    },
}

/// SHARDS parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ShardsConfig {
    /// Fixed rate or fixed size.
    pub sampling: Sampling,
    /// Divide by the true reference count (`SHARDS_adj`); on by default.
    pub adjust: bool,
    /// Salt of the line hash: the line number is xor-ed with
    /// `mix64(salt)` before hashing, so every salt, 0, 1, 2..., samples
    /// an unrelated set of lines (0 by default). With two stages it picks
    /// the second stage's sample within the base sample.
    pub salt: u64,
    /// Salt of the base stage (rates at or below [`BASE_RATE`]): another
    /// base salt draws another base sample. A sample index serves only its
    /// own base salt; 0 by default.
    #[serde(default)]
    pub base_salt: u64,
    /// `C`: the misses of caches of at most `C` lines come from a
    /// sample of *references* (not lines), whose exact distances below `C`
    /// are found by looking back over the recent line references; the
    /// line sample gives the curve's shape above `C`
    /// ([`DEFAULT_EXACT_BELOW`] lines for fixed rate; 0, plain SHARDS, the
    /// default for fixed size).
    #[serde(default = "default_exact_below")]
    pub exact_below_lines: u32,
    /// The reference sample's rate as a fraction of the line sample's
    /// (initial) rate, in `(0, 1]` ([`DEFAULT_REFERENCE_FRACTION`] by
    /// default). At line rate 1 there is no reference sample: the line
    /// sample is exact.
    #[serde(default = "default_reference_fraction")]
    pub reference_fraction: f64,
}

/// The default [`ShardsConfig::reference_fraction`]: a tenth, so that at
/// `R = 0.01` one reference in a thousand is looked back for.
pub const DEFAULT_REFERENCE_FRACTION: f64 = 0.1;

fn default_reference_fraction() -> f64 {
    DEFAULT_REFERENCE_FRACTION
}

/// The default [`ShardsConfig::exact_below_lines`] of fixed-rate sampling:
/// 256 lines (16 KiB of 64-byte lines), above SHARDS' resolution of
/// `1 / R` lines at `R = 0.01`.
pub const DEFAULT_EXACT_BELOW: u32 = 256;

/// Largest [`ShardsConfig::exact_below_lines`].
pub const MAX_EXACT_BELOW: u32 = 1 << 16;

/// The base sample's line rate: fixed-rate sampling at or below it (or
/// fixed-size sampling from an initial rate at or below it) samples lines
/// in two stages, the first of which a [`crate::ShardsIndex`] stores.
pub const BASE_RATE: f64 = 1.0 / 32.0;

/// The base sample's reference-sample rate: reference samples at rates
/// (line rate times [`ShardsConfig::reference_fraction`]) at or below it
/// are drawn in two stages.
pub const BASE_REF_RATE: f64 = BASE_RATE / 10.0;

/// Tag of the base stage's line hash.
const BASE_SALT: u64 = 0x4241_5345_4c49_4e45;
/// Tag of the base stage's record hash.
const BASE_REF_SALT: u64 = 0x4241_5345_5245_4653;

/// The key xor-ed into line numbers for a (second-stage) salt.
pub(crate) fn line_key(salt: u64) -> u64 {
    mix64(salt)
}

/// The base stage's keys (lines, records) for a base salt.
pub(crate) fn base_keys(base_salt: u64) -> (u64, u64) {
    (
        mix64(base_salt ^ BASE_SALT),
        mix64(base_salt ^ BASE_REF_SALT),
    )
}

fn default_exact_below() -> u32 {
    DEFAULT_EXACT_BELOW
}

impl ShardsConfig {
    /// Fixed-rate sampling at `rate`, adjusted, salt 0.
    pub fn fixed_rate(rate: f64) -> Self {
        ShardsConfig {
            sampling: Sampling::FixedRate { rate },
            adjust: true,
            salt: 0,
            base_salt: 0,
            exact_below_lines: DEFAULT_EXACT_BELOW,
            reference_fraction: DEFAULT_REFERENCE_FRACTION,
        }
    }

    /// Fixed-size sampling of at most `max_lines` lines from rate 1,
    /// adjusted, salt 0, plain (no reference sample: at its initial rate
    /// of 1 it would look back for every reference).
    pub fn fixed_size(max_lines: usize) -> Self {
        ShardsConfig {
            sampling: Sampling::FixedSize {
                max_lines,
                initial_rate: 1.0,
            },
            adjust: true,
            salt: 0,
            base_salt: 0,
            exact_below_lines: 0,
            reference_fraction: DEFAULT_REFERENCE_FRACTION,
        }
    }

    /// The same configuration with another salt.
    pub fn with_salt(mut self, salt: u64) -> Self {
        self.salt = salt;
        self
    }

    /// The same configuration with another base salt.
    pub fn with_base_salt(mut self, base_salt: u64) -> Self {
        self.base_salt = base_salt;
        self
    }

    /// The same configuration with another reference-sample fraction.
    pub fn with_reference_fraction(mut self, fraction: f64) -> Self {
        self.reference_fraction = fraction;
        self
    }

    /// The same configuration with exact distances below `lines` lines
    /// (0: plain SHARDS).
    pub fn with_exact_below(mut self, lines: u32) -> Self {
        self.exact_below_lines = lines;
        self
    }

    /// The same configuration with the adjustment on or off.
    pub fn with_adjust(mut self, yes: bool) -> Self {
        self.adjust = yes;
        self
    }

    fn check(&self) -> Result<()> {
        let (rate, max) = match self.sampling {
            Sampling::FixedRate { rate } => (rate, usize::MAX),
            Sampling::FixedSize {
                max_lines,
                initial_rate,
            } => (initial_rate, max_lines),
        };
        if !(rate > 0.0 && rate <= 1.0) {
            return Err(CurveError::Sampling(format!(
                "rate {rate}: expected 0 < rate <= 1"
            )));
        }
        if max == 0 {
            return Err(CurveError::Sampling("max-lines must be positive".into()));
        }
        let f = self.reference_fraction;
        if !(f > 0.0 && f <= 1.0) {
            return Err(CurveError::Sampling(format!(
                "reference-fraction {f}: expected 0 < fraction <= 1"
            )));
        }
        if self.exact_below_lines > MAX_EXACT_BELOW {
            return Err(CurveError::Sampling(format!(
                "exact-below-lines {}: expected at most {MAX_EXACT_BELOW}",
                self.exact_below_lines
            )));
        }
        Ok(())
    }
}

/// The largest hash sampled at `rate`.
pub(crate) fn threshold(rate: f64) -> u64 {
    if rate >= 1.0 {
        u64::MAX
    } else {
        ((rate * 2f64.powi(64)) as u64).saturating_sub(1)
    }
}

/// The rate of a threshold (hashes `0..=t` are sampled).
pub(crate) fn rate_of(t: u64) -> f64 {
    (t as f64 + 1.0) / 2f64.powi(64)
}

/// A SHARDS estimate of the stack-distance histogram.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardsEstimate {
    /// Line size in bytes.
    pub line_bytes: u64,
    /// `weights[d]`: estimated references at distance `d` lines.
    pub weights: Vec<f64>,
    /// Estimated first references.
    pub cold: f64,
    /// Sampled references.
    pub sampled_refs: u64,
    /// Sampled lines tracked at the end.
    pub sampled_lines: u64,
    /// Rate at the end.
    pub final_rate: f64,
    /// Line references of the trace (all of them, counted exactly).
    pub accesses: u64,
    /// Instructions of the trace.
    pub instructions: u64,
    /// Whether misses are scaled to the true reference count.
    pub adjust: bool,
    /// `C`, [`ShardsConfig::exact_below_lines`].
    pub exact_below_lines: u64,
    /// `ref_counts[j]`: references of the reference sample at distance
    /// `j < C`; `ref_counts[C]`: those at `C` or more, or first references
    /// (empty when `C` is 0).
    pub ref_counts: Vec<u64>,
    /// Look-backs that went [`crate::LOOKBACK_WINDOW`] records back
    /// without finding the previous use or `C` distinct lines (counted at
    /// distance `C` or more: exact for a first reference, an overestimate
    /// for a reuse of a line untouched that long while fewer than `C`
    /// lines were).
    pub truncated_lookbacks: u64,
}

impl ShardsEstimate {
    /// Estimated references by the sample: the sum of the weights.
    pub fn sampled_weight(&self) -> f64 {
        self.cold + self.weights.iter().sum::<f64>()
    }

    fn scale(&self) -> f64 {
        let w = self.sampled_weight();
        if self.adjust || w == 0.0 {
            1.0
        } else {
            self.accesses as f64 / w
        }
    }

    /// References of the reference sample.
    pub fn ref_samples(&self) -> u64 {
        self.ref_counts.iter().sum()
    }

    /// Line-sample estimate of the misses at `lines`, unscaled.
    fn line_misses(&self, suffix: &[f64], lines: u64) -> f64 {
        let n = usize::try_from(lines).unwrap_or(usize::MAX);
        self.cold + suffix.get(n).copied().unwrap_or(0.0)
    }

    /// Suffix sums of the weights.
    fn suffix(&self) -> Vec<f64> {
        let mut suffix = vec![0.0; self.weights.len() + 1];
        for d in (0..self.weights.len()).rev() {
            suffix[d] = suffix[d + 1] + self.weights[d];
        }
        suffix
    }

    /// Estimated misses at `lines`, from the suffix sums.
    fn misses_with(&self, suffix: &[f64], ref_suffix: &[u64], lines: u64) -> f64 {
        let c = self.exact_below_lines;
        let k = ref_suffix.first().copied().unwrap_or(0);
        if c == 0 || k == 0 {
            return self.line_misses(suffix, lines) * self.scale();
        }
        let n = self.accesses as f64;
        // The reference sample's fraction of references at distance
        // `lines` or more (below `C`), or `C` or more.
        let at = |j: u64| n * ref_suffix[j.min(c) as usize] as f64 / k as f64;
        if lines <= c {
            return at(lines);
        }
        // Above `C`: the line sample's shape, scaled to agree at `C`.
        let base = self.line_misses(suffix, c);
        if base > 0.0 {
            at(c) * self.line_misses(suffix, lines) / base
        } else {
            0.0
        }
    }

    fn ref_suffix(&self) -> Vec<u64> {
        let mut out = vec![0; self.ref_counts.len() + 1];
        for j in (0..self.ref_counts.len()).rev() {
            out[j] = out[j + 1] + self.ref_counts[j];
        }
        out
    }

    /// Estimated misses of a fully associative LRU cache of `lines` lines.
    pub fn misses_at_lines(&self, lines: u64) -> f64 {
        self.misses_with(&self.suffix(), &self.ref_suffix(), lines)
    }

    /// The estimated curve at `sizes_bytes` (strictly increasing), misses
    /// rounded and capped at the reference count.
    pub fn curve(&self, sizes_bytes: &[u64]) -> Result<Curve> {
        check_sizes(sizes_bytes)?;
        let suffix = self.suffix();
        let ref_suffix = self.ref_suffix();
        let misses = sizes_bytes
            .iter()
            .map(|&s| {
                let m = self.misses_with(&suffix, &ref_suffix, s / self.line_bytes);
                (m.round() as u64).min(self.accesses)
            })
            .collect();
        Ok(Curve {
            sizes_bytes: sizes_bytes.to_vec(),
            misses,
            accesses: self.accesses,
            instructions: self.instructions,
        })
    }
}

/// Records processed at once by the sampling filter.
const CHUNK: usize = 1 << 16;

/// Chunks filtered in parallel at once by [`Shards::extend_from_slice`].
const BATCH: usize = 16;

/// Pick flag: the record is an escape, crosses a line boundary or its
/// first line may be sampled.
const PICK_LINE: u32 = 1 << 31;
/// Pick flag: the record is in the reference sample.
const PICK_REF: u32 = 1 << 30;

/// What the filter found in a chunk.
struct Filtered {
    /// Positions of the records that matter, with `PICK_*` flags, and the
    /// index in `lines` of their first line.
    picks: Vec<(u32, u32)>,
    /// The chunk's line references, in order (reference sample only).
    lines: Vec<u64>,
    instructions: u64,
    accesses: u64,
}

/// The sampling filter over one chunk, whose first record is number
/// `start` of the trace: counts each record's instructions and references
/// from its bits (as [`decode`], which [`Shards::handle`] applies to the
/// picked records; a crossing reference's further lines are counted
/// there), hashes the first line of each reference for the line sample
/// and, with `r_t`, its record number for the reference sample.
fn filter(recs: &[Record], start: u64, feed: (u32, bool), s: &Sampler) -> Filtered {
    let (shift, ifetch) = feed;
    // Grown as needed: a few percent of the records are picked.
    let mut picks = Vec::with_capacity(1024);
    let keep_lines = s.ref_t.is_some();
    let mut lines = Vec::with_capacity(if keep_lines { recs.len() } else { 0 });
    let mut instructions = 0u64;
    let mut accesses = 0u64;
    let line_mask = (1u64 << shift) - 1;
    for (i, &r) in recs.iter().enumerate() {
        let x = r.raw();
        let kind = (x >> 48) & 7;
        instructions += (x >> 58) + u64::from(kind == 2);
        if kind == 2 && !ifetch {
            continue;
        }
        let is_escape = kind == 4;
        let addr = ((x << 16) as i64 >> 16) as u64;
        let end = addr.wrapping_add((x >> 51) & 0x7f).wrapping_sub(1);
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
struct Sampler {
    salt: u64,
    t: u64,
    ref_salt: u64,
    ref_t: Option<u64>,
}

impl Sampler {
    #[inline(always)]
    fn ref_picked(&self, record: u64) -> bool {
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
    fn keeps(&self, x: u64) -> bool {
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
    fn first(&self) -> BaseStage {
        self.base.unwrap_or(BaseStage {
            key: self.salt,
            t: self.t,
        })
    }
}

/// What the sampled references go to.
pub(crate) enum Sink {
    /// The estimate (the normal case).
    Estimate,
    /// A sample index being built.
    Index(Box<crate::shards_index::Recorder>),
}

/// Builds a [`ShardsEstimate`] record by record.
///
/// Records are buffered and filtered a chunk at a time: one pass decodes
/// each record's bits, hashes its first line (and its record number for
/// the reference sample) and notes the few that matter (sampled, crossing
/// a line boundary, or escapes); only those are then handled one by one.
/// The last [`WINDOW`] line references are kept for the look-back.
pub struct Shards {
    line_bytes: u64,
    adjust: bool,
    shift: u32,
    ifetch: bool,
    totals: Totals,
    /// The chunk being filled.
    buf: Vec<Record>,
    /// The last [`WINDOW`] line references handled (reference sample).
    ring: VecDeque<u64>,
    /// Records handled before `buf`.
    seen: u64,
    /// The reference sample (`None`: off).
    refs: Option<RefStage>,
    pub(crate) state: State,
}

pub(crate) struct State {
    /// Key of the (second-stage) line hash.
    salt: u64,
    /// Largest sampled hash (of the second stage with a base stage).
    pub(crate) t: u64,
    /// The base stage of the lines (`None`: one stage).
    base: Option<BaseStage>,
    /// `1 / R` for the current threshold.
    inv_rate: f64,
    max_lines: usize,
    stack: LruStack,
    /// Tracked lines by hash, largest first (fixed size only).
    heap: BinaryHeap<(u64, u64)>,
    /// Fixed size: `weights[d]`, references weighted at the rate of their
    /// time.
    weights: Vec<f64>,
    cold: f64,
    /// Fixed rate: references by *sampled* distance, and first
    /// references (weighted by `1 / R` at the end, so that a sample index
    /// can add runs of repeats at once).
    by_sampled: Vec<u64>,
    cold_refs: u64,
    sampled: u64,
    /// `C` (0: no reference sample).
    exact_below: u64,
    lookback: LookBack,
    ref_counts: Vec<u64>,
    truncated: u64,
    sink: Sink,
}

impl State {
    /// The sampling rate of the current thresholds.
    fn rate(&self) -> f64 {
        self.base.map_or(1.0, |b| rate_of(b.t)) * rate_of(self.t)
    }

    /// Whether `line` passes the base stage (always with one stage).
    #[inline(always)]
    fn base_passes(&self, line: u64) -> bool {
        self.base.is_none_or(|b| b.keeps(line))
    }

    /// A reference to `line` of the line sample (hash `h`).
    #[inline(never)]
    pub(crate) fn sampled_ref(&mut self, line: u64, h: u64) {
        if let Sink::Index(rec) = &mut self.sink {
            rec.line(line);
            return;
        }
        self.sampled += 1;
        let fixed_rate = self.max_lines == usize::MAX;
        match self.stack.access(line) {
            Some(ds) if fixed_rate => {
                let ds = ds as usize;
                if ds >= self.by_sampled.len() {
                    self.by_sampled
                        .resize((ds + 1).max(2 * self.by_sampled.len()), 0);
                }
                self.by_sampled[ds] += 1;
            }
            Some(ds) => {
                let d = (ds as f64 * self.inv_rate) as usize;
                if d >= self.weights.len() {
                    self.weights
                        .resize((d + 1).max(2 * self.weights.len()), 0.0);
                }
                self.weights[d] += self.inv_rate;
            }
            None if fixed_rate => self.cold_refs += 1,
            None => {
                self.cold += self.inv_rate;
                self.heap.push((h, line));
                if self.stack.len() > self.max_lines {
                    if let Some((top, evicted)) = self.heap.pop() {
                        self.stack.remove(evicted);
                        self.t = top.saturating_sub(1);
                        self.inv_rate = 1.0 / self.rate();
                    }
                }
            }
        }
    }

    /// `count - 1` more references to the line just referenced, with no
    /// other sampled line in between (distance 0): a sample index's run.
    pub(crate) fn repeats(&mut self, h: u64, count: u64) {
        if count == 0 || h > self.t {
            // Sampled out (fixed size: evicted by its own first reference).
            return;
        }
        self.sampled += count;
        if self.max_lines == usize::MAX {
            // `by_sampled` starts with 1024 buckets and only grows.
            self.by_sampled[0] += count;
        } else {
            for _ in 0..count {
                self.weights[0] += self.inv_rate;
            }
        }
    }

    /// A reference to `line` of the reference sample, record number
    /// `record`, after the line references `before` (in pieces, oldest
    /// first).
    #[inline(never)]
    fn ref_sample(&mut self, line: u64, record: u64, before: [&[u64]; 3]) {
        let reach = self.lookback.distance(line, before);
        if let Sink::Index(rec) = &mut self.sink {
            rec.reference(record, reach);
            return;
        }
        let (d, truncated) = StoredReach::from(reach).distance(self.exact_below);
        self.truncated += u64::from(truncated);
        self.ref_counts[d as usize] += 1;
    }

    /// Adds reference-sample counts by distance (`0..=C`) and truncated
    /// look-backs counted elsewhere (a sample index's).
    pub(crate) fn add_ref_counts(&mut self, counts: &[u64], truncated: u64) {
        for (a, b) in self.ref_counts.iter_mut().zip(counts) {
            *a += b;
        }
        self.truncated += truncated;
    }
}

/// A reference-sample distance as the estimate and a sample index use it:
/// what a look-back learnt, less whether a cap was reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StoredReach {
    /// The distance, or at least this when the walk's cap was reached
    /// (the index stores it capped at its `C`).
    Capped(u64),
    /// The look-back reached the window's start after this many distinct
    /// lines (fewer than the walk's cap).
    Truncated(u64),
}

impl From<Reach> for StoredReach {
    fn from(r: Reach) -> Self {
        match r {
            Reach::Exact(d) | Reach::AtLeast(d) => StoredReach::Capped(d),
            Reach::Truncated(seen) => StoredReach::Truncated(seen),
        }
    }
}

impl StoredReach {
    /// The distance bucket (`0..=c`) for a `C` of `c` (at most the
    /// index's), and whether a pass with that `C` would have counted a
    /// truncated look-back.
    pub(crate) fn distance(self, c: u64) -> (u64, bool) {
        match self {
            StoredReach::Capped(d) => (d.min(c), false),
            // A walk that stopped at `C` distinct lines would not have
            // been truncated.
            StoredReach::Truncated(seen) => (c, seen < c),
        }
    }
}

impl Shards {
    /// A builder for `opts` and `cfg` (both checked).
    pub fn new(opts: &Options, cfg: &ShardsConfig) -> Result<Self> {
        Shards::with_sink(opts, cfg, Sink::Estimate)
    }

    /// A builder whose sampled references go to `sink`.
    pub(crate) fn with_sink(opts: &Options, cfg: &ShardsConfig, sink: Sink) -> Result<Self> {
        opts.check()?;
        cfg.check()?;
        let (rate, max_lines) = match cfg.sampling {
            Sampling::FixedRate { rate } => (rate, usize::MAX),
            Sampling::FixedSize {
                max_lines,
                initial_rate,
            } => (initial_rate, max_lines),
        };
        let based = rate <= BASE_RATE;
        let (base_key, base_ref_key) = base_keys(cfg.base_salt);
        let base = based.then(|| BaseStage {
            key: base_key,
            t: threshold(BASE_RATE),
        });
        let t = threshold(if based { rate / BASE_RATE } else { rate });
        let exact_below = u64::from(cfg.exact_below_lines);
        let ref_rate = rate * cfg.reference_fraction;
        let refs = (exact_below > 0 && threshold(rate) < u64::MAX).then(|| {
            // Another salt than the lines': the reference sample is
            // independent of the line sample.
            let salt = mix64(cfg.salt ^ 0x5245_4653_414d_504c);
            if ref_rate <= BASE_REF_RATE {
                RefStage {
                    salt,
                    t: threshold(ref_rate / BASE_REF_RATE),
                    base: Some(BaseStage {
                        key: base_ref_key,
                        t: threshold(BASE_REF_RATE),
                    }),
                }
            } else {
                RefStage {
                    salt,
                    t: threshold(ref_rate),
                    base: None,
                }
            }
        });
        let mut state = State {
            salt: line_key(cfg.salt),
            t,
            base,
            inv_rate: 1.0,
            max_lines,
            stack: LruStack::new(),
            heap: BinaryHeap::new(),
            weights: vec![0.0; 1024],
            cold: 0.0,
            by_sampled: vec![0; 1024],
            cold_refs: 0,
            sampled: 0,
            exact_below,
            // The walk stops at `C` distinct lines.
            lookback: LookBack::new(exact_below),
            ref_counts: vec![
                0;
                if exact_below > 0 {
                    exact_below as usize + 1
                } else {
                    0
                }
            ],
            truncated: 0,
            sink,
        };
        state.inv_rate = 1.0 / state.rate();
        Ok(Shards {
            line_bytes: opts.line_bytes,
            adjust: cfg.adjust,
            shift: opts.line_shift(),
            ifetch: opts.include_ifetch,
            totals: Totals::default(),
            buf: Vec::with_capacity(CHUNK),
            ring: VecDeque::new(),
            seen: 0,
            refs,
            state,
        })
    }

    /// The reference sample's decision (`None`: off).
    pub(crate) fn ref_stage(&self) -> Option<RefStage> {
        self.refs
    }

    /// Sets the reference and instruction counts (a sample index's replay
    /// feeds no records).
    pub(crate) fn set_totals(&mut self, totals: Totals) {
        self.totals = totals;
    }

    /// Adds one record.
    #[inline]
    pub fn push(&mut self, r: Record) {
        self.buf.push(r);
        if self.buf.len() == CHUNK {
            self.process();
        }
    }

    /// Adds every record of `records`.
    pub fn extend<I: IntoIterator<Item = Record>>(&mut self, records: I) {
        let mut it = records.into_iter();
        loop {
            let room = CHUNK - self.buf.len();
            self.buf.extend(it.by_ref().take(room));
            if self.buf.len() < CHUNK {
                return;
            }
            self.process();
        }
    }

    fn sampler(&self) -> Sampler {
        // With two stages the filter applies the first; `handle` checks
        // the second.
        let lines = self.state.base.unwrap_or(BaseStage {
            key: self.state.salt,
            t: self.state.t,
        });
        let refs = self.refs.map(|r| r.first());
        Sampler {
            salt: lines.key,
            t: lines.t,
            ref_salt: refs.map_or(0, |r| r.key),
            ref_t: refs.map(|r| r.t),
        }
    }

    /// Adds every record of `records`, like [`Shards::extend`] with the
    /// same result, but without copying them and with the sampling filter
    /// run on the chunks in parallel (rayon).
    pub fn extend_from_slice(&mut self, records: &[Record]) {
        if !self.buf.is_empty() {
            self.process();
        }
        let feed = (self.shift, self.ifetch);
        for batch in records.chunks(CHUNK * BATCH) {
            // The threshold may fall (fixed size) during the batch: the
            // filter's picks are a superset, `handle` checks again.
            let sampler = self.sampler();
            let seen = self.seen;
            let filtered: Vec<Filtered> = batch
                .par_chunks(CHUNK)
                .enumerate()
                .map(|(k, c)| filter(c, seen + (k * CHUNK) as u64, feed, &sampler))
                .collect();
            for (k, f) in filtered.iter().enumerate() {
                self.handle(batch, f, k * CHUNK);
            }
            self.seen += batch.len() as u64;
        }
    }

    /// Filters the chunk in `buf`, handles the records that matter, and
    /// starts the next chunk.
    fn process(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        let f = filter(&buf, self.seen, (self.shift, self.ifetch), &self.sampler());
        self.handle(&buf, &f, 0);
        self.seen += buf.len() as u64;
        self.buf = buf;
        self.buf.clear();
    }

    /// Handles the records of `recs` that `f` picked (positions from
    /// `base`), then keeps the chunk's lines for later look-backs.
    fn handle(&mut self, recs: &[Record], f: &Filtered, base: usize) {
        let feed = (self.shift, self.ifetch);
        let salt = self.state.salt;
        self.totals.accesses += f.accesses;
        self.totals.instructions += f.instructions;
        for &(p, at) in &f.picks {
            let pos = base + (p & !(PICK_LINE | PICK_REF)) as usize;
            let r = recs[pos];
            let d = decode(r, feed.0, feed.1);
            if d.is_escape {
                self.totals.instructions += r.instructions() - d.gap_instructions;
                continue;
            }
            let record = self.seen + pos as u64;
            if p & PICK_REF != 0 && self.refs.is_some_and(|r| r.second(record)) {
                for (j, line) in (d.first..=d.last).enumerate() {
                    let (a, b) = self.ring.as_slices();
                    let cur = &f.lines[..at as usize + j];
                    self.state.ref_sample(line, record, [a, b, cur]);
                }
            }
            if p & PICK_LINE != 0 {
                // The filter counted one reference.
                self.totals.accesses += d.last - d.first;
                for line in d.first..=d.last {
                    // The threshold may have fallen (fixed size) since the
                    // filter ran, and the filter tested only the first
                    // stage and the first line: check again.
                    if self.state.base_passes(line) {
                        let h = mix64(line ^ salt);
                        if h <= self.state.t {
                            self.state.sampled_ref(line, h);
                        }
                    }
                }
            }
        }
        if !f.lines.is_empty() {
            let keep = f.lines.len().min(WINDOW);
            self.ring.extend(&f.lines[f.lines.len() - keep..]);
            let excess = self.ring.len().saturating_sub(WINDOW);
            self.ring.drain(..excess);
        }
    }

    /// A builder that records a trace's base sample into `recorder`:
    /// every line passing the base stage, and every reference passing the
    /// reference sample's base stage with its distance capped at `c0`.
    pub(crate) fn index_builder(
        opts: &Options,
        c0: u32,
        base_salt: u64,
        recorder: Box<crate::shards_index::Recorder>,
    ) -> Result<Self> {
        let cfg = ShardsConfig::fixed_rate(BASE_RATE)
            .with_exact_below(c0)
            .with_base_salt(base_salt);
        // At the base rate the second line stage keeps every line.
        let mut b = Shards::with_sink(opts, &cfg, Sink::Index(recorder))?;
        debug_assert_eq!(b.state.t, u64::MAX);
        b.refs = (c0 > 0).then(|| RefStage {
            salt: 0,
            t: u64::MAX,
            base: Some(BaseStage {
                key: base_keys(base_salt).1,
                t: threshold(BASE_REF_RATE),
            }),
        });
        Ok(b)
    }

    /// The recorder and the counts of an [`Shards::index_builder`] fed
    /// with a whole trace.
    pub(crate) fn into_recording(mut self) -> (Option<Box<crate::shards_index::Recorder>>, Totals) {
        self.process();
        let totals = self.totals;
        match std::mem::replace(&mut self.state.sink, Sink::Estimate) {
            Sink::Index(r) => (Some(r), totals),
            Sink::Estimate => (None, totals),
        }
    }

    /// The estimate from the records added.
    pub fn finish(mut self) -> ShardsEstimate {
        self.process();
        let s = self.state;
        let (mut weights, cold) = if s.max_lines == usize::MAX {
            // Fixed rate: weight the counts by sampled distance now.
            let mut w: Vec<f64> = Vec::new();
            for (ds, &n) in s.by_sampled.iter().enumerate() {
                if n > 0 {
                    let d = (ds as f64 * s.inv_rate) as usize;
                    if d >= w.len() {
                        w.resize(d + 1, 0.0);
                    }
                    w[d] += n as f64 * s.inv_rate;
                }
            }
            (w, s.cold_refs as f64 * s.inv_rate)
        } else {
            (s.weights, s.cold)
        };
        while weights.last() == Some(&0.0) {
            weights.pop();
        }
        ShardsEstimate {
            line_bytes: self.line_bytes,
            weights,
            cold,
            sampled_refs: s.sampled,
            sampled_lines: s.stack.len() as u64,
            final_rate: 1.0 / s.inv_rate,
            accesses: self.totals.accesses,
            instructions: self.totals.instructions,
            adjust: self.adjust,
            exact_below_lines: s.exact_below,
            ref_counts: s.ref_counts,
            truncated_lookbacks: s.truncated,
        }
    }
}

/// The SHARDS estimate of `records`' stack-distance histogram.
///
/// ```
/// use cachepart_curves::{fully_associative, shards, Options, ShardsConfig};
/// use cachepart_trace::{Kind, Record};
/// let recs: Vec<Record> = (0..10_000u64)
///     .map(|i| Record::access(Kind::Load, (i * 7919 % 512) * 64, 8, 0).unwrap())
///     .collect();
/// let opts = Options::default();
/// // At rate 1 every line is sampled: the exact histogram.
/// let est = shards(recs.iter().copied(), &opts, &ShardsConfig::fixed_rate(1.0)).unwrap();
/// let exact = fully_associative(recs.iter().copied(), &opts).unwrap();
/// let sizes = [64, 4096, 32768];
/// assert_eq!(est.curve(&sizes).unwrap(), exact.curve(&sizes).unwrap());
/// ```
pub fn shards<I: IntoIterator<Item = Record>>(
    records: I,
    opts: &Options,
    cfg: &ShardsConfig,
) -> Result<ShardsEstimate> {
    let mut b = Shards::new(opts, cfg)?;
    b.extend(records);
    Ok(b.finish())
}

/// [`shards`] of an in-memory trace: the same estimate, without copying
/// the records and with the sampling filter run in parallel.
pub fn shards_slice(
    records: &[Record],
    opts: &Options,
    cfg: &ShardsConfig,
) -> Result<ShardsEstimate> {
    let mut b = Shards::new(opts, cfg)?;
    b.extend_from_slice(records);
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_trace::Kind;

    fn estimate(weights: Vec<f64>, cold: f64, c: u64, ref_counts: Vec<u64>) -> ShardsEstimate {
        ShardsEstimate {
            line_bytes: 64,
            weights,
            cold,
            sampled_refs: 0,
            sampled_lines: 0,
            final_rate: 0.5,
            accesses: 1000,
            instructions: 0,
            adjust: true,
            exact_below_lines: c,
            ref_counts,
            truncated_lookbacks: 0,
        }
    }

    #[test]
    fn splices_the_reference_sample_below_c_and_the_line_shape_above() {
        // Line sample: 100 at distance 1, 300 at 4, 200 at 10, 50 cold.
        let mut w = vec![0.0; 11];
        w[1] = 100.0;
        w[4] = 300.0;
        w[10] = 200.0;
        let plain = estimate(w.clone(), 50.0, 0, vec![]);
        assert_eq!(plain.misses_at_lines(2), 550.0);
        assert_eq!(plain.misses_at_lines(11), 50.0);
        // C = 4: 10 sampled references, 5 at distance 0, 1 at 2, 4 at 4+.
        let e = estimate(w, 50.0, 4, vec![5, 0, 1, 0, 4]);
        assert_eq!(e.ref_samples(), 10);
        assert_eq!(e.misses_at_lines(0), 1000.0);
        assert_eq!(e.misses_at_lines(1), 500.0);
        assert_eq!(e.misses_at_lines(3), 400.0);
        assert_eq!(e.misses_at_lines(4), 400.0);
        // Above C the line sample's shape: 250 of its 550 at C remain.
        assert!((e.misses_at_lines(5) - 400.0 * 250.0 / 550.0).abs() < 1e-9);
        assert!((e.misses_at_lines(100) - 400.0 * 50.0 / 550.0).abs() < 1e-9);
        let c = e.curve(&[64, 256, 64 * 5]).unwrap();
        assert_eq!(c.misses, vec![500, 400, 182]);
    }

    #[test]
    fn config_defaults_and_checks() {
        let cfg: ShardsConfig = serde_json::from_str(
            r#"{"sampling": {"mode": "fixed-rate", "rate": 0.01}, "adjust": true, "salt": 3}"#,
        )
        .unwrap();
        assert_eq!(cfg, ShardsConfig::fixed_rate(0.01).with_salt(3));
        assert_eq!(cfg.exact_below_lines, DEFAULT_EXACT_BELOW);
        assert_eq!(ShardsConfig::fixed_size(10).exact_below_lines, 0);
        let too_big = ShardsConfig::fixed_rate(0.01).with_exact_below(MAX_EXACT_BELOW + 1);
        assert!(Shards::new(&Options::default(), &too_big).is_err());
        let bad = ShardsConfig::fixed_rate(0.01).with_reference_fraction(0.0);
        assert!(Shards::new(&Options::default(), &bad).is_err());
        assert_eq!(cfg.reference_fraction, DEFAULT_REFERENCE_FRACTION);
    }

    #[test]
    fn every_way_of_feeding_gives_the_same_estimate() {
        // Loads and stores over 3,000 lines with fetches in between, some
        // crossing lines; 200 Ki records, so several chunks.
        let mut x: u64 = 7;
        let recs: Vec<Record> = (0..200_000u64)
            .map(|i| {
                x = mix64(x);
                let kind = [Kind::Load, Kind::Ifetch, Kind::Store, Kind::Ifetch][(i % 4) as usize];
                let line = if x.is_multiple_of(3) {
                    x % 40
                } else {
                    x % 3000
                };
                Record::access(kind, line * 64 + (x >> 40) % 64, 8, (i % 3) as u32).unwrap()
            })
            .collect();
        let opts = Options::default();
        let cfg = ShardsConfig::fixed_rate(0.05).with_reference_fraction(1.0);
        let a = shards(recs.iter().copied(), &opts, &cfg).unwrap();
        let b = shards_slice(&recs, &opts, &cfg).unwrap();
        let mut one = Shards::new(&opts, &cfg).unwrap();
        for &r in &recs {
            one.push(r);
        }
        let c = one.finish();
        let mut mixed = Shards::new(&opts, &cfg).unwrap();
        mixed.extend_from_slice(&recs[..70_000]);
        mixed.extend(recs[70_000..100_000].iter().copied());
        mixed.extend_from_slice(&recs[100_000..]);
        let d = mixed.finish();
        assert!(a.ref_samples() > 1000 && a.sampled_refs > 1000);
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert_eq!(a, d);
        let exact = crate::fully_associative(recs.iter().copied(), &opts).unwrap();
        assert_eq!(a.accesses, exact.accesses);
        assert_eq!(a.instructions, exact.instructions);
    }
}
