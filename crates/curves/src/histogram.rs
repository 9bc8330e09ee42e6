//! [`StackHistogram`]: the exact LRU stack-distance histogram of a trace,
//! which gives the misses of a fully associative LRU cache at every size.

use serde::{Deserialize, Serialize};

use crate::curve::{check_sizes, Curve};
use crate::error::{CurveError, Result};
use crate::options::Totals;

/// How many references had each stack distance.
///
/// A reference at distance `d` (`d` other distinct lines touched since the
/// previous reference to its line) hits in a fully associative LRU cache
/// of more than `d` lines and misses otherwise; a first reference (`cold`)
/// misses at every size. So the misses of a cache of `n` lines are
/// `cold + sum(counts[n..])`, for every `n` at once (LRU's inclusion
/// property, Mattson et al. 1970).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackHistogram {
    /// Line size in bytes.
    pub line_bytes: u64,
    /// `counts[d]`: references at stack distance `d`.
    pub counts: Vec<u64>,
    /// First references to a line.
    pub cold: u64,
    /// Line references of the trace.
    pub accesses: u64,
    /// Instructions of the trace.
    pub instructions: u64,
}

impl StackHistogram {
    pub(crate) fn new(line_bytes: u64, mut counts: Vec<u64>, cold: u64, totals: Totals) -> Self {
        while counts.last() == Some(&0) {
            counts.pop();
        }
        StackHistogram {
            line_bytes,
            counts,
            cold,
            accesses: totals.accesses,
            instructions: totals.instructions,
        }
    }

    /// Distinct lines of the trace (its footprint in lines).
    pub fn distinct_lines(&self) -> u64 {
        self.cold
    }

    /// Misses of a fully associative LRU cache of `lines` lines.
    pub fn misses_at_lines(&self, lines: u64) -> u64 {
        let from = usize::try_from(lines).unwrap_or(usize::MAX);
        self.cold + self.counts.get(from..).map_or(0, |c| c.iter().sum())
    }

    /// Misses at every size from 0 lines up to the largest distance + 1
    /// lines (beyond which only cold misses remain): element `n` is the
    /// misses of an `n`-line cache.
    pub fn misses_by_lines(&self) -> Vec<u64> {
        let mut out = vec![0; self.counts.len() + 1];
        let mut acc = self.cold;
        out[self.counts.len()] = acc;
        for d in (0..self.counts.len()).rev() {
            acc += self.counts[d];
            out[d] = acc;
        }
        out
    }

    /// The curve at `sizes_bytes` (strictly increasing); a size that is
    /// not a whole number of lines is rounded down.
    pub fn curve(&self, sizes_bytes: &[u64]) -> Result<Curve> {
        check_sizes(sizes_bytes)?;
        let by_lines = self.misses_by_lines();
        let misses = sizes_bytes
            .iter()
            .map(|&s| {
                let n = usize::try_from(s / self.line_bytes).unwrap_or(usize::MAX);
                by_lines.get(n).copied().unwrap_or(self.cold)
            })
            .collect();
        Ok(Curve {
            sizes_bytes: sizes_bytes.to_vec(),
            misses,
            accesses: self.accesses,
            instructions: self.instructions,
        })
    }

    /// The curve at every size from one line to the footprint, in lines.
    pub fn curve_every_line(&self) -> Curve {
        let by_lines = self.misses_by_lines();
        let top = (self.distinct_lines() as usize)
            .max(1)
            .max(by_lines.len() - 1);
        let sizes: Vec<u64> = (1..=top as u64).map(|n| n * self.line_bytes).collect();
        let misses = (1..=top)
            .map(|n| by_lines.get(n).copied().unwrap_or(self.cold))
            .collect();
        Curve {
            sizes_bytes: sizes,
            misses,
            accesses: self.accesses,
            instructions: self.instructions,
        }
    }

    /// Adds another histogram of the same line size (say, of another
    /// thread's trace measured separately).
    pub fn merge(&mut self, other: &StackHistogram) -> Result<()> {
        if other.line_bytes != self.line_bytes {
            return Err(CurveError::LineSize(other.line_bytes));
        }
        if self.counts.len() < other.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.cold += other.cold;
        self.accesses += other.accesses;
        self.instructions += other.instructions;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misses_are_suffix_sums() {
        let totals = Totals {
            accesses: 10,
            instructions: 20,
        };
        let h = StackHistogram::new(64, vec![4, 0, 2, 0, 0], 4, totals);
        assert_eq!(h.counts, vec![4, 0, 2]);
        assert_eq!(h.misses_by_lines(), vec![10, 6, 6, 4]);
        assert_eq!(h.misses_at_lines(0), 10);
        assert_eq!(h.misses_at_lines(2), 6);
        assert_eq!(h.misses_at_lines(1000), 4);
        let c = h.curve(&[64, 128, 192, 1 << 20]).unwrap();
        assert_eq!(c.misses, vec![6, 6, 4, 4]);
        let all = h.curve_every_line();
        assert_eq!(all.sizes_bytes, vec![64, 128, 192, 256]);
        assert_eq!(all.misses, vec![6, 6, 4, 4]);
        assert!(h.curve(&[128, 64]).is_err());
    }
}
