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
//! Error: the estimate's variance comes from which lines are sampled, so
//! it falls roughly as `1 / (R * footprint)`; sizes below about `1 / R`
//! lines are resolved only to whether a sampled line was re-referenced
//! with no other sampled line in between. `docs/curves.md` has the
//! measured mean absolute errors.

use std::collections::BinaryHeap;

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
    /// Salt xor-ed into line numbers before hashing: another salt samples
    /// another set of lines (0 by default).
    pub salt: u64,
    /// Distances below this many lines are measured exactly for the
    /// sampled references whose estimate is below twice it, by looking
    /// back over the recent records ([`DEFAULT_EXACT_BELOW`] lines by
    /// default; 0 for plain SHARDS).
    #[serde(default = "default_exact_below")]
    pub exact_below_lines: u32,
}

/// The default [`ShardsConfig::exact_below_lines`]: 256 lines (16 KiB of
/// 64-byte lines), above SHARDS' resolution of `1 / R` lines at `R = 0.01`.
pub const DEFAULT_EXACT_BELOW: u32 = 256;

/// Largest [`ShardsConfig::exact_below_lines`].
pub const MAX_EXACT_BELOW: u32 = 1 << 16;

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
            exact_below_lines: DEFAULT_EXACT_BELOW,
        }
    }

    /// Fixed-size sampling of at most `max_lines` lines from rate 1,
    /// adjusted, salt 0.
    pub fn fixed_size(max_lines: usize) -> Self {
        ShardsConfig {
            sampling: Sampling::FixedSize {
                max_lines,
                initial_rate: 1.0,
            },
            adjust: true,
            salt: 0,
            exact_below_lines: DEFAULT_EXACT_BELOW,
        }
    }

    /// The same configuration with another salt.
    pub fn with_salt(mut self, salt: u64) -> Self {
        self.salt = salt;
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
fn threshold(rate: f64) -> u64 {
    if rate >= 1.0 {
        u64::MAX
    } else {
        ((rate * 2f64.powi(64)) as u64).saturating_sub(1)
    }
}

/// The rate of a threshold (hashes `0..=t` are sampled).
fn rate_of(t: u64) -> f64 {
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
    /// Sampled references whose distance was looked back for.
    pub lookbacks: u64,
    /// Look-backs that reached the start of the record window before the
    /// previous use or the cap (their distance is a lower bound).
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

    /// Estimated misses of a fully associative LRU cache of `lines` lines.
    pub fn misses_at_lines(&self, lines: u64) -> f64 {
        let from = usize::try_from(lines).unwrap_or(usize::MAX);
        let tail: f64 = self.weights.get(from..).map_or(0.0, |w| w.iter().sum());
        (self.cold + tail) * self.scale()
    }

    /// The estimated curve at `sizes_bytes` (strictly increasing), misses
    /// rounded and capped at the reference count.
    pub fn curve(&self, sizes_bytes: &[u64]) -> Result<Curve> {
        check_sizes(sizes_bytes)?;
        // Suffix sums once, then one lookup per size.
        let mut suffix = vec![0.0; self.weights.len() + 1];
        for d in (0..self.weights.len()).rev() {
            suffix[d] = suffix[d + 1] + self.weights[d];
        }
        let scale = self.scale();
        let misses = sizes_bytes
            .iter()
            .map(|&s| {
                let n = usize::try_from(s / self.line_bytes).unwrap_or(usize::MAX);
                let tail = suffix.get(n).copied().unwrap_or(0.0);
                (((self.cold + tail) * scale).round() as u64).min(self.accesses)
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

/// A sampled reference is looked back for when its estimated distance
/// is below this times `exact_below_lines`.
const LOOKBACK_FACTOR: f64 = 1.0;

/// Records processed at once by the sampling filter (the look-back window,
/// so that a full chunk is the next one's window).
const CHUNK: usize = WINDOW;

/// What the filter found in a chunk.
struct Filtered {
    /// Positions of the records that matter: escapes, and references that
    /// cross a line boundary or whose first line is sampled.
    picks: Vec<u32>,
    instructions: u64,
    accesses: u64,
}

/// The branch-free sampling filter over one chunk: counts each record's
/// instructions and references and hashes its first line, from the
/// record's bits (as [`decode`], which [`Shards::handle`] applies to the
/// picked records; a crossing reference's further lines are counted
/// there).
fn filter(recs: &[Record], shift: u32, ifetch: bool, t: u64, salt: u64) -> Filtered {
    // Grown as needed: a few percent of the records are picked.
    let mut picks = Vec::with_capacity(1024);
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
        if is_escape | cross | (mix64((addr >> shift) ^ salt) <= t) {
            picks.push(i as u32);
        }
    }
    Filtered {
        picks,
        instructions,
        accesses,
    }
}

/// Builds a [`ShardsEstimate`] record by record.
///
/// Records are buffered and filtered a chunk at a time: a branch-free pass
/// decodes each record's bits, hashes its first line and notes the few
/// that matter (sampled, crossing a line boundary, or escapes); only those
/// are then handled one by one. The previous chunk is kept for the
/// look-back of short distances (64 Ki to 128 Ki records back).
pub struct Shards {
    line_bytes: u64,
    adjust: bool,
    shift: u32,
    ifetch: bool,
    totals: Totals,
    /// The chunk being filled.
    buf: Vec<Record>,
    /// The last [`WINDOW`] records handled (look-back only).
    old: Vec<Record>,
    state: State,
}

struct State {
    salt: u64,
    /// Largest sampled hash.
    t: u64,
    /// `1 / R` for the current threshold.
    inv_rate: f64,
    max_lines: usize,
    stack: LruStack,
    /// Tracked lines by hash, largest first (fixed size only).
    heap: BinaryHeap<(u64, u64)>,
    weights: Vec<f64>,
    cold: f64,
    sampled: u64,
    /// `exact_below_lines` (0: no look-back).
    exact_below: u64,
    lookback: LookBack,
    lookbacks: u64,
    truncated: u64,
}

impl State {
    /// A reference to sampled `line` (hash `h`) made by `recs.1[pos]`
    /// (`recs.0` is the chunk before).
    #[inline(never)]
    fn sampled_ref(
        &mut self,
        line: u64,
        h: u64,
        recs: (&[Record], &[Record]),
        pos: usize,
        feed: (u32, bool),
    ) {
        self.sampled += 1;
        match self.stack.access(line) {
            Some(ds) => {
                let est = ds as f64 * self.inv_rate;
                let below = self.exact_below as f64;
                let d = if est < LOOKBACK_FACTOR * below {
                    self.lookbacks += 1;
                    match self.lookback.distance(recs, pos, line, feed.0, feed.1) {
                        Reach::Exact(d) => d as usize,
                        Reach::AtLeast(d) => (d as usize).max(est as usize),
                        Reach::Truncated(d) => {
                            self.truncated += 1;
                            (d as usize).max(est as usize)
                        }
                    }
                } else {
                    est as usize
                };
                if d >= self.weights.len() {
                    self.weights
                        .resize((d + 1).max(2 * self.weights.len()), 0.0);
                }
                self.weights[d] += self.inv_rate;
            }
            None => {
                self.cold += self.inv_rate;
                if self.max_lines != usize::MAX {
                    self.heap.push((h, line));
                    if self.stack.len() > self.max_lines {
                        if let Some((top, evicted)) = self.heap.pop() {
                            self.stack.remove(evicted);
                            self.t = top.saturating_sub(1);
                            self.inv_rate = 1.0 / rate_of(self.t);
                        }
                    }
                }
            }
        }
    }
}

impl Shards {
    /// A builder for `opts` and `cfg` (both checked).
    pub fn new(opts: &Options, cfg: &ShardsConfig) -> Result<Self> {
        opts.check()?;
        cfg.check()?;
        let (rate, max_lines) = match cfg.sampling {
            Sampling::FixedRate { rate } => (rate, usize::MAX),
            Sampling::FixedSize {
                max_lines,
                initial_rate,
            } => (initial_rate, max_lines),
        };
        let t = threshold(rate);
        let exact_below = u64::from(cfg.exact_below_lines);
        Ok(Shards {
            line_bytes: opts.line_bytes,
            adjust: cfg.adjust,
            shift: opts.line_shift(),
            ifetch: opts.include_ifetch,
            totals: Totals::default(),
            buf: Vec::with_capacity(CHUNK),
            old: Vec::new(),
            state: State {
                salt: cfg.salt,
                t,
                inv_rate: 1.0 / rate_of(t),
                max_lines,
                stack: LruStack::new(),
                heap: BinaryHeap::new(),
                weights: vec![0.0; 1024],
                cold: 0.0,
                sampled: 0,
                exact_below,
                // The walk stops at the cap: `exact_below` distinct lines.
                lookback: LookBack::new(exact_below),
                lookbacks: 0,
                truncated: 0,
            },
        })
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

    /// Adds every record of `records`, like [`Shards::extend`] with the
    /// same result, but without copying them and with the sampling filter
    /// run on the chunks in parallel (rayon).
    pub fn extend_from_slice(&mut self, records: &[Record]) {
        if !self.buf.is_empty() {
            self.process();
        }
        let (shift, ifetch, t, salt) = (self.shift, self.ifetch, self.state.t, self.state.salt);
        let filtered: Vec<Filtered> = records
            .par_chunks(CHUNK)
            .map(|c| filter(c, shift, ifetch, t, salt))
            .collect();
        let old = std::mem::take(&mut self.old);
        for (k, f) in filtered.iter().enumerate() {
            self.handle(&old, records, f, k * CHUNK);
        }
        self.keep_window(old, records);
    }

    /// Filters the chunk in `buf`, handles the records that matter, and
    /// starts the next chunk.
    fn process(&mut self) {
        let f = filter(
            &self.buf,
            self.shift,
            self.ifetch,
            self.state.t,
            self.state.salt,
        );
        let old = std::mem::take(&mut self.old);
        let buf = std::mem::take(&mut self.buf);
        self.handle(&old, &buf, &f, 0);
        if buf.len() >= WINDOW {
            // A full chunk is the next window: swap, no copy.
            self.old = buf;
            self.buf = old;
        } else {
            self.keep_window(old, &buf);
            self.buf = buf;
        }
        self.buf.clear();
    }

    /// Handles the records of `recs` that `f` picked (positions from
    /// `base`), with `old` the records before `recs`.
    fn handle(&mut self, old: &[Record], recs: &[Record], f: &Filtered, base: usize) {
        let (shift, ifetch, salt) = (self.shift, self.ifetch, self.state.salt);
        self.totals.accesses += f.accesses;
        self.totals.instructions += f.instructions;
        for &i in &f.picks {
            let pos = base + i as usize;
            let r = recs[pos];
            let d = decode(r, shift, ifetch);
            if d.is_escape {
                self.totals.instructions += r.instructions() - d.gap_instructions;
                continue;
            }
            // The filter counted one reference.
            self.totals.accesses += d.last - d.first;
            for line in d.first..=d.last {
                // The threshold may have fallen (fixed size) since the
                // filter ran: check again.
                let h = mix64(line ^ salt);
                if h <= self.state.t {
                    self.state
                        .sampled_ref(line, h, (old, recs), pos, (shift, ifetch));
                }
            }
        }
    }

    /// Keeps the last [`WINDOW`] records of `old` then `recs` in
    /// `self.old`, reusing `old`'s storage.
    fn keep_window(&mut self, mut old: Vec<Record>, recs: &[Record]) {
        if recs.len() >= WINDOW {
            old.clear();
            old.extend_from_slice(&recs[recs.len() - WINDOW..]);
        } else {
            let drop = (old.len() + recs.len()).saturating_sub(WINDOW);
            old.drain(..drop);
            old.extend_from_slice(recs);
        }
        self.old = old;
    }

    /// The estimate from the records added.
    pub fn finish(mut self) -> ShardsEstimate {
        self.process();
        let s = self.state;
        let mut weights = s.weights;
        while weights.last() == Some(&0.0) {
            weights.pop();
        }
        ShardsEstimate {
            line_bytes: self.line_bytes,
            weights,
            cold: s.cold,
            sampled_refs: s.sampled,
            sampled_lines: s.stack.len() as u64,
            final_rate: 1.0 / s.inv_rate,
            accesses: self.totals.accesses,
            instructions: self.totals.instructions,
            adjust: self.adjust,
            lookbacks: s.lookbacks,
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
