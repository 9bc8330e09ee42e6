//! Working-set patterns (cache-sensitive and light): 8-byte accesses to
//! lines of a working set, chosen uniformly, by a zipf law, or by chasing
//! a random cyclic permutation.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::zipf::Zipf;
use super::{invalid, Distribution};
use crate::error::Result;

/// Most lines a working set may have (pointer chasing keeps a table).
const MAX_LINES: u64 = 1 << 28;

enum Pick {
    Uniform,
    Zipf { zipf: Zipf, mult: u64 },
    Chase { next: Vec<u32>, cur: u32 },
}

/// State of a working-set pattern.
pub(super) struct WorkingSet {
    base: u64,
    lines: u64,
    line_shift: u32,
    words_per_line: u64,
    pick: Pick,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl WorkingSet {
    pub(super) fn new(
        base: u64,
        bytes: u64,
        line: u32,
        dist: Distribution,
        exponent: f64,
    ) -> Result<WorkingSet> {
        let lines = bytes / u64::from(line);
        if lines == 0 || lines > MAX_LINES {
            return Err(invalid(format!(
                "working set of {bytes} bytes must hold 1..={MAX_LINES} lines"
            )));
        }
        let pick = match dist {
            Distribution::Uniform => Pick::Uniform,
            Distribution::Zipf => {
                if !(exponent.is_finite() && exponent > 0.0) {
                    return Err(invalid(format!(
                        "zipf-exponent {exponent} must be positive"
                    )));
                }
                // Scatter ranks over the set: multiply by a unit mod `lines`.
                let mut mult = (lines as f64 * 0.618_033_988_7) as u64 | 1;
                while gcd(mult, lines) != 1 {
                    mult += 2;
                }
                Pick::Zipf {
                    zipf: Zipf::new(lines, exponent),
                    mult: mult % lines.max(2),
                }
            }
            // The table is built lazily on the first draw (it needs the rng).
            Distribution::PointerChase => Pick::Chase {
                next: Vec::new(),
                cur: 0,
            },
        };
        Ok(WorkingSet {
            base,
            lines,
            line_shift: line.trailing_zeros(),
            words_per_line: u64::from(line / 8).max(1),
            pick,
        })
    }

    /// Whether it chases pointers (each access reads the line the
    /// previous one pointed to).
    pub(super) fn chases(&self) -> bool {
        matches!(self.pick, Pick::Chase { .. })
    }

    #[inline]
    pub(super) fn next(&mut self, rng: &mut ChaCha8Rng) -> (u64, u32) {
        let lines = self.lines;
        let line = match &mut self.pick {
            Pick::Uniform => rng.gen_range(0..lines),
            Pick::Zipf { zipf, mult } => {
                let rank = zipf.sample(rng) - 1;
                ((u128::from(rank) * u128::from(*mult)) % u128::from(lines)) as u64
            }
            Pick::Chase { next, cur } => {
                if next.is_empty() {
                    *next = cycle(lines as u32, rng);
                }
                *cur = next[*cur as usize];
                u64::from(*cur)
            }
        };
        let word = rng.gen_range(0..self.words_per_line);
        let size = if self.words_per_line == 1 {
            1 << self.line_shift.min(3)
        } else {
            8
        };
        (self.base + (line << self.line_shift) + word * 8, size)
    }
}

/// A random single cycle through 0..n (Sattolo's shuffle).
fn cycle(n: u32, rng: &mut ChaCha8Rng) -> Vec<u32> {
    let mut order: Vec<u32> = (0..n).collect();
    for i in (1..n as usize).rev() {
        let j = rng.gen_range(0..i);
        order.swap(i, j);
    }
    // `order` is a cyclic permutation as a successor table.
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn sattolo_gives_one_cycle() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let next = cycle(1000, &mut rng);
        let mut seen = vec![false; 1000];
        let mut cur = 0u32;
        for _ in 0..1000 {
            assert!(!seen[cur as usize]);
            seen[cur as usize] = true;
            cur = next[cur as usize];
        }
        assert_eq!(cur, 0);
    }
}
