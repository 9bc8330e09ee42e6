//! The first STP-optimal clustering in PBBCache's enumeration order, by a
//! depth-first search that knows the exact value of every subtree.
//!
//! Without a saturating bandwidth model the unrounded STP of a plan is the
//! sum over its clusters of their members' `1/slowdown`, so the dynamic
//! programme over subsets of [`Dp`] gives the optimum `v*` exactly, and
//! rounding (monotone) maps it to the optimal rounded STP. A node of the
//! enumeration tree fixes how the apps `k..n` are grouped (its blocks) and
//! leaves the apps `0..k` free: every completion adds to each block a set
//! of free apps and groups the rest into new clusters. The best completion
//! value is computed exactly, block after block, as a max-plus convolution
//! over subsets of the free apps and way counts:
//!
//! `H_0[Y][w] = g[Y][w]`, `H_j[Y][w] = max_{X ⊆ Y, a >= 1}
//! value(B_j ∪ X, a) + H_{j-1}[Y \ X][w - a]`, completion value
//! `H_m[free][ways]`.
//!
//! The search visits children in enumeration order and enters a child only
//! if its completion value can still round to the optimum, so it walks
//! almost straight to the first optimal clustering (ties within `EPS` of a
//! rounding boundary cost a few extra nodes, never a wrong answer: leaves
//! are confirmed with the exact cost).

use super::clustering::{best_split, Dp, Found};
use super::objective::{Cost, Objective};
use super::progress::Budget;
use super::tables::{Scratch, Tables};
use crate::metrics::round3;
use rayon::prelude::*;

/// Slack for sums taken in another order than the exact cost's.
const EPS: f64 = 1e-9;

/// Exact completion values of partial clusterings (STP, uncoupled).
struct Completion<'s, 'a> {
    t: &'s Tables<'a>,
    g: &'s [f64],
    budget: &'s Budget<'s>,
    sc: Scratch,
    nodes: u64,
    stopped: bool,
}

impl Completion<'_, '_> {
    /// Best unrounded STP over every completion of `blocks` (the clusters
    /// of apps `k..n`) with the free apps `0..k`; `None` if time ran out.
    fn value(&self, blocks: &[u64], k: usize) -> Option<f64> {
        let ways = self.t.ways;
        let w1 = ways + 1;
        let size = 1usize << k;
        let free = size - 1;
        let Some((&last, first)) = blocks.split_last() else {
            return Some(self.g[free * w1 + ways]);
        };
        let mut h: Vec<f64> = self.g[..size * w1].to_vec();
        for &b in first {
            if self.budget.expired() {
                return None;
            }
            let rows: Vec<[f64; 65]> = (0..size)
                .into_par_iter()
                .with_min_len(64)
                .map(|y| {
                    if y & 255 == 0 && self.budget.expired() {
                        [f64::NEG_INFINITY; 65]
                    } else {
                        self.row(b, y, &h)
                    }
                })
                .collect();
            if self.budget.was_expired() {
                return None;
            }
            for (y, r) in rows.iter().enumerate() {
                h[y * w1..y * w1 + w1].copy_from_slice(&r[..w1]);
            }
        }
        // the last block: only every free app and every way
        let mut best = f64::NEG_INFINITY;
        let mut x = free;
        loop {
            let vals = self.t.inv_sums(last | x as u64);
            let prev = &h[(free ^ x) * w1..(free ^ x) * w1 + w1];
            for a in 1..=ways {
                let v = vals[a - 1] + prev[ways - a];
                if v > best {
                    best = v;
                }
            }
            if x == 0 {
                break;
            }
            x = (x - 1) & free;
        }
        Some(best)
    }

    /// `H_j[y][·]` for block `b` from `H_{j-1}` = `h`.
    fn row(&self, b: u64, y: usize, h: &[f64]) -> [f64; 65] {
        let ways = self.t.ways;
        let w1 = ways + 1;
        let mut row = [f64::NEG_INFINITY; 65];
        let mut x = y;
        loop {
            let vals = self.t.inv_sums(b | x as u64);
            let prev = &h[(y ^ x) * w1..(y ^ x) * w1 + w1];
            // the rest needs at least one way per app-free cluster: skip
            // the leading impossible entries
            let lead = prev.iter().position(|v| v.is_finite()).unwrap_or(w1);
            for a in 1..=ways.saturating_sub(lead) {
                let va = vals[a - 1];
                for (bb, &pv) in prev.iter().enumerate().take(w1 - a).skip(lead) {
                    let v = va + pv;
                    if v > row[a + bb] {
                        row[a + bb] = v;
                    }
                }
            }
            if x == 0 {
                break;
            }
            x = (x - 1) & y;
        }
        row
    }

    /// The first clustering below `blocks` (next app to place: `app`) whose
    /// best way split rounds to `target` STP or better.
    fn walk(&mut self, app: isize, blocks: &mut Vec<u64>, target: f64) -> Option<Found> {
        self.nodes += 1;
        let t = self.t;
        if app < 0 {
            let limit = Cost(-target, 0.0);
            let mut nodes = 0;
            let found = best_split(t, blocks, Objective::Stp, limit, &mut self.sc, &mut nodes);
            self.nodes += nodes;
            return found.map(|(cost, ways)| Found {
                clusters: blocks.clone(),
                ways,
                cost,
            });
        }
        let bit = 1u64 << app;
        let k = app as usize;
        let child = |me: &mut Self, blocks: &mut Vec<u64>| -> Option<Found> {
            if k > 0 {
                match me.value(blocks, k) {
                    None => {
                        me.stopped = true;
                        return None;
                    }
                    Some(v) if round3(v + EPS) < target => return None,
                    Some(_) => {}
                }
            }
            me.walk(app - 1, blocks, target)
        };
        for i in 0..blocks.len() {
            blocks[i] |= bit;
            let r = child(self, blocks);
            blocks[i] &= !bit;
            if r.is_some() || self.stopped {
                return r;
            }
        }
        if blocks.len() < t.ways {
            blocks.insert(0, bit);
            let r = child(self, blocks);
            blocks.remove(0);
            return r;
        }
        None
    }
}

/// The first clustering in PBBCache's enumeration order whose best way
/// split has the optimal rounded STP, with that split (the first in
/// lexicographic order among its best), and whether the search finished.
/// Needs the STP table of [`Dp`] (no saturating bandwidth model).
pub(crate) fn first_optimal_stp(t: &Tables, dp: &Dp, budget: &Budget) -> (Option<Found>, bool) {
    let n = t.n;
    let full = (1usize << n) - 1;
    let v = dp.g[full * (t.ways + 1) + t.ways];
    let mut c = Completion {
        t,
        g: &dp.g,
        budget,
        sc: Scratch::default(),
        nodes: 0,
        stopped: false,
    };
    // The optimum rounds to one of these (two only when `v` lies within
    // EPS of a rounding boundary); the higher is tried first.
    let (hi, lo) = (round3(v + EPS), round3(v - EPS));
    let mut found = None;
    for target in [hi, lo] {
        let mut blocks = vec![1u64 << (n - 1)];
        found = c.walk(n as isize - 2, &mut blocks, target);
        if found.is_some() || c.stopped {
            break;
        }
    }
    budget.add_nodes(c.nodes);
    (found, !c.stopped)
}
