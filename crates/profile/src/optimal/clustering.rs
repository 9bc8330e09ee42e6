//! Clustering (`optc-stp`, `optc-unf`, `optc-antt`): which apps share a
//! cluster, and the ways of each cluster.
//!
//! Two searches give the same optimum; they differ in how ties are broken.
//!
//! * Up to [`EMULATE_MAX_APPS`] apps, PBBCache's serial run is replayed
//!   ([`emulate`]): clusterings in its order (for `stp` with its batches of
//!   two deferred clusterings of three or more clusters, which it always
//!   uses for `optc-stp`), each solved by its best-first search from its
//!   `ucp-slowdown` incumbent, the global best replaced only on strictly
//!   better costs. Clusterings that cannot beat the current best (checked
//!   exactly, with cheap bounds first) are skipped, which changes nothing.
//!   If PBBCache's bound (which assumes more ways never hurt) would have
//!   lost the optimum, the first optimal clustering is returned instead.
//! * Above, a parallel branch and bound over PBBCache's enumeration tree
//!   ([`fast`]): the incumbent comes from a dynamic programme over subsets
//!   when the objective is additive over clusters (STP or ANTT, bandwidth
//!   not saturating); node bounds relax each partial clustering per
//!   cluster; it returns the first optimal clustering in PBBCache's
//!   enumeration order (ignoring its batching), whatever the thread count,
//!   with the way counts PBBCache's best-first search picks for it. For
//!   `stp` without a saturating bandwidth model the same clustering is
//!   found by the exact depth-first search of `completion.rs`, which knows
//!   the best value of every subtree and so walks almost straight to it.
//!
//! Bounds under a coupling bandwidth model (saturating `simple`, or
//! `stalls`) use cache-only slowdowns and so assume the bandwidth model
//! never speeds an app up (factors >= 1); no bound is used for unfairness
//! then, and none at all where `simple` may give negative factors
//! ([`Tables::bounds_hold`]).

use super::completion::first_optimal_stp;
use super::heuristic::ucp_clusters;
use super::objective::{Cost, Objective};
use super::partition::compositions;
use super::pbbcache::{best_first, for_each_clustering, Scorer};
use super::progress::Budget;
use super::subset_dp::best_by_subsets;
use super::tables::{Part, Scratch, Tables};
use crate::metrics::round3;
use rayon::prelude::*;
use std::sync::Mutex;

/// Largest mix solved by replaying PBBCache's own search.
pub const EMULATE_MAX_APPS: usize = 8;

/// Slack for bounds computed with another summation order than the exact cost.
const EPS: f64 = 1e-9;

/// A clustering with its way counts.
#[derive(Clone, Debug)]
pub(crate) struct Found {
    /// Clusters (bit `i` = app `i`), in PBBCache's list order.
    pub clusters: Vec<u64>,
    /// Ways per cluster.
    pub ways: Vec<usize>,
    /// Exact cost.
    pub cost: Cost,
}

/// Solves; returns the plan and whether it is proven optimal.
pub(crate) fn solve(t: &Tables, o: Objective, budget: &Budget) -> (Found, bool) {
    if t.n <= EMULATE_MAX_APPS {
        emulate(t, o, budget)
    } else {
        fast(t, o, budget)
    }
}

/// The most optimistic cost of clustering `clusters` at any way split, or
/// `None` if no useful bound is known.
fn clustering_bound(t: &Tables, clusters: &[u64], o: Objective) -> Option<Cost> {
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
fn additive_value(t: &Tables, o: Objective, c: u64, w: usize) -> f64 {
    let (inv, _, _, sum) = t.agg(c, w);
    if o == Objective::Stp {
        inv
    } else {
        -sum
    }
}

/// The cost bound of an additive value bound.
#[inline]
fn additive_cost(t: &Tables, o: Objective, v: f64) -> Cost {
    if o == Objective::Stp {
        Cost(-round3(v + EPS), f64::NEG_INFINITY)
    } else {
        Cost(round3(-v / t.n as f64 - EPS), f64::NEG_INFINITY)
    }
}

/// Max-plus knapsack: the best total of one way count per item (each item
/// at least one way) plus `start[r]` for the `r` ways left, all `ways` used.
fn knapsack<F: Fn(usize) -> f64>(
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
fn split_bound(t: &Tables, parts: &[Part], o: Objective) -> Option<Cost> {
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

/// The best way split of `clusters` that is not strictly worse than
/// `limit` (first in lexicographic order among the best), if any.
pub(crate) fn best_split(
    t: &Tables,
    clusters: &[u64],
    o: Objective,
    limit: Cost,
    sc: &mut Scratch,
    nodes: &mut u64,
) -> Option<(Cost, Vec<usize>)> {
    if let Some(b) = clustering_bound(t, clusters, o) {
        if limit.better(b) {
            return None;
        }
    }
    let mut best: Option<(Cost, Vec<usize>)> = None;
    let mut parts: Vec<Part> = clusters.iter().map(|&c| (c, 0)).collect();
    compositions(t.ways, clusters.len(), &mut Vec::new(), &mut |c| {
        let lim = match &best {
            Some((b, _)) if b.better(limit) => *b,
            _ => limit,
        };
        for (p, &w) in parts.iter_mut().zip(c) {
            p.1 = w;
        }
        if let Some(b) = split_bound(t, &parts, o) {
            if lim.better(b) {
                return true;
            }
        }
        *nodes += 1;
        let cost = t.cost(&parts, o, sc);
        if lim.better(cost) {
            return true;
        }
        if best.as_ref().is_none_or(|(b, _)| cost.better(*b)) {
            best = Some((cost, c.to_vec()));
        }
        true
    });
    best
}

/// PBBCache's per-clustering solve from global best `bcost` (`None` for the
/// first clustering): `ucp-slowdown` incumbent if strictly better, then its
/// best-first search. Returns the cost and split it reports, if any.
fn pbbcache_solve(
    t: &Tables,
    clusters: &[u64],
    o: Objective,
    bcost: Option<Cost>,
    nodes: &mut u64,
) -> (Cost, Option<Vec<usize>>) {
    let mut s = Scorer::new(t, clusters, o);
    if clusters.len() == 1 {
        let c = s.leaf(&[t.ways]);
        *nodes += s.nodes;
        return (c, Some(vec![t.ways]));
    }
    let usol = ucp_clusters(t, clusters);
    let ucost = s.leaf(&usol);
    let (init, isol) = match bcost {
        Some(b) if !ucost.better(b) => (b, None),
        _ => (ucost, Some(usol)),
    };
    let (c, sol) = best_first(&mut s, init);
    *nodes += s.nodes;
    match sol {
        Some(sol) => (c, Some(sol)),
        None => (init, isol),
    }
}

/// Compositions of `ways` into `k` parts (PBBCache's `nsols`), saturating.
fn n_compositions(ways: usize, k: usize) -> u64 {
    // C(ways - 1, k - 1)
    let (n, r) = ((ways - 1) as u64, (k - 1) as u64);
    let r = r.min(n - r);
    let mut c = 1u64;
    for i in 0..r {
        c = c.saturating_mul(n - i) / (i + 1);
    }
    c
}

/// Replays PBBCache's serial `optc-*` run (see the module docs).
pub(crate) fn emulate(t: &Tables, o: Objective, budget: &Budget) -> (Found, bool) {
    // PBBCache always defers clusterings with >= 20 way splits for optc-stp
    // and reduces them in batches of (engines = 2).
    const BATCH: usize = 2;
    const DEFER_FROM: u64 = 20;
    let batched = |k: usize| o == Objective::Stp && n_compositions(t.ways, k) >= DEFER_FROM;
    let mut total = 0u64;
    for_each_clustering(t.n, t.ways, &mut |_| {
        total += 1;
        true
    });
    budget.add_total(total);

    struct State {
        best: Option<Found>,
        /// Best true optimum seen (first in processing order).
        truth: Option<Found>,
        nodes: u64,
        sc: Scratch,
    }
    let mut st = State {
        best: None,
        truth: None,
        nodes: 0,
        sc: Scratch::default(),
    };
    // One clustering solved against `stale` and reduced against the current best.
    let process = |st: &mut State, clusters: &[u64], stale: Option<Cost>| {
        let current = st.best.as_ref().map(|b| b.cost);
        let limit = match (current, &st.truth) {
            (Some(c), Some(tr)) if tr.cost.better(c) => tr.cost,
            (Some(c), _) => c,
            (None, _) => Cost::WORST,
        };
        let mut nodes = 0;
        let opt = best_split(t, clusters, o, limit, &mut st.sc, &mut nodes);
        st.nodes += nodes;
        if let Some((oc, osol)) = &opt {
            if st.truth.as_ref().is_none_or(|tr| oc.better(tr.cost)) {
                st.truth = Some(Found {
                    clusters: clusters.to_vec(),
                    ways: osol.clone(),
                    cost: *oc,
                });
            }
        }
        let can_improve = match (current, &opt) {
            (None, _) => true,
            (Some(c), Some((oc, _))) => oc.better(c),
            _ => false,
        };
        if !can_improve {
            return;
        }
        let (c, sol) = pbbcache_solve(t, clusters, o, stale, &mut st.nodes);
        if let Some(sol) = sol {
            if current.is_none_or(|cur| c.better(cur)) {
                st.best = Some(Found {
                    clusters: clusters.to_vec(),
                    ways: sol,
                    cost: c,
                });
            }
        }
    };
    let mut tasks: Vec<Vec<u64>> = Vec::new();
    let mut seen = 0u64;
    let mut stopped = false;
    for_each_clustering(t.n, t.ways, &mut |clusters| {
        seen += 1;
        if seen & 63 == 0 {
            budget.add_done(64);
            if budget.expired() {
                stopped = true;
                return false;
            }
        }
        if batched(clusters.len()) {
            tasks.push(clusters.to_vec());
            if tasks.len() >= BATCH {
                let stale = st.best.as_ref().map(|b| b.cost);
                for c in std::mem::take(&mut tasks) {
                    process(&mut st, &c, stale);
                }
            }
        } else {
            let stale = st.best.as_ref().map(|b| b.cost);
            process(&mut st, clusters, stale);
        }
        true
    });
    if !stopped {
        let stale = st.best.as_ref().map(|b| b.cost);
        for c in std::mem::take(&mut tasks) {
            process(&mut st, &c, stale);
        }
    }
    budget.add_nodes(st.nodes);
    let best = st.best.expect("the first clustering always sets the best");
    match st.truth {
        Some(tr) if tr.cost.better(best.cost) => (tr, !stopped),
        _ => (best, !stopped),
    }
}

/// Per-node bounds of the enumeration tree: for a partial clustering whose
/// blocks hold the apps `k..n` and free apps `0..k`, each block's best
/// contribution over every way count and every set of free apps it may
/// still absorb (tables indexed by `block >> k`).
struct NodeBounds {
    /// `tables[k][h]` (STP: max; ANTT: min; unfairness: min of max slowdown).
    a: Vec<Vec<f64>>,
    /// Unfairness only: `tables[k][h]` max of min slowdown.
    b: Vec<Vec<f64>>,
    /// Per `k`: the free apps' optimistic total (STP, ANTT), or their
    /// largest low / smallest high slowdown (unfairness).
    free_a: Vec<f64>,
    free_b: Vec<f64>,
    usable: bool,
    /// Additive objectives with the DP table: `mw[k][h * ways + w - 1]`, the
    /// best value of block `h` at `w` ways absorbing any free apps (each
    /// absorbed app counted at its optimistic share), and `gfree[k][r]`,
    /// the best value of the free apps with `r` ways left.
    mw: Vec<Vec<f64>>,
    gfree: Vec<Vec<f64>>,
    /// Unfairness: STP bounds for the tie-breaking second component.
    second: Option<Box<NodeBounds>>,
    /// Unfairness: `hw[k][h * ways + w - 1]`, the smallest max slowdown of
    /// block `h` at exactly `w` ways over every set of free apps it absorbs.
    hw: Vec<Vec<f64>>,
}

impl NodeBounds {
    // indices are app numbers and subset masks, used for several tables
    #[allow(clippy::needless_range_loop)]
    /// Without bounds (`usable` false) if the time limit passes first.
    fn new(t: &Tables, o: Objective, dp: Option<&Dp>, budget: &Budget) -> NodeBounds {
        let n = t.n;
        let usable = t.bounds_hold && !(o == Objective::Unfairness && t.coupled);
        let mut nb = NodeBounds {
            a: Vec::new(),
            b: Vec::new(),
            free_a: vec![0.0; n + 1],
            free_b: vec![0.0; n + 1],
            usable,
            mw: Vec::new(),
            gfree: Vec::new(),
            second: None,
            hw: Vec::new(),
        };
        if !usable {
            return nb;
        }
        if let Some(dp) = dp {
            nb.additive(t, o, dp);
            return nb;
        }
        let lo: Vec<f64> = (0..n).map(|a| t.app_range(a).0).collect();
        let hi: Vec<f64> = (0..n).map(|a| t.app_range(a).1).collect();
        // per-app optimistic share: STP 1/lo, ANTT lo
        let share: Vec<f64> = match o {
            Objective::Stp => lo.iter().map(|l| 1.0 / l).collect(),
            _ => lo.clone(),
        };
        let (init_a, init_b) = match o {
            Objective::Stp => (f64::NEG_INFINITY, 0.0),
            Objective::Antt => (f64::INFINITY, 0.0),
            Objective::Unfairness => (f64::INFINITY, f64::NEG_INFINITY),
        };
        nb.a = (0..=n).map(|k| vec![init_a; 1usize << (n - k)]).collect();
        if o == Objective::Unfairness {
            nb.b = (0..=n).map(|k| vec![init_b; 1usize << (n - k)]).collect();
        }
        let ways = t.ways;
        if o == Objective::Unfairness {
            nb.hw = (0..=n)
                .map(|k| vec![f64::INFINITY; (1usize << (n - k)) * ways])
                .collect();
        }
        for s in 1usize..(1 << n) {
            if s & 4095 == 0 && budget.expired() {
                nb.usable = false;
                return nb;
            }
            let m = s as u64;
            if o == Objective::Unfairness {
                for k in 0..=n {
                    let h = s >> k;
                    if h == 0 {
                        break;
                    }
                    let row = &mut nb.hw[k][h * ways..h * ways + ways];
                    for (w, r) in row.iter_mut().enumerate() {
                        let v = t.agg(m, w + 1).2;
                        if v < *r {
                            *r = v;
                        }
                    }
                }
            }
            let (mut best_a, mut best_b) = (init_a, init_b);
            for w in 1..=ways {
                let (inv, mn, mx, sum) = t.agg(m, w);
                match o {
                    Objective::Stp => best_a = best_a.max(inv),
                    Objective::Antt => best_a = best_a.min(sum),
                    Objective::Unfairness => {
                        best_a = best_a.min(mx);
                        best_b = best_b.max(mn);
                    }
                }
            }
            let mut low = 0.0;
            for k in 0..=n {
                let h = s >> k;
                if h == 0 {
                    break;
                }
                match o {
                    Objective::Stp => {
                        let v = best_a - low;
                        if v > nb.a[k][h] {
                            nb.a[k][h] = v;
                        }
                    }
                    Objective::Antt => {
                        let v = best_a - low;
                        if v < nb.a[k][h] {
                            nb.a[k][h] = v;
                        }
                    }
                    Objective::Unfairness => {
                        nb.a[k][h] = nb.a[k][h].min(best_a);
                        nb.b[k][h] = nb.b[k][h].max(best_b);
                    }
                }
                if k < n && s >> k & 1 == 1 {
                    low += share[k];
                }
            }
        }
        for k in 1..=n {
            match o {
                Objective::Unfairness => {
                    nb.free_a[k] = if k == 1 {
                        lo[0]
                    } else {
                        nb.free_a[k - 1].max(lo[k - 1])
                    };
                    nb.free_b[k] = if k == 1 {
                        hi[0]
                    } else {
                        nb.free_b[k - 1].min(hi[k - 1])
                    };
                }
                _ => nb.free_a[k] = nb.free_a[k - 1] + share[k - 1],
            }
        }
        if o == Objective::Unfairness {
            nb.free_a[0] = f64::NEG_INFINITY;
            nb.free_b[0] = f64::INFINITY;
        }
        nb
    }

    /// The smallest `H` such that every block can keep its max slowdown
    /// within `H` with the ways available (each block at least one way,
    /// all blocks within the cache).
    fn bottleneck(&self, ways: usize, blocks: &[u64], k: usize) -> f64 {
        let tab = &self.hw[k];
        let mut cands: Vec<f64> = Vec::with_capacity(blocks.len() * ways);
        for &b in blocks {
            let h = (b >> k) as usize;
            cands.extend_from_slice(&tab[h * ways..h * ways + ways]);
        }
        cands.sort_unstable_by(f64::total_cmp);
        let feasible = |hcap: f64| {
            let mut used = 0;
            for &b in blocks {
                let h = (b >> k) as usize;
                match tab[h * ways..h * ways + ways]
                    .iter()
                    .position(|&v| v <= hcap)
                {
                    Some(w) => used += w + 1,
                    None => return false,
                }
            }
            used <= ways
        };
        let (mut lo, mut hi) = (0usize, cands.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if feasible(cands[mid]) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        cands.get(lo).copied().unwrap_or(f64::INFINITY)
    }

    /// Budget-aware tables of the additive objectives (see the fields).
    #[allow(clippy::needless_range_loop)]
    fn additive(&mut self, t: &Tables, o: Objective, dp: &Dp) {
        let n = t.n;
        let ways = t.ways;
        let w1 = ways + 1;
        let share: Vec<f64> = (0..n)
            .map(|a| {
                let lo = t.app_range(a).0;
                if o == Objective::Stp {
                    1.0 / lo
                } else {
                    -lo
                }
            })
            .collect();
        self.mw = (0..=n)
            .map(|k| vec![f64::NEG_INFINITY; (1usize << (n - k)) * ways])
            .collect();
        for s in 1usize..(1 << n) {
            let vals: Vec<f64> = (1..=ways)
                .map(|w| additive_value(t, o, s as u64, w))
                .collect();
            let mut low = 0.0;
            for k in 0..=n {
                let h = s >> k;
                if h == 0 {
                    break;
                }
                let row = &mut self.mw[k][h * ways..h * ways + ways];
                for (r, &v) in row.iter_mut().zip(&vals) {
                    let v = v - low;
                    if v > *r {
                        *r = v;
                    }
                }
                if k < n && s >> k & 1 == 1 {
                    low += share[k];
                }
            }
        }
        // gfree[k][r] = sum_{F_k} share + max over Y within F_k of (g[Y][r] - sum_Y share)
        let mut run = vec![f64::NEG_INFINITY; w1];
        let mut free_sum = 0.0;
        self.gfree = Vec::with_capacity(n + 1);
        let mut y_share = vec![0.0f64; 1usize << n];
        for y in 1usize..(1 << n) {
            let low = y.trailing_zeros() as usize;
            y_share[y] = y_share[y & (y - 1)] + share[low];
        }
        for k in 0..=n {
            // add the subsets Y with highest app k - 1 (all Y < 2^k)
            let from = if k == 0 { 0 } else { 1usize << (k - 1) };
            let to = 1usize << k;
            for y in from..to.max(1) {
                for r in 0..w1 {
                    let v = dp.g[y * w1 + r] - y_share[y];
                    if v > run[r] {
                        run[r] = v;
                    }
                }
            }
            if k > 0 {
                free_sum += share[k - 1];
            }
            self.gfree.push(run.iter().map(|v| v + free_sum).collect());
        }
    }

    /// Optimistic cost of every completion of `blocks` (apps `k..n`).
    fn bound(&self, t: &Tables, o: Objective, blocks: &[u64], k: usize) -> Option<Cost> {
        if !self.usable {
            return None;
        }
        if !self.mw.is_empty() {
            let ways = t.ways;
            let tab = &self.mw[k];
            let v = knapsack(
                ways,
                &self.gfree[k],
                blocks.iter().map(|&b| {
                    let h = (b >> k) as usize;
                    move |w: usize| tab[h * ways + w - 1]
                }),
            );
            return Some(additive_cost(t, o, v));
        }
        let tab = &self.a[k];
        Some(match o {
            Objective::Stp => {
                let ub: f64 =
                    blocks.iter().map(|&b| tab[(b >> k) as usize]).sum::<f64>() + self.free_a[k];
                Cost(-round3(ub + EPS), f64::NEG_INFINITY)
            }
            Objective::Antt => {
                let lb: f64 =
                    blocks.iter().map(|&b| tab[(b >> k) as usize]).sum::<f64>() + self.free_a[k];
                Cost(round3(lb / t.n as f64 - EPS), f64::NEG_INFINITY)
            }
            Objective::Unfairness => {
                let tb = &self.b[k];
                let mut hi = self.free_a[k];
                let mut lo = self.free_b[k];
                for &b in blocks {
                    hi = hi.max(tab[(b >> k) as usize]);
                    lo = lo.min(tb[(b >> k) as usize]);
                }
                hi = hi.max(self.bottleneck(t.ways, blocks, k));
                let second = self
                    .second
                    .as_ref()
                    .and_then(|s| s.bound(t, Objective::Stp, blocks, k))
                    .map_or(f64::NEG_INFINITY, |c| c.0);
                Cost(round3(hi / lo - EPS), second)
            }
        })
    }
}

/// The dynamic programme of the additive objectives: `g[S * (ways + 1) + w]`
/// = best value of apps `S` in exactly `w` ways.
pub(crate) struct Dp {
    pub g: Vec<f64>,
}

/// Best plan of the additive objectives (STP, ANTT) by dynamic programming
/// over subsets: `g[S][w]` = best value of apps `S` in exactly `w` ways,
/// the cluster holding the lowest app of `S` chosen first.
fn dp_incumbent(t: &Tables, o: Objective, budget: &Budget) -> Option<(Vec<Part>, Dp)> {
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
fn improve(t: &Tables, o: Objective, inc: &mut Found, budget: &Budget) {
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

/// The best cost any thread has found (for pruning only).
struct SharedBest(Mutex<Cost>);

impl SharedBest {
    fn get(&self) -> Cost {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn offer(&self, c: Cost) {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if c.better(*g) {
            *g = c;
        }
    }
}

struct Search<'s, 't, 'a> {
    t: &'s Tables<'a>,
    o: Objective,
    nb: &'s NodeBounds,
    global: &'s SharedBest,
    budget: &'s Budget<'s>,
    _p: std::marker::PhantomData<&'t ()>,
}

struct Local {
    best: Option<Found>,
    sc: Scratch,
    nodes: u64,
    stopped: bool,
}

impl Search<'_, '_, '_> {
    fn limit(&self, local: &Local) -> Cost {
        let g = self.global.get();
        match &local.best {
            Some(b) if !g.better(b.cost) => b.cost,
            _ => g,
        }
    }

    fn walk(&self, app: isize, blocks: &mut Vec<u64>, local: &mut Local) {
        if local.stopped {
            return;
        }
        local.nodes += 1;
        // the flag at every node (cheap), the clock now and then
        if self.budget.was_expired() || (local.nodes & 1023 == 0 && self.budget.expired()) {
            local.stopped = true;
            return;
        }
        if app < 0 {
            let limit = self.limit(local);
            let mut nodes = 0;
            if let Some((c, w)) =
                best_split(self.t, blocks, self.o, limit, &mut local.sc, &mut nodes)
            {
                if local.best.as_ref().is_none_or(|b| c.better(b.cost)) {
                    self.global.offer(c);
                    local.best = Some(Found {
                        clusters: blocks.clone(),
                        ways: w,
                        cost: c,
                    });
                }
            }
            local.nodes += nodes;
            return;
        }
        let k = app as usize + 1;
        if let Some(b) = self.nb.bound(self.t, self.o, blocks, k) {
            if self.limit(local).better(b) {
                return;
            }
        }
        let bit = 1u64 << app;
        for i in 0..blocks.len() {
            blocks[i] |= bit;
            self.walk(app - 1, blocks, local);
            blocks[i] &= !bit;
        }
        if blocks.len() < self.t.ways {
            blocks.insert(0, bit);
            self.walk(app - 1, blocks, local);
            blocks.remove(0);
        }
    }
}

/// Prefixes of the enumeration tree at which the search splits into
/// parallel subtrees, in enumeration order: (blocks, next app to place).
fn prefixes(n: usize, ways: usize, placed: usize) -> Vec<Vec<u64>> {
    fn rec(app: isize, stop: isize, blocks: &mut Vec<u64>, ways: usize, out: &mut Vec<Vec<u64>>) {
        if app < stop {
            out.push(blocks.clone());
            return;
        }
        let bit = 1u64 << app;
        for i in 0..blocks.len() {
            blocks[i] |= bit;
            rec(app - 1, stop, blocks, ways, out);
            blocks[i] &= !bit;
        }
        if blocks.len() < ways {
            blocks.insert(0, bit);
            rec(app - 1, stop, blocks, ways, out);
            blocks.remove(0);
        }
    }
    let mut out = Vec::new();
    let mut blocks = vec![1u64 << (n - 1)];
    rec(
        n as isize - 2,
        (n - placed) as isize,
        &mut blocks,
        ways,
        &mut out,
    );
    out
}

/// Parallel branch and bound over PBBCache's enumeration tree (module docs).
pub(crate) fn fast(t: &Tables, o: Objective, budget: &Budget) -> (Found, bool) {
    fast_with(t, o, budget, true)
}

/// [`fast`], optionally without the exact STP search of `completion.rs`
/// (`exact = false`: the general branch and bound, for tests).
fn fast_with(t: &Tables, o: Objective, budget: &Budget, exact: bool) -> (Found, bool) {
    let n = t.n;
    let mut sc = Scratch::default();
    // Incumbent: the DP plan when available, else the better of one shared
    // cluster and the first clustering's PBBCache solve.
    let mut incumbent: Option<Found> = None;
    let mut consider = |parts: Vec<Part>, sc: &mut Scratch| {
        let cost = t.cost(&parts, o, sc);
        if incumbent.as_ref().is_none_or(|b| cost.better(b.cost)) {
            incumbent = Some(Found {
                clusters: parts.iter().map(|p| p.0).collect(),
                ways: parts.iter().map(|p| p.1).collect(),
                cost,
            });
        }
    };
    let all = (1u64 << n) - 1;
    consider(vec![(all, t.ways)], &mut sc);
    let mut dp = None;
    if let Some((parts, table)) = dp_incumbent(t, o, budget) {
        consider(parts, &mut sc);
        if o == Objective::Stp && exact {
            // The exact search knows every subtree's value (completion.rs).
            let (found, done) = first_optimal_stp(t, &table, budget);
            match found {
                Some(best) => return (with_pbbcache_ways(t, o, best, budget), done),
                None if !done => {
                    return (incumbent.expect("the DP plan is an incumbent"), false);
                }
                None => {} // not expected: fall back to the general search
            }
        }
        dp = Some(table);
    }
    let mut stp_dp = None;
    if o == Objective::Unfairness && !t.coupled {
        if let Some((parts, table)) = dp_incumbent(t, Objective::Stp, budget) {
            consider(parts, &mut sc);
            stp_dp = Some(table);
        }
    }
    let mut incumbent = incumbent.expect("one cluster is always a plan");
    improve(t, o, &mut incumbent, budget);
    let global = SharedBest(Mutex::new(incumbent.cost));
    let mut nb = NodeBounds::new(t, o, dp.as_ref(), budget);
    if let Some(table) = &stp_dp {
        nb.second = Some(Box::new(NodeBounds::new(
            t,
            Objective::Stp,
            Some(table),
            budget,
        )));
    }
    let placed = n.min(6);
    let roots = prefixes(n, t.ways, placed);
    budget.add_total(roots.len() as u64);
    let search = Search {
        t,
        o,
        nb: &nb,
        global: &global,
        budget,
        _p: std::marker::PhantomData,
    };
    let results: Vec<Local> = roots
        .into_par_iter()
        .map(|mut blocks| {
            let mut local = Local {
                best: None,
                sc: Scratch::default(),
                nodes: 0,
                stopped: false,
            };
            search.walk(n as isize - 1 - placed as isize, &mut blocks, &mut local);
            budget.add_done(1);
            local
        })
        .collect();
    let mut best: Option<Found> = None;
    let mut stopped = false;
    for r in results {
        budget.add_nodes(r.nodes);
        stopped |= r.stopped;
        if let Some(f) = r.best {
            if best.as_ref().is_none_or(|b| f.cost.better(b.cost)) {
                best = Some(f);
            }
        }
    }
    let best = match best {
        Some(b) if !incumbent.cost.better(b.cost) => b,
        _ => return (incumbent, false),
    };
    (with_pbbcache_ways(t, o, best, budget), !stopped)
}

/// `best` with the way counts PBBCache's per-clustering search picks for
/// its clustering, when they are optimal too.
fn with_pbbcache_ways(t: &Tables, o: Objective, best: Found, budget: &Budget) -> Found {
    let mut nodes = 0;
    let (c, sol) = pbbcache_solve(t, &best.clusters, o, None, &mut nodes);
    budget.add_nodes(nodes);
    match sol {
        Some(ways) if c == best.cost => Found { ways, ..best },
        _ => best,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composition_counts() {
        assert_eq!(n_compositions(11, 1), 1);
        assert_eq!(n_compositions(11, 2), 10);
        assert_eq!(n_compositions(11, 3), 45);
        assert_eq!(n_compositions(11, 6), 252);
        assert_eq!(n_compositions(11, 11), 1);
    }

    /// The parallel search finds the same optimum as the replay of
    /// PBBCache (checked against brute force in `tests/optimal_oracle.rs`).
    #[test]
    fn fast_search_agrees_with_replay() {
        use crate::bandwidth::BwModel;
        use crate::model::ModelConfig;
        use cachepart_machine::AppCurves;
        let mut x = 12345u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 10_000) as f64 / 10_000.0
        };
        for case in 0..12 {
            let n = 3 + case % 5;
            let ways = 5 + case % 4;
            let apps: Vec<AppCurves> = (0..n)
                .map(|i| {
                    let sens = rnd() * 1.2;
                    let base = 0.3 + 2.0 * rnd();
                    let m1 = 1.0 + 30.0 * rnd();
                    let ipc: Vec<f64> = (1..=ways)
                        .map(|w| {
                            base * (1.0 + sens * (w as f64).ln()) * (1.0 + 0.1 * (rnd() - 0.5))
                        })
                        .collect();
                    let mpkc: Vec<f64> = (1..=ways)
                        .map(|w| m1 / (1.0 + sens * (w as f64 - 1.0)) + 0.05)
                        .collect();
                    let bw: Vec<f64> = mpkc.iter().map(|m| m * 150.0).collect();
                    AppCurves::new(&format!("a{i}"), ipc, mpkc.clone(), mpkc, bw)
                })
                .collect();
            let mix = crate::Mix::from_curves(apps).unwrap();
            let peak: f64 = mix.apps.iter().map(|a| a.curves.bandwidth_mbps[0]).sum();
            for max_bw in [None, Some(0.6 * peak)] {
                let cfg = ModelConfig {
                    bw_model: BwModel::Simple,
                    max_bw_mbps: max_bw,
                };
                let t = Tables::new(&mix, &cfg, true, &Budget::new(None, None)).unwrap();
                for o in Objective::ALL {
                    let b = Budget::new(None, None);
                    let (e, pe) = emulate(&t, o, &b);
                    let (f, pf) = fast(&t, o, &b);
                    assert!(pe && pf);
                    assert_eq!(e.cost, f.cost, "case {case} {max_bw:?} {}", o.name());
                }
            }
        }
    }

    /// Random apps over `ways` ways (some duplicated, for ties).
    fn random_mix(n: usize, ways: usize, seed: u64) -> crate::Mix {
        use cachepart_machine::AppCurves;
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 10_000) as f64 / 10_000.0
        };
        let mut apps: Vec<AppCurves> = Vec::new();
        for i in 0..n {
            if i > 0 && rnd() < 0.2 {
                let j = (rnd() * i as f64) as usize;
                apps.push(apps[j].clone());
                continue;
            }
            let sens = rnd() * 1.2;
            let base = 0.3 + 2.0 * rnd();
            let m1 = 1.0 + 30.0 * rnd();
            let ipc: Vec<f64> = (1..=ways)
                .map(|w| base * (1.0 + sens * (w as f64).ln()) * (1.0 + 0.1 * (rnd() - 0.5)))
                .collect();
            let mpkc: Vec<f64> = (1..=ways)
                .map(|w| m1 / (1.0 + sens * (w as f64 - 1.0)) + 0.05)
                .collect();
            let bw: Vec<f64> = mpkc.iter().map(|m| m * 150.0).collect();
            apps.push(AppCurves::new(
                &format!("a{i}"),
                ipc,
                mpkc.clone(),
                mpkc,
                bw,
            ));
        }
        crate::Mix::from_curves(apps).unwrap()
    }

    /// The exact STP search (`completion.rs`) returns exactly the plan of
    /// the general branch and bound, which it replaces; under a bandwidth
    /// maximum only the sum of peaks exceeds, the exact coupling check
    /// lets it run and the plan is still the same.
    #[test]
    fn exact_stp_search_matches_general_search() {
        use crate::bandwidth::BwModel;
        use crate::model::ModelConfig;
        let mut exact_uncoupled = 0;
        for case in 0..24u64 {
            let n = 6 + (case % 5) as usize;
            let ways = [11, 8, 6][(case % 3) as usize];
            let mix = random_mix(n, ways, case + 1);
            let peak: f64 = mix
                .apps
                .iter()
                .map(|a| super::super::tables::peak_value(&a.curves.bandwidth_mbps))
                .sum();
            for max_bw in [None, Some(0.9 * peak), Some(0.5 * peak)] {
                let cfg = ModelConfig {
                    bw_model: BwModel::Simple,
                    max_bw_mbps: max_bw,
                };
                let b = Budget::new(None, None);
                let t = Tables::new(&mix, &cfg, true, &b).unwrap();
                if max_bw.is_some() && !t.coupled {
                    exact_uncoupled += 1;
                }
                let (e, pe) = fast_with(&t, Objective::Stp, &b, true);
                let (g, pg) = fast_with(&t, Objective::Stp, &b, false);
                assert!(pe && pg);
                let what = format!("case {case} n {n} ways {ways} {max_bw:?}");
                assert_eq!(e.cost, g.cost, "{what}");
                assert_eq!(e.clusters, g.clusters, "{what}");
                assert_eq!(e.ways, g.ways, "{what}");
                if n <= EMULATE_MAX_APPS {
                    assert_eq!(emulate(&t, Objective::Stp, &b).0.cost, e.cost, "{what}");
                }
            }
        }
        assert!(
            exact_uncoupled > 0,
            "the exact coupling check was not exercised"
        );
    }

    #[test]
    fn prefixes_cover_the_tree_in_order() {
        let p = prefixes(4, 11, 2);
        assert_eq!(p, vec![vec![0b1100], vec![0b0100, 0b1000]]);
        assert_eq!(prefixes(6, 11, 6).len(), 203);
    }
}
