//! What the exact search optimises: the three objectives and their
//! comparable, rounded costs.
//!
//! Costs are compared as PBBCache compares them: on values rounded to three
//! decimals ([`round3`]), so that plans whose metrics agree to three
//! decimals tie. Every cost is a pair compared lexicographically, lower
//! better:
//!
//! | objective | first | second (tie-break) |
//! |---|---|---|
//! | `stp` | `-round3(STP)` | none |
//! | `unf` | `round3(max/min slowdown)` | `-round3(STP)` |
//! | `antt` | `round3(mean slowdown)` | `-round3(STP)` |
//!
//! ANTT is not in PBBCache; it is defined like unfairness (rounded, ties
//! broken by the higher STP) so that its ties are as predictable.

use crate::metrics::round3;
#[cfg(test)]
use cachepart_units::Kind as _;

/// The metric an exact solver optimises; its kebab-case names (`stp`,
/// `unf`, `antt`) are those of `opt-stp`, `optc-unf`, and `unfairness` is
/// read as `unf`.
#[cachepart_units::kind]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Objective {
    /// Maximise system throughput (sum of 1/slowdown), rounded to 3 decimals.
    Stp,
    /// Minimise unfairness (max/min slowdown), then maximise STP.
    #[strum(to_string = "unf", serialize = "unfairness")]
    Unfairness,
    /// Minimise ANTT (mean slowdown), then maximise STP.
    Antt,
}

/// A rounded, comparable cost: lexicographic, lower is better.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Cost(pub f64, pub f64);

impl Cost {
    /// Worse than every real cost.
    pub const WORST: Cost = Cost(f64::INFINITY, f64::INFINITY);

    /// True if `self` is strictly better than `other`.
    #[inline]
    pub fn better(self, other: Cost) -> bool {
        self.0 < other.0 || (self.0 == other.0 && self.1 < other.1)
    }

    /// The key PBBCache sorts its best-first queue by (ascending): the
    /// objective value itself, i.e. STP for `stp` and the pair otherwise.
    #[inline]
    pub fn raw_key(self, objective: Objective) -> (f64, f64) {
        match objective {
            Objective::Stp => (-self.0, 0.0),
            _ => (self.0, self.1),
        }
    }
}

/// Unrounded metrics of one slowdown vector, summed exactly as
/// [`MixMetrics::compute`](crate::MixMetrics::compute) sums them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawMetrics {
    pub stp: f64,
    pub antt: f64,
    pub unfairness: f64,
}

impl RawMetrics {
    /// From slowdowns in mix order.
    #[inline]
    pub fn of(slowdown: &[f64]) -> RawMetrics {
        let n = slowdown.len() as f64;
        let stp: f64 = slowdown.iter().map(|s| 1.0 / s).sum();
        let sum: f64 = slowdown.iter().sum();
        let max = slowdown.iter().copied().fold(f64::MIN, f64::max);
        let min = slowdown.iter().copied().fold(f64::MAX, f64::min);
        RawMetrics {
            stp,
            antt: sum / n,
            unfairness: max / min,
        }
    }

    /// The rounded cost under `objective`.
    #[inline]
    pub fn cost(self, objective: Objective) -> Cost {
        match objective {
            Objective::Stp => Cost(-round3(self.stp), 0.0),
            Objective::Unfairness => Cost(round3(self.unfairness), -round3(self.stp)),
            Objective::Antt => Cost(round3(self.antt), -round3(self.stp)),
        }
    }
}

/// Rounded cost of a slowdown vector (mix order).
#[inline]
pub(crate) fn cost_of(slowdown: &[f64], objective: Objective) -> Cost {
    RawMetrics::of(slowdown).cost(objective)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for o in Objective::all() {
            assert_eq!(Objective::from_name(o.name()), Some(o));
        }
        assert_eq!(Objective::from_name("x"), None);
        assert_eq!(Objective::names(), ["stp", "unf", "antt"]);
        assert_eq!(
            Objective::from_name("unfairness"),
            Some(Objective::Unfairness)
        );
    }

    #[test]
    fn rounding_creates_ties_and_tie_breaks() {
        // STP 5.6971 and 5.6969 both round to 5.697: a tie.
        let a = Cost(-round3(5.6971), 0.0);
        let b = Cost(-round3(5.6969), 0.0);
        assert!(!a.better(b) && !b.better(a));
        // Unfairness ties are broken by the higher STP.
        let u1 = Cost(1.081, -5.697);
        let u2 = Cost(1.081, -5.696);
        assert!(u1.better(u2));
        assert!(Cost(1.080, 0.0).better(u1));
        assert_eq!(a.raw_key(Objective::Stp).0, 5.697);
    }

    #[test]
    fn metrics_match_mix_metrics() {
        let s = [1.11045, 1.00697, 1.09484, 1.04132, 1.31772, 1.02608];
        let r = RawMetrics::of(&s);
        let m = crate::MixMetrics::compute(&s, &[1.0; 6]);
        assert_eq!(r.stp, m.stp);
        assert_eq!(r.antt, m.antt);
        assert_eq!(r.unfairness, m.unfairness);
    }
}
