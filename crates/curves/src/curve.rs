//! [`Curve`]: misses at a list of cache sizes, with the reference and
//! instruction counts that turn them into miss ratios and MPKI; sizes
//! helpers and the error measure between two curves.

use serde::{Deserialize, Serialize};

use crate::error::{CurveError, Result};

/// Misses at each of a list of cache sizes.
///
/// `misses[i]` is the number of misses (cold misses included) of the
/// `accesses` line references with a cache of `sizes_bytes[i]` bytes.
/// Sampled curves hold estimates, rounded to whole misses.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    /// Cache sizes in bytes, strictly increasing.
    pub sizes_bytes: Vec<u64>,
    /// Misses at each size.
    pub misses: Vec<u64>,
    /// Line references of the trace (see [`crate::Options`]).
    pub accesses: u64,
    /// Instructions of the trace.
    pub instructions: u64,
}

/// One point of a curve, with its derived rates.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Cache size in bytes.
    pub size_bytes: u64,
    /// Misses.
    pub misses: u64,
    /// Misses per reference.
    pub miss_ratio: f64,
    /// Misses per thousand instructions (`None` for a trace without
    /// instructions).
    pub mpki: Option<f64>,
}

impl Curve {
    /// Number of points.
    pub fn len(&self) -> usize {
        self.sizes_bytes.len()
    }

    /// Whether the curve has no points.
    pub fn is_empty(&self) -> bool {
        self.sizes_bytes.is_empty()
    }

    /// Misses per reference at point `i` (0 for a trace without references).
    pub fn miss_ratio(&self, i: usize) -> f64 {
        if self.accesses == 0 {
            0.0
        } else {
            self.misses[i] as f64 / self.accesses as f64
        }
    }

    /// Misses per thousand instructions at point `i`.
    pub fn mpki(&self, i: usize) -> Option<f64> {
        (self.instructions > 0).then(|| self.misses[i] as f64 * 1000.0 / self.instructions as f64)
    }

    /// Miss ratio at every point.
    pub fn miss_ratios(&self) -> Vec<f64> {
        (0..self.len()).map(|i| self.miss_ratio(i)).collect()
    }

    /// MPKI at every point (`None` for a trace without instructions).
    pub fn mpkis(&self) -> Option<Vec<f64>> {
        (0..self.len()).map(|i| self.mpki(i)).collect()
    }

    /// Every point with its rates.
    pub fn points(&self) -> impl Iterator<Item = Point> + '_ {
        (0..self.len()).map(|i| Point {
            size_bytes: self.sizes_bytes[i],
            misses: self.misses[i],
            miss_ratio: self.miss_ratio(i),
            mpki: self.mpki(i),
        })
    }

    /// The miss ratio of a cache of `size_bytes`, read off the curve as a
    /// step function: the ratio at the largest listed size not above it
    /// (1 below the first size, where nothing is assumed to hit).
    pub fn miss_ratio_at(&self, size_bytes: u64) -> f64 {
        match self.sizes_bytes.partition_point(|&s| s <= size_bytes) {
            0 => 1.0,
            i => self.miss_ratio(i - 1),
        }
    }
}

/// The most sizes per octave [`log_sizes`] takes: 1,024 (steps of 0.07 %),
/// so that even the 64 octaves of a `u64` give at most 65,537 sizes.
pub const MAX_PER_OCTAVE: u32 = 1024;

/// `per_octave` log-spaced sizes per doubling from `min_bytes` to
/// `max_bytes` (both included when on the grid), rounded to whole bytes,
/// e.g. `log_sizes(1024, 64 << 20, 1)` gives the 17 powers of two from
/// 1 KiB to 64 MiB. `per_octave` is 1 to [`MAX_PER_OCTAVE`].
pub fn log_sizes(min_bytes: u64, max_bytes: u64, per_octave: u32) -> Result<Vec<u64>> {
    if min_bytes == 0 || max_bytes < min_bytes {
        return Err(CurveError::Sizes(format!(
            "need 0 < min-size ({min_bytes}) <= max-size ({max_bytes})"
        )));
    }
    if !(1..=MAX_PER_OCTAVE).contains(&per_octave) {
        return Err(CurveError::Sizes(format!(
            "per-octave {per_octave}: expected 1 to {MAX_PER_OCTAVE}"
        )));
    }
    let octaves = (max_bytes as f64 / min_bytes as f64).log2();
    let steps = (octaves * f64::from(per_octave) + 1e-9).floor() as u64;
    let mut out: Vec<u64> = (0..=steps)
        .map(|k| {
            let s = min_bytes as f64 * 2f64.powf(k as f64 / f64::from(per_octave));
            (s.round() as u64).clamp(min_bytes, max_bytes)
        })
        .collect();
    out.dedup();
    Ok(out)
}

/// [`log_sizes`] as caches of whole `line_bytes` lines: each size is
/// rounded down to whole lines (a cache of `s` bytes holds `s / line`
/// lines, which is what every curve computes), and sizes that round to
/// the same number of lines are kept once. So the sizes listed are the
/// caches modelled; a `min_bytes` below one line (a cache of no line) is
/// refused. `line_bytes` is checked by [`crate::Options::check`].
pub fn line_sizes(
    min_bytes: u64,
    max_bytes: u64,
    per_octave: u32,
    line_bytes: u64,
) -> Result<Vec<u64>> {
    if min_bytes < line_bytes {
        return Err(CurveError::Sizes(format!(
            "min-size {min_bytes} B is below one line ({line_bytes} B): a cache holds whole lines"
        )));
    }
    let mut out: Vec<u64> = log_sizes(min_bytes, max_bytes, per_octave)?
        .into_iter()
        .map(|s| s / line_bytes.max(1) * line_bytes)
        .collect();
    out.dedup();
    Ok(out)
}

/// Checks that sizes are non-empty and strictly increasing.
pub(crate) fn check_sizes(sizes: &[u64]) -> Result<()> {
    if sizes.is_empty() {
        return Err(CurveError::Sizes("no sizes".into()));
    }
    if sizes.windows(2).any(|w| w[0] >= w[1]) {
        return Err(CurveError::Sizes(
            "sizes must be strictly increasing".into(),
        ));
    }
    Ok(())
}

/// Mean absolute difference of the miss ratios of two curves over their
/// points (which must be at the same sizes): the error measure of the
/// SHARDS paper.
pub fn mean_absolute_error(a: &Curve, b: &Curve) -> Result<f64> {
    if a.sizes_bytes != b.sizes_bytes {
        return Err(CurveError::SizeMismatch);
    }
    if a.is_empty() {
        return Ok(0.0);
    }
    let sum: f64 = (0..a.len())
        .map(|i| (a.miss_ratio(i) - b.miss_ratio(i)).abs())
        .sum();
    Ok(sum / a.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_sizes_are_powers_of_two_at_one_per_octave() {
        let s = log_sizes(1024, 64 << 20, 1).unwrap();
        assert_eq!(s.len(), 17);
        assert_eq!(s[0], 1024);
        assert_eq!(*s.last().unwrap(), 64 << 20);
        assert!(s.windows(2).all(|w| w[1] == 2 * w[0]));
        let s4 = log_sizes(1024, 64 << 20, 4).unwrap();
        assert_eq!(s4.len(), 65);
        assert!(log_sizes(0, 1, 1).is_err());
    }

    #[test]
    fn per_octave_is_bounded() {
        // 2^32 - 1 per octave once asked for 550 GB of sizes.
        let e = log_sizes(1024, 64 << 20, u32::MAX).unwrap_err().to_string();
        assert!(
            e.contains("per-octave 4294967295: expected 1 to 1024"),
            "{e}"
        );
        assert!(log_sizes(1024, 64 << 20, 0).is_err());
        let most = log_sizes(1, u64::MAX, MAX_PER_OCTAVE).unwrap();
        // (fewer: the smallest sizes round to the same bytes)
        assert!(most.len() > 50_000 && most.len() <= 64 * 1024 + 1);
    }

    #[test]
    fn line_sizes_are_whole_lines() {
        // Below one line: refused, not a row for a cache of no line.
        let e = line_sizes(32, 1024, 1, 64).unwrap_err().to_string();
        assert!(e.contains("min-size 32 B is below one line (64 B)"), "{e}");
        // 100 B holds one 64-byte line: listed as the 64 B it is.
        assert_eq!(line_sizes(100, 100, 1, 64).unwrap(), vec![64]);
        // Four per octave from 1 KiB: 1218, 1448, 1722 B round down to
        // 19, 22 and 26 lines.
        assert_eq!(
            line_sizes(1024, 2048, 4, 64).unwrap(),
            vec![1024, 1216, 1408, 1664, 2048]
        );
        // Sizes of the same line count are listed once.
        let fine = line_sizes(1024, 2048, 64, 64).unwrap();
        assert_eq!(fine.len(), 17);
        assert!(fine.iter().all(|s| s % 64 == 0));
        // Whole lines already: the same as log_sizes.
        assert_eq!(
            line_sizes(1024, 64 << 20, 1, 64).unwrap(),
            log_sizes(1024, 64 << 20, 1).unwrap()
        );
    }

    #[test]
    fn rates_and_step_lookup() {
        let c = Curve {
            sizes_bytes: vec![64, 128],
            misses: vec![8, 2],
            accesses: 10,
            instructions: 1000,
        };
        assert_eq!(c.miss_ratios(), vec![0.8, 0.2]);
        assert_eq!(c.mpkis(), Some(vec![8.0, 2.0]));
        assert_eq!(c.miss_ratio_at(10), 1.0);
        assert_eq!(c.miss_ratio_at(100), 0.8);
        assert_eq!(c.miss_ratio_at(1 << 20), 0.2);
        let d = Curve {
            misses: vec![7, 2],
            ..c.clone()
        };
        assert!((mean_absolute_error(&c, &d).unwrap() - 0.05).abs() < 1e-12);
        let json = serde_json::to_string(&c).unwrap();
        assert!(json.contains("\"sizes_bytes\":[64,128]"));
        let back: Curve = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);
    }
}
