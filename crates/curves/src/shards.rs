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
use serde::{Deserialize, Serialize};

use crate::curve::{check_sizes, Curve};
use crate::error::{CurveError, Result};
use crate::hash::mix64;
use crate::options::{LineFeed, Options};
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
}

impl ShardsConfig {
    /// Fixed-rate sampling at `rate`, adjusted, salt 0.
    pub fn fixed_rate(rate: f64) -> Self {
        ShardsConfig {
            sampling: Sampling::FixedRate { rate },
            adjust: true,
            salt: 0,
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
        }
    }

    /// The same configuration with another salt.
    pub fn with_salt(mut self, salt: u64) -> Self {
        self.salt = salt;
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

/// Builds a [`ShardsEstimate`] record by record.
pub struct Shards {
    line_bytes: u64,
    adjust: bool,
    feed: LineFeed,
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
    prev: u64,
    prev_sampled: bool,
}

impl State {
    #[inline(always)]
    fn reference(&mut self, line: u64) {
        if line == self.prev {
            if self.prev_sampled {
                self.sampled += 1;
                self.weights[0] += self.inv_rate;
            }
            return;
        }
        self.prev = line;
        let h = mix64(line ^ self.salt);
        self.prev_sampled = h <= self.t;
        if self.prev_sampled {
            self.sampled_ref(line, h);
        }
    }

    #[inline(never)]
    fn sampled_ref(&mut self, line: u64, h: u64) {
        self.sampled += 1;
        match self.stack.access(line) {
            Some(ds) => {
                let d = (ds as f64 * self.inv_rate) as usize;
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
                        let (top, evicted) = self.heap.pop().expect("heap holds every line");
                        self.stack.remove(evicted);
                        self.t = top.saturating_sub(1);
                        self.inv_rate = 1.0 / rate_of(self.t);
                        self.prev_sampled = h <= self.t;
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
        Ok(Shards {
            line_bytes: opts.line_bytes,
            adjust: cfg.adjust,
            feed: LineFeed::new(opts),
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
                prev: u64::MAX,
                prev_sampled: false,
            },
        })
    }

    /// Adds one record.
    #[inline]
    pub fn push(&mut self, r: Record) {
        let state = &mut self.state;
        self.feed.push(r, |line| state.reference(line));
    }

    /// Adds every record of `records`.
    pub fn extend<I: IntoIterator<Item = Record>>(&mut self, records: I) {
        for r in records {
            self.push(r);
        }
    }

    /// The estimate from the records added.
    pub fn finish(self) -> ShardsEstimate {
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
            accesses: self.feed.totals.accesses,
            instructions: self.feed.totals.instructions,
            adjust: self.adjust,
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
