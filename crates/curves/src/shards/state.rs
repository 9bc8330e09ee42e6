//! The estimator's state: the LRU stack of the sampled lines, the
//! histograms by (sampled) distance, the fixed-size eviction heap, the
//! reference sample's look-back counts, and where sampled references go
//! ([`Sink`]: the estimate or a sample index being built).

use std::collections::BinaryHeap;

use super::config::rate_of;
use super::sampler::BaseStage;
use crate::lookback::{LookBack, Reach};
use crate::stack::LruStack;

/// What the sampled references go to.
pub(crate) enum Sink {
    /// The estimate (the normal case).
    Estimate,
    /// A sample index being built.
    Index(Box<crate::shards_index::Recorder>),
}

pub(crate) struct State {
    /// Key of the (second-stage) line hash.
    pub(super) salt: u64,
    /// Largest sampled hash (of the second stage with a base stage).
    pub(crate) t: u64,
    /// The base stage of the lines (`None`: one stage).
    pub(super) base: Option<BaseStage>,
    /// `1 / R` for the current threshold.
    pub(super) inv_rate: f64,
    pub(super) max_lines: usize,
    pub(super) stack: LruStack,
    /// Tracked lines by hash, largest first (fixed size only).
    pub(super) heap: BinaryHeap<(u64, u64)>,
    /// Fixed size: `weights[d]`, references weighted at the rate of their
    /// time.
    pub(super) weights: Vec<f64>,
    pub(super) cold: f64,
    /// Fixed rate: references by *sampled* distance, and first
    /// references (weighted by `1 / R` at the end, so that a sample index
    /// can add runs of repeats at once).
    pub(super) by_sampled: Vec<u64>,
    pub(super) cold_refs: u64,
    pub(super) sampled: u64,
    /// `C` (0: no reference sample).
    pub(super) exact_below: u64,
    pub(super) lookback: LookBack,
    pub(super) ref_counts: Vec<u64>,
    pub(super) truncated: u64,
    pub(super) sink: Sink,
}

impl State {
    /// The sampling rate of the current thresholds.
    pub(super) fn rate(&self) -> f64 {
        self.base.map_or(1.0, |b| rate_of(b.t)) * rate_of(self.t)
    }

    /// Whether `line` passes the base stage (always with one stage).
    #[inline(always)]
    pub(super) fn base_passes(&self, line: u64) -> bool {
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
    pub(super) fn ref_sample(&mut self, line: u64, record: u64, before: [&[u64]; 3]) {
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
