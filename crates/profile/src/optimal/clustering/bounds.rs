//! Bounds of one clustering (over every way split) and of one way split,
//! from the per-cluster aggregates of [`Tables`], and the max-plus knapsack
//! they and the node bounds share.

use super::EPS;
use crate::metrics::round3;
use crate::optimal::objective::{Cost, Objective};
use crate::optimal::tables::{Part, Tables};

/// The most optimistic cost of clustering `clusters` at any way split, or
/// `None` if no useful bound is known.
pub(super) fn clustering_bound(t: &Tables, clusters: &[u64], o: Objective) -> Option<Cost> {
    if !t.bounds_hold {
        return None;
    }
    let k = clusters.len();
    let wmax = t.ways + 1 - k;
    match o {
        Objective::Stp | Objective::Antt => {
            let v = knapsack(
                t.ways,
                &[0.0],
                clusters
                    .iter()
                    .map(|&c| move |w: usize| additive_value(t, o, c, w)),
            );
            Some(additive_cost(t, o, v))
        }
        Objective::Unfairness if !t.coupled => {
            let mut hi = f64::MIN;
            let mut lo = f64::MAX;
            for &c in clusters {
                hi = hi.max((1..=wmax).map(|w| t.agg(c, w).2).fold(f64::MAX, f64::min));
                lo = lo.min((1..=wmax).map(|w| t.agg(c, w).1).fold(f64::MIN, f64::max));
            }
            let stp = knapsack(
                t.ways,
                &[0.0],
                clusters.iter().map(|&c| move |w: usize| t.agg(c, w).0),
            );
            Some(Cost(round3(hi / lo - EPS), -round3(stp + EPS)))
        }
        Objective::Unfairness => None,
    }
}

/// A cluster's value for the additive objectives, larger is better:
/// sum of 1/slowdown (STP) or minus the sum of slowdowns (ANTT).
#[inline]
pub(super) fn additive_value(t: &Tables, o: Objective, c: u64, w: usize) -> f64 {
    let (inv, _, _, sum) = t.agg(c, w);
    if o == Objective::Stp {
        inv
    } else {
        -sum
    }
}

/// The cost bound of an additive value bound.
#[inline]
pub(super) fn additive_cost(t: &Tables, o: Objective, v: f64) -> Cost {
    if o == Objective::Stp {
        Cost(-round3(v + EPS), f64::NEG_INFINITY)
    } else {
        Cost(round3(-v / t.n as f64 - EPS), f64::NEG_INFINITY)
    }
}

/// Max-plus knapsack: the best total of one way count per item (each item
/// at least one way) plus `start[r]` for the `r` ways left, all `ways` used.
pub(super) fn knapsack<F: Fn(usize) -> f64>(
    ways: usize,
    start: &[f64],
    items: impl Iterator<Item = F>,
) -> f64 {
    let mut cur = [f64::NEG_INFINITY; 65];
    let mut next = [f64::NEG_INFINITY; 65];
    for (r, &v) in start.iter().enumerate().take(ways + 1) {
        cur[r] = v;
    }
    for item in items {
        let vals: [f64; 65] = std::array::from_fn(|a| {
            if a >= 1 && a <= ways {
                item(a)
            } else {
                f64::NEG_INFINITY
            }
        });
        for w in 0..=ways {
            let mut b = f64::NEG_INFINITY;
            for a in 1..=w {
                let v = cur[w - a] + vals[a];
                if v > b {
                    b = v;
                }
            }
            next[w] = b;
        }
        std::mem::swap(&mut cur, &mut next);
    }
    cur[ways]
}

/// The most optimistic cost of one way split, from the aggregates.
#[inline]
pub(super) fn split_bound(t: &Tables, parts: &[Part], o: Objective) -> Option<Cost> {
    if !t.bounds_hold {
        return None;
    }
    match o {
        Objective::Stp => {
            let s: f64 = parts.iter().map(|&(c, w)| t.agg(c, w).0).sum();
            Some(Cost(-round3(s + EPS), f64::NEG_INFINITY))
        }
        Objective::Antt => {
            let s: f64 = parts.iter().map(|&(c, w)| t.agg(c, w).3).sum();
            Some(Cost(round3(s / t.n as f64 - EPS), f64::NEG_INFINITY))
        }
        Objective::Unfairness if !t.coupled => {
            let mut hi = f64::MIN;
            let mut lo = f64::MAX;
            for &(c, w) in parts {
                let (_, l, h, _) = t.agg(c, w);
                hi = hi.max(h);
                lo = lo.min(l);
            }
            // max and min are the exact slowdowns: this first component is exact
            let stp: f64 = parts.iter().map(|&(c, w)| t.agg(c, w).0).sum();
            Some(Cost(round3(hi / lo), -round3(stp + EPS)))
        }
        Objective::Unfairness => None,
    }
}
