//! [`Shards`], the record-by-record builder: buffers records into chunks,
//! runs the sampling filter on them (in parallel for a slice), feeds the
//! picked records to the estimator state, and turns the state into a
//! [`ShardsEstimate`] (or a sample index's recording).

use std::collections::{BinaryHeap, VecDeque};

use cachepart_trace::Record;
use rayon::prelude::*;

use super::config::{
    base_keys, line_key, threshold, Sampling, ShardsConfig, BASE_RATE, BASE_REF_RATE,
};
use super::estimate::ShardsEstimate;
use super::sampler::{
    filter, BaseStage, Filtered, RefStage, Sampler, BATCH, CHUNK, PICK_LINE, PICK_REF,
};
use super::state::{Sink, State};
use crate::error::Result;
use crate::hash::mix64;
use crate::lookback::{LookBack, WINDOW};
use crate::options::{Options, Totals};
use crate::raw::decode;
use crate::stack::LruStack;

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
