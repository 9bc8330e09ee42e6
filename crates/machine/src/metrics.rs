//! Mix metrics from per-app slowdowns (definitions of the papers and of
//! PBBCache's `compute_basic_metrics`).
//!
//! Two coefficients of variation measure unfairness, and they differ:
//! `unfairness_cov` is the CoV of the slowdowns (PBBCache, LFOC; Jain's
//! index is built on it), `unfairness_factor` the CoV of the normalised
//! performances, 1/slowdown (Zhang et al.'s "unfairness factor"). For two
//! apps they are equal; for more they are not. Zhang et al.'s "overall
//! system efficiency", the geometric mean of normalised performance, is
//! `gmean_speedup`.

use serde::{Deserialize, Serialize};

/// Metrics of one mix under one plan. Values are unrounded; PBBCache prints
/// STP and the gmeans rounded to 3 decimals ([`round3`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MixMetrics {
    /// System throughput (weighted speedup): sum of 1/slowdown.
    pub stp: f64,
    /// Average normalised turnaround time: mean slowdown.
    pub antt: f64,
    /// Max slowdown / min slowdown.
    pub unfairness: f64,
    /// Coefficient of variation (population) of the slowdowns (PBBCache,
    /// LFOC).
    pub unfairness_cov: f64,
    /// Coefficient of variation (population) of the normalised
    /// performances, 1/slowdown (Zhang et al.'s unfairness factor).
    pub unfairness_factor: f64,
    /// Jain's index, 1 / (1 + CoV^2).
    pub jain: f64,
    /// Geometric mean of 1/slowdown (Zhang et al.'s overall system
    /// efficiency).
    pub gmean_speedup: f64,
    /// Geometric mean of IPC alone (at all ways) / slowdown.
    pub gmean_ipc: f64,
    /// Harmonic mean of speedups: n / sum of slowdowns.
    pub hmean_speedup: f64,
}

impl MixMetrics {
    /// Computes the metrics from slowdowns and IPCs alone.
    pub fn compute(slowdown: &[f64], ipc_alone: &[f64]) -> MixMetrics {
        let n = slowdown.len() as f64;
        if slowdown.is_empty() {
            return MixMetrics::default();
        }
        let stp: f64 = slowdown.iter().map(|s| 1.0 / s).sum();
        let sum: f64 = slowdown.iter().sum();
        let antt = sum / n;
        let max = slowdown.iter().copied().fold(f64::MIN, f64::max);
        let min = slowdown.iter().copied().fold(f64::MAX, f64::min);
        let var = slowdown
            .iter()
            .map(|s| (s - antt) * (s - antt))
            .sum::<f64>()
            / n;
        let cov = var.sqrt() / antt;
        let perf_mean = stp / n;
        let perf_var = slowdown
            .iter()
            .map(|s| (1.0 / s - perf_mean) * (1.0 / s - perf_mean))
            .sum::<f64>()
            / n;
        let gmean_speedup = (slowdown.iter().map(|s| (1.0 / s).ln()).sum::<f64>() / n).exp();
        let gmean_ipc = (slowdown
            .iter()
            .zip(ipc_alone)
            .map(|(s, i)| (i / s).ln())
            .sum::<f64>()
            / n)
            .exp();
        MixMetrics {
            stp,
            antt,
            unfairness: max / min,
            unfairness_cov: cov,
            unfairness_factor: perf_var.sqrt() / perf_mean,
            jain: 1.0 / (1.0 + cov * cov),
            gmean_speedup,
            gmean_ipc,
            hmean_speedup: n / sum,
        }
    }
}

/// Rounds to 3 decimals exactly as Python's `round(x, 3)` does (correctly
/// rounded, ties to even on the exact binary value).
pub fn round3(x: f64) -> f64 {
    let y = x * 1000.0;
    let frac = y - y.floor();
    if (frac - 0.5).abs() > 1e-6 {
        return y.round() / 1000.0;
    }
    format!("{x:.3}").parse().unwrap_or(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn pbbcache_equal_part_example() {
        // input_workloads W1, equal-part, in ref/tidy_results.csv
        let s = [1.11045, 1.00697, 1.09484, 1.04132, 1.31772, 1.02608];
        let m = MixMetrics::compute(&s, &[1.0; 6]);
        assert_eq!(round3(m.stp), 5.501);
        assert!((m.antt - 1.09956).abs() < 5e-6);
        assert!((m.unfairness - 1.30859).abs() < 5e-5);
        assert!((m.unfairness_cov - 0.09473).abs() < 5e-6);
        assert_eq!(round3(m.gmean_speedup), 0.913);
    }

    #[test]
    fn zhang_unfairness_factor() {
        // Slowdowns 1, 1, 4: normalised performances 1, 1, 0.25, mean 0.75,
        // population standard deviation sqrt(0.125).
        let m = MixMetrics::compute(&[1.0, 1.0, 4.0], &[1.0; 3]);
        assert!((m.unfairness_factor - 0.125_f64.sqrt() / 0.75).abs() < 1e-12);
        // The CoV of the slowdowns (mean 2, standard deviation sqrt(2)) is
        // another number: 0.707 against 0.471.
        assert!((m.unfairness_cov - 2.0_f64.sqrt() / 2.0).abs() < 1e-12);
        assert!((m.unfairness_cov - m.unfairness_factor).abs() > 0.2);
        // Efficiency: the geometric mean of normalised performance.
        assert!((m.gmean_speedup - 0.25_f64.powf(1.0 / 3.0)).abs() < 1e-12);
    }

    proptest! {
        #[test]
        fn two_apps_have_one_unfairness(a in 1.0f64..10.0, b in 1.0f64..10.0) {
            let m = MixMetrics::compute(&[a, b], &[1.0; 2]);
            prop_assert!((m.unfairness_cov - m.unfairness_factor).abs() < 1e-12);
        }

        #[test]
        fn round3_matches_decimal_formatting(x in 0.0f64..100.0) {
            let expect: f64 = format!("{x:.3}").parse().unwrap();
            prop_assert_eq!(round3(x), expect);
        }
    }
}
