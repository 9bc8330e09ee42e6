//! The parallel search's incumbent: the best plan of the additive
//! objectives by dynamic programming over subsets, and a local search that
//! improves any plan one app move at a time.

use super::bounds::additive_value;
use super::split::best_split;
use super::Found;
use crate::optimal::objective::Objective;
use crate::optimal::progress::Budget;
use crate::optimal::subset_dp::best_by_subsets;
use crate::optimal::tables::{Part, Scratch, Tables};

/// The dynamic programme of the additive objectives: `g[S * (ways + 1) + w]`
/// = best value of apps `S` in exactly `w` ways.
pub(crate) struct Dp {
    pub g: Vec<f64>,
}

/// Best plan of the additive objectives (STP, ANTT) by dynamic programming
/// over subsets: `g[S][w]` = best value of apps `S` in exactly `w` ways,
/// the cluster holding the lowest app of `S` chosen first.
pub(super) fn dp_incumbent(t: &Tables, o: Objective, budget: &Budget) -> Option<(Vec<Part>, Dp)> {
    if t.coupled || o == Objective::Unfairness {
        return None;
    }
    let n = t.n;
    let ways = t.ways;
    let w1 = ways + 1;
    let val = |m: u64, w: usize| additive_value(t, o, m, w);
    let full = (1usize << n) - 1;
    let g = best_by_subsets(n, ways, val, budget)?;
    if !g[full * w1 + ways].is_finite() {
        return None;
    }
    // reconstruct
    let mut parts = Vec::new();
    let (mut s, mut w) = (full, ways);
    while s != 0 {
        let target = g[s * w1 + w];
        let low = s & s.wrapping_neg();
        let rest = s ^ low;
        let mut sub = rest;
        let mut found = None;
        'search: loop {
            let tm = sub | low;
            let rm = s ^ tm;
            for a in 1..=w {
                if val(tm as u64, a) + g[rm * w1 + w - a] == target {
                    found = Some((tm, a));
                    break 'search;
                }
            }
            if sub == 0 {
                break;
            }
            sub = (sub - 1) & rest;
        }
        let (tm, a) = found?;
        parts.push((tm as u64, a));
        s ^= tm;
        w -= a;
    }
    Some((parts, Dp { g }))
}

/// Local search on an incumbent: move one app to another cluster or to a
/// cluster of its own (best way split each time) while that helps.
pub(super) fn improve(t: &Tables, o: Objective, inc: &mut Found, budget: &Budget) {
    let mut sc = Scratch::default();
    let mut nodes = 0u64;
    loop {
        let mut better: Option<Found> = None;
        for a in 0..t.n {
            if budget.expired() {
                break;
            }
            let bit = 1u64 << a;
            let from = inc
                .clusters
                .iter()
                .position(|&c| c & bit != 0)
                .expect("every app is placed");
            let k = inc.clusters.len();
            for to in 0..=k {
                if to == from || (to == k && inc.clusters[from] == bit) || (to == k && k == t.ways)
                {
                    continue;
                }
                let mut cl = inc.clusters.clone();
                cl[from] &= !bit;
                if to == k {
                    cl.push(bit);
                } else {
                    cl[to] |= bit;
                }
                cl.retain(|&c| c != 0);
                let limit = better.as_ref().map_or(inc.cost, |b| b.cost);
                if let Some((c, w)) = best_split(t, &cl, o, limit, &mut sc, &mut nodes) {
                    if c.better(limit) {
                        better = Some(Found {
                            clusters: cl,
                            ways: w,
                            cost: c,
                        });
                    }
                }
            }
        }
        match better {
            Some(b) => *inc = b,
            None => break,
        }
        if budget.was_expired() {
            break;
        }
    }
    budget.add_nodes(nodes);
}
