//! Per-node bounds of the parallel search's enumeration tree: tables over
//! every subset of apps, built once, so that a partial clustering is
//! bounded by a few lookups (and a knapsack for the additive objectives).

use super::bounds::{additive_cost, additive_value, knapsack};
use super::incumbent::Dp;
use super::EPS;
use crate::metrics::round3;
use crate::optimal::objective::{Cost, Objective};
use crate::optimal::progress::Budget;
use crate::optimal::tables::Tables;

/// Per-node bounds of the enumeration tree: for a partial clustering whose
/// blocks hold the apps `k..n` and free apps `0..k`, each block's best
/// contribution over every way count and every set of free apps it may
/// still absorb (tables indexed by `block >> k`).
pub(super) struct NodeBounds {
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
    pub(super) second: Option<Box<NodeBounds>>,
    /// Unfairness: `hw[k][h * ways + w - 1]`, the smallest max slowdown of
    /// block `h` at exactly `w` ways over every set of free apps it absorbs.
    hw: Vec<Vec<f64>>,
}

impl NodeBounds {
    // indices are app numbers and subset masks, used for several tables
    #[allow(clippy::needless_range_loop)]
    /// Without bounds (`usable` false) if the time limit passes first.
    pub(super) fn new(t: &Tables, o: Objective, dp: Option<&Dp>, budget: &Budget) -> NodeBounds {
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
    pub(super) fn bound(&self, t: &Tables, o: Objective, blocks: &[u64], k: usize) -> Option<Cost> {
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
