//! Every way split of a strict partitioning, scanned fast.
//!
//! When no bandwidth model couples the apps ([`Tables::coupled`] false),
//! an app alone in its cluster has the slowdown of its own table at its
//! way count, so every composition of the ways can be scored from per-app
//! lookups and prefix aggregates (sum of 1/slowdown, sum, max, min), summed
//! in mix order exactly as [`RawMetrics::of`] sums them: the costs are
//! bit-identical to [`Tables::cost`]. Compositions are visited in
//! lexicographic order without allocating.

use crate::optimal::objective::{Cost, Objective, RawMetrics};
use crate::optimal::progress::Budget;
use crate::optimal::tables::Tables;
use cachepart_machine::share::interpolate;

/// Largest number of compositions scanned this way.
pub(crate) const FAST_MAX: u64 = 100_000;

/// Number of compositions of `ways` into `parts` positive parts,
/// `C(ways - 1, parts - 1)`, saturating at `u64::MAX` (also the number of
/// ways to split any `ways` ordered items into `parts` non-empty runs).
pub fn count(ways: usize, parts: usize) -> u64 {
    if parts == 0 || parts > ways {
        return u64::from(parts == 0 && ways == 0);
    }
    let (n, k) = ((ways - 1) as u128, (parts - 1).min(ways - parts) as u128);
    let mut c: u128 = 1;
    for i in 0..k {
        c = c * (n - i) / (i + 1);
        if c > u64::MAX as u128 {
            return u64::MAX;
        }
    }
    c as u64
}

/// The optimum over the compositions scanned.
pub(crate) struct Optima {
    /// Best cost seen (`Cost::WORST` if none).
    pub cost: Cost,
    /// The first and the last composition (lexicographic order) of that cost.
    pub first: Vec<usize>,
    pub last: Vec<usize>,
    /// Compositions scored.
    pub count: u64,
    /// False if the time limit stopped the scan.
    pub complete: bool,
}

impl Optima {
    pub fn new(n: usize) -> Optima {
        Optima {
            cost: Cost::WORST,
            first: Vec::with_capacity(n),
            last: Vec::with_capacity(n),
            count: 0,
            complete: true,
        }
    }

    /// Records composition `c` of cost `cost`.
    #[inline]
    pub fn see(&mut self, cost: Cost, c: &[usize]) {
        if cost.better(self.cost) {
            self.cost = cost;
            self.first.clear();
            self.first.extend_from_slice(c);
            self.last.clear();
            self.last.extend_from_slice(c);
        } else if !self.cost.better(cost) {
            self.last.clear();
            self.last.extend_from_slice(c);
        }
    }
}

/// Cache-only slowdown of each app alone at `w` ways, index `a * ways + w - 1`,
/// as [`Tables::cost`] computes it for a single-app cluster.
pub(crate) fn alone_slowdowns(t: &Tables) -> Vec<f64> {
    let mut sd = Vec::with_capacity(t.n * t.ways);
    for app in &t.mix.apps {
        for w in 1..=t.ways {
            sd.push(interpolate(&app.curves.slowdown, w as f64));
        }
    }
    sd
}

/// True if PBBCache's bounds can never exceed the cost of a completion:
/// apps uncoupled, and every app's slowdown finite, positive and
/// non-increasing in its ways (`sd` from [`alone_slowdowns`]).
pub(crate) fn bounds_exact(t: &Tables, sd: &[f64]) -> bool {
    !t.coupled
        && sd.chunks(t.ways).all(|c| {
            c.iter().all(|s| s.is_finite() && *s > 0.0) && c.windows(2).all(|p| p[1] <= p[0])
        })
}

/// Scores every composition of `t.ways` into `t.n` parts (apps uncoupled,
/// `t.n >= 1`); `sd` from [`alone_slowdowns`].
pub(crate) fn scan(t: &Tables, sd: &[f64], objective: Objective, budget: &Budget) -> Optima {
    debug_assert!(!t.coupled);
    let n = t.n;
    let ways = t.ways;
    let mut out = Optima::new(n);
    if n == 0 || n > ways {
        return out;
    }
    if n == 1 {
        let s = sd[ways - 1];
        out.count = 1;
        out.see(RawMetrics::of(&[s]).cost(objective), &[ways]);
        return out;
    }
    let inv: Vec<f64> = sd.iter().map(|s| 1.0 / s).collect();
    // the neutral element `Iterator::sum` starts from
    let zero: f64 = std::iter::empty::<f64>().sum();
    let nf = n as f64;
    let last = n - 1;
    // the last two apps are enumerated by the inner loop, the others here
    let base = last - 1;
    let mut p = Prefix {
        inv: vec![zero; n],
        sum: vec![zero; n],
        max: vec![f64::MIN; n],
        min: vec![f64::MAX; n],
        rem: vec![ways; n],
    };
    let mut w = vec![1usize; n];
    let at = |a: usize, k: usize| a * ways + k - 1;
    let mut cut = cutoff(out.cost, objective);
    for i in 0..base {
        p.set(i, 1, at(i, 1), sd, &inv);
    }
    loop {
        let (q_inv, q_sum, q_max, q_min, r) = (
            p.inv[base],
            p.sum[base],
            p.max[base],
            p.min[base],
            p.rem[base],
        );
        for a in 1..r {
            let (jb, jl) = (at(base, a), at(last, r - a));
            let (sb, sl) = (sd[jb], sd[jl]);
            out.count += 1;
            if out.count & 4095 == 0 && budget.expired() {
                out.complete = false;
                return out;
            }
            // rounding only when the leaf may tie or beat the best
            let worse = match objective {
                Objective::Stp => q_inv + inv[jb] + inv[jl] < cut,
                // max / min > cut, without dividing: the product's rounding
                // is far below the cutoff's margin
                Objective::Unfairness => {
                    let min = q_min.min(sb).min(sl);
                    min > 0.0 && q_max.max(sb).max(sl) > cut * min
                }
                Objective::Antt => (q_sum + sb + sl) / nf > cut,
            };
            if worse {
                continue;
            }
            let raw = RawMetrics {
                stp: q_inv + inv[jb] + inv[jl],
                antt: (q_sum + sb + sl) / nf,
                unfairness: q_max.max(sb).max(sl) / q_min.min(sb).min(sl),
            };
            w[base] = a;
            w[last] = r - a;
            out.see(raw.cost(objective), &w);
            cut = cutoff(out.cost, objective);
        }
        // next prefix: the deepest app before `base` that can take one
        // more way, the later ones back to one way
        let mut i = base;
        loop {
            if i == 0 {
                return out;
            }
            i -= 1;
            if w[i] + (last - i) < p.rem[i] {
                break;
            }
        }
        w[i] += 1;
        p.set(i, w[i], at(i, w[i]), sd, &inv);
        for (j, wj) in w.iter_mut().enumerate().take(base).skip(i + 1) {
            *wj = 1;
            p.set(j, 1, at(j, 1), sd, &inv);
        }
    }
}

/// Aggregates of the apps before each position of a composition, and the
/// ways left from it on.
struct Prefix {
    inv: Vec<f64>,
    sum: Vec<f64>,
    max: Vec<f64>,
    min: Vec<f64>,
    rem: Vec<usize>,
}

impl Prefix {
    /// App `i` takes `w` ways; `j` indexes its slowdown at `w` ways.
    #[inline(always)]
    fn set(&mut self, i: usize, w: usize, j: usize, sd: &[f64], inv: &[f64]) {
        let s = sd[j];
        self.inv[i + 1] = self.inv[i] + inv[j];
        self.sum[i + 1] = self.sum[i] + s;
        self.max[i + 1] = self.max[i].max(s);
        self.min[i + 1] = self.min[i].min(s);
        self.rem[i + 1] = self.rem[i] - w;
    }
}

/// PBBCache's depth-first search ([`dfs`](crate::optimal::pbbcache::dfs))
/// replayed on uncoupled apps from per-app lookups: the same nodes in the
/// same order, the same bounds and leaf costs to the bit, so the same
/// answer. Returns the best cost and way counts found strictly better
/// than `default`, if any, and the nodes evaluated. Needs `2 <= t.n <=
/// t.ways`; `sd` from [`alone_slowdowns`].
pub(crate) fn dfs(
    t: &Tables,
    sd: &[f64],
    objective: Objective,
    default: Cost,
) -> (Cost, Option<Vec<usize>>, u64) {
    debug_assert!(!t.coupled && t.n >= 2 && t.n <= t.ways);
    let k = t.n;
    let zero: f64 = std::iter::empty::<f64>().sum();
    let mut d = Dfs {
        ways: t.ways,
        k,
        sd,
        inv: sd.iter().map(|s| 1.0 / s).collect(),
        objective,
        w: vec![1; k],
        p_inv: vec![zero; k + 1],
        p_sum: vec![zero; k + 1],
        p_max: vec![f64::MIN; k + 1],
        p_min: vec![f64::MAX; k + 1],
        best: default,
        sol: None,
        nodes: 0,
    };
    if t.ways == k {
        // the only split, returned as it is (PBBCache's shortcut)
        let c = d.leaf_ones(0);
        return (c, Some(vec![1; k]), 1);
    }
    d.go(0, t.ways);
    (d.best, d.sol, d.nodes)
}

struct Dfs<'s> {
    ways: usize,
    k: usize,
    sd: &'s [f64],
    inv: Vec<f64>,
    objective: Objective,
    /// Way counts of the current prefix.
    w: Vec<usize>,
    /// Aggregates of apps `0..i` of the prefix: index `i`.
    p_inv: Vec<f64>,
    p_sum: Vec<f64>,
    p_max: Vec<f64>,
    p_min: Vec<f64>,
    best: Cost,
    sol: Option<Vec<usize>>,
    nodes: u64,
}

impl Dfs<'_> {
    /// Sets app `i`'s way count to `a` and its prefix aggregates.
    #[inline]
    fn set(&mut self, i: usize, a: usize) {
        self.w[i] = a;
        let j = i * self.ways + a - 1;
        let s = self.sd[j];
        self.p_inv[i + 1] = self.p_inv[i] + self.inv[j];
        self.p_sum[i + 1] = self.p_sum[i] + s;
        self.p_max[i + 1] = self.p_max[i].max(s);
        self.p_min[i + 1] = self.p_min[i].min(s);
    }

    /// Unrounded metrics of the prefix `0..len` completed by `fill` ways
    /// for every later app: a leaf when `bound` is false, PBBCache's bound
    /// otherwise (for unfairness, the minimum over the prefix only).
    fn raw(&mut self, len: usize, fill: usize, bound: bool) -> RawMetrics {
        self.nodes += 1;
        let (mut stp, mut sum, mut max, mut min) = (
            self.p_inv[len],
            self.p_sum[len],
            self.p_max[len],
            self.p_min[len],
        );
        for a in len..self.k {
            let j = a * self.ways + fill - 1;
            let s = self.sd[j];
            stp += self.inv[j];
            sum += s;
            max = max.max(s);
            if !bound {
                min = min.min(s);
            }
        }
        RawMetrics {
            stp,
            antt: sum / self.k as f64,
            unfairness: max / min,
        }
    }

    /// Exact cost, as [`Dfs::raw`].
    fn cost(&mut self, len: usize, fill: usize, bound: bool) -> Cost {
        self.raw(len, fill, bound).cost(self.objective)
    }

    /// Whether the first part of `raw`'s rounded cost is surely below
    /// (`Less`) or above (`Greater`) that of the best cost, if it is sure.
    #[inline]
    fn side(&self, raw: &RawMetrics) -> Option<std::cmp::Ordering> {
        let k = match self.objective {
            Objective::Stp => -raw.stp,
            Objective::Unfairness => raw.unfairness,
            Objective::Antt => raw.antt,
        };
        let c = self.best.0;
        let margin = 0.0005 + 1e-9 * (1.0 + c.abs());
        if k < c - margin {
            Some(std::cmp::Ordering::Less)
        } else if k > c + margin {
            Some(std::cmp::Ordering::Greater)
        } else {
            None
        }
    }

    /// Leaf: the prefix `0..len` and one way for every later app.
    fn leaf_ones(&mut self, len: usize) -> Cost {
        self.cost(len, 1, false)
    }

    /// Records the leaf of cost `c` (current prefix of length `len`
    /// completed by `fill` ways each) if strictly better.
    fn offer(&mut self, c: Cost, len: usize, fill: usize) {
        if c.better(self.best) {
            self.best = c;
            let mut sol = self.w[..len].to_vec();
            sol.resize(self.k, fill);
            self.sol = Some(sol);
        }
    }

    /// Children of a prefix of length `level` with `nw` ways left
    /// (`level < k - 1`, `nw > k - level`).
    fn go(&mut self, level: usize, nw: usize) {
        let k = self.k;
        for a in 1..=nw - (k - level - 1) {
            self.set(level, a);
            let rem = nw - a;
            let len = level + 1;
            let fill = rem - (k - len - 1);
            // rounding only when the comparison needs it
            let b = self.raw(len, fill, true);
            let pruned = match self.side(&b) {
                Some(o) => o == std::cmp::Ordering::Greater,
                None => self.best.better(b.cost(self.objective)),
            };
            if pruned {
                continue;
            }
            if len == k - 1 || rem == k - len {
                let fill = if len == k - 1 { rem } else { 1 };
                let c = self.raw(len, fill, false);
                if self.side(&c) != Some(std::cmp::Ordering::Greater) {
                    self.offer(c.cost(self.objective), len, fill);
                }
            } else {
                self.go(len, rem);
            }
        }
    }
}

/// The raw value past which a leaf is strictly worse than cost `c`
/// whatever the rounding: `round3` moves a value by at most 0.0005 (plus a
/// rounding error far below the margin). For `stp` leaves below the cutoff
/// are worse, for the others leaves above it.
#[inline]
fn cutoff(c: Cost, objective: Objective) -> f64 {
    let margin = 0.0005 + 1e-9 * (1.0 + c.0.abs());
    match objective {
        Objective::Stp => -c.0 - margin,
        _ => c.0 + margin,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_binomials() {
        assert_eq!(count(11, 1), 1);
        assert_eq!(count(11, 6), 252);
        assert_eq!(count(11, 11), 1);
        assert_eq!(count(4, 5), 0);
        assert_eq!(count(0, 0), 1);
        assert_eq!(count(64, 32), 916_312_070_471_295_267);
    }
}
