//! The result of a SHARDS pass ([`ShardsEstimate`]): the estimated
//! stack-distance histogram and reference-sample counts, and the misses
//! and curve they give (the line sample's shape spliced to the reference
//! sample's levels below `C`).

use serde::{Deserialize, Serialize};

use crate::curve::{check_sizes, Curve};
use crate::error::{CurveError, Result};

/// The fewest sampled lines, and the fewest references in the reference
/// sample, of an estimate that [`ShardsEstimate::small_sample`] does not
/// call too small: 100, where the count of sampled lines, which the line
/// sample's estimate scales with, has a binomial spread of 10 %, and the
/// reference sample's miss ratios a standard error of up to 0.05.
pub const MIN_SAMPLE: u64 = 100;

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
    /// `C`, [`ShardsConfig::exact_below_lines`](crate::shards::ShardsConfig::exact_below_lines).
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

    /// Whether the sample is empty while the trace has references: then
    /// there is no estimate, and [`ShardsEstimate::curve`] refuses it.
    pub fn is_empty_sample(&self) -> bool {
        self.sampled_refs == 0 && self.accesses > 0
    }

    /// Why the sample is too small for the estimate to mean much, if it
    /// is: a sample (not exact: final rate below 1) of fewer than
    /// [`MIN_SAMPLE`] lines, or a reference sample of fewer than
    /// [`MIN_SAMPLE`] references (when it has any: without one the line
    /// sample gives every size).
    pub fn small_sample(&self) -> Option<String> {
        if self.sampled_refs == 0 || self.final_rate >= 1.0 {
            return None;
        }
        let k = self.ref_samples();
        let mut why = Vec::new();
        if self.sampled_lines < MIN_SAMPLE {
            why.push(format!("{} sampled lines", self.sampled_lines));
        }
        if self.exact_below_lines > 0 && k > 0 && k < MIN_SAMPLE {
            why.push(format!(
                "{k} references in the reference sample (sizes up to {} lines)",
                self.exact_below_lines
            ));
        }
        (!why.is_empty()).then(|| {
            format!(
                "the SHARDS sample is small ({}, fewer than {MIN_SAMPLE}): the estimate may be far off; \
                 sample at a higher rate, or use the exact curve",
                why.join(", ")
            )
        })
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
        // `base` is 0 only for an empty line sample (a sampled line's
        // first reference is a cold miss), which has no shape:
        // `curve` refuses it.
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
    /// rounded and capped at the reference count. An empty sample of a
    /// trace with references is refused ([`CurveError::EmptySample`]):
    /// its curve would claim no miss at all.
    pub fn curve(&self, sizes_bytes: &[u64]) -> Result<Curve> {
        check_sizes(sizes_bytes)?;
        if self.is_empty_sample() {
            return Err(CurveError::EmptySample {
                accesses: self.accesses,
                rate: self.final_rate,
            });
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(weights: Vec<f64>, cold: f64, c: u64, ref_counts: Vec<u64>) -> ShardsEstimate {
        ShardsEstimate {
            line_bytes: 64,
            weights,
            cold,
            sampled_refs: 500,
            sampled_lines: 200,
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
    fn an_empty_sample_has_no_curve() {
        // A reference sample of 10 (all at C or more) and an empty line
        // sample: the curve was all misses up to C and none above.
        let mut e = estimate(vec![], 0.0, 4, vec![0, 0, 0, 0, 10]);
        e.sampled_refs = 0;
        e.sampled_lines = 0;
        e.final_rate = 0.0001;
        let err = e.curve(&[64, 1024]).unwrap_err().to_string();
        assert!(
            err.contains("SHARDS sample is empty: none of the 1000 line references"),
            "{err}"
        );
        // A trace without references has the all-zero curve.
        e.accesses = 0;
        assert_eq!(e.curve(&[64, 1024]).unwrap().misses, vec![0, 0]);
    }

    #[test]
    fn a_small_sample_is_named() {
        let mut e = estimate(vec![0.0, 100.0], 50.0, 4, vec![5, 0, 1, 0, 4]);
        let why = e.small_sample().unwrap();
        assert!(
            why.contains("10 references in the reference sample (sizes up to 4 lines)"),
            "{why}"
        );
        assert!(!why.contains("sampled lines"), "{why}");
        e.sampled_lines = 99;
        assert!(e
            .small_sample()
            .unwrap()
            .contains("99 sampled lines, 10 references"));
        e.ref_counts = vec![50, 0, 0, 0, 50];
        e.sampled_lines = 100;
        assert_eq!(e.small_sample(), None);
        // Exact (rate 1): never too small.
        e.sampled_lines = 3;
        e.final_rate = 1.0;
        assert_eq!(e.small_sample(), None);
    }
}
