//! `kpart`: KPart's hybrid partitioning-sharing (El-Sayed et al., HPCA
//! 2018), as PBBCache runs it (its "variant 0").
//!
//! 1. Every app starts as its own cluster; a cluster's curve is its MPKI
//!    curve.
//! 2. While more than one cluster remains, the distance of every pair
//!    (`i < j` in list order) is computed:
//!    * the *combined* curve: the apps of both clusters share `w` ways, split
//!      among them in proportion to their MPKI ([`split_ways`] on the apps'
//!      own MPKI curves), and the combined MPKI is the sum of each app's MPKI
//!      read at the fractional size it holds;
//!    * the *partitioned* curve: at `w = 1` the combined value; at `w >= 2`,
//!      UCP lookahead splits `w` ways between the two cluster curves and the
//!      two values at their shares are summed;
//!    * distance = sum over `w` of `|combined - partitioned|`.
//!
//!    The first pair with the smallest distance merges; the merged cluster
//!    (apps of the first, then of the second) goes to the FRONT of the list,
//!    its curve is the combined curve, and its apps' IPC and bandwidth tables
//!    are re-read at their fractional shares ([`interpolate`]).
//! 3. For each number of clusters `k = n, n - 1, ..., 1`, ways go to
//!    clusters by lookahead on `1 / (sum of the apps' speedups)`, where an
//!    app's speedup at `w` is `ipc(w) / ipc_alone(round(W / n))` (ties of
//!    the rounding to even, as Python rounds); the score is the sum of the
//!    speedups at the assigned sizes (`-1` when `k > W`). If the platform
//!    has a bandwidth limit `B` and the apps' bandwidth at those sizes sums
//!    above it, each app's speedup is scaled by `1 - bw_i / B` and the
//!    split is recomputed.
//! 4. The best `k` has the largest score; the larger `k` wins ties. Levels
//!    with more clusters than ways are never chosen (PBBCache scores them -1,
//!    which only differs when every feasible score is below -1).
//!
//! The plan lists the clusters in KPart's final list order. The machine then
//! estimates sharing inside each cluster with its own model (PBBCache
//! re-evaluates KPart's answer on MPKC).
//!
//! Distances are cached: merging changes only the pairs with the new
//! cluster, and two surviving clusters never change their relative order.

use crate::lookahead::lookahead;
use crate::{Policy, PolicyError};
use cachepart_machine::share::{interpolate, split_ways};
use cachepart_machine::{AppCurves, Machine, Plan};

/// KPart clustering with lookahead partitioning.
#[derive(Clone, Debug, Default)]
pub struct Kpart;

/// Reads MPKI curve `c` at the fractional 0-based index `x` an app reaches
/// after a shared way is split: the value at `x` ways, linear between way
/// counts, extrapolated below one way (`c(1) + (1 - r)(c(1) - c(2))`, 1 if
/// negative), clamped to the last entry.
#[inline]
fn read_combined(c: &[f64], x: f64) -> f64 {
    let n = c.len();
    let q = x.floor();
    let r = x - q;
    let q = q as usize;
    if q >= n {
        c[n - 1]
    } else if r == 0.0 && q >= 1 {
        c[q - 1]
    } else if q == 0 {
        let c1 = if n > 1 { c[1] } else { c[0] };
        let v = (1.0 - r) * c[0] + r * c1;
        let v = c[0] + (v - c1);
        if v < 0.0 {
            1.0
        } else {
            v
        }
    } else {
        (1.0 - r) * c[q - 1] + r * c[q]
    }
}

/// Lookahead of `total` ways between two curves, without allocating: the
/// same rules as [`lookahead`] for two partitions.
fn lookahead2(a: &[f64], b: &[f64], total: usize) -> (usize, usize) {
    let mut alloc = [1usize, 1];
    let mut avail = total - 2;
    let curves = [a, b];
    while avail > 0 {
        let mut best: Option<(usize, usize, f64)> = None;
        for (i, c) in curves.iter().enumerate() {
            let cur = alloc[i];
            let limit = avail.min(c.len().saturating_sub(cur));
            let mut app_best: Option<(usize, f64)> = None;
            for k in 1..=limit {
                let mu = (c[cur - 1] - c[cur + k - 1]) / k as f64;
                let better = match app_best {
                    None => true,
                    Some((_, m)) => mu > m,
                };
                if mu > 0.0 && better {
                    app_best = Some((k, mu));
                }
            }
            if let Some((k, mu)) = app_best {
                let better = match best {
                    None => true,
                    Some((_, _, m)) => mu > m,
                };
                if better {
                    best = Some((i, k, mu));
                }
            }
        }
        match best {
            Some((i, k, _)) => {
                alloc[i] += k;
                avail -= k;
            }
            None => {
                alloc[0] += avail - avail / 2;
                alloc[1] += avail / 2;
                avail = 0;
            }
        }
    }
    (alloc[0], alloc[1])
}

/// One cluster during the hierarchical merge.
struct KCluster {
    apps: Vec<usize>,
    curve: Vec<f64>,
}

/// The state of one KPart run: original curves, the apps' current
/// (interpolated) IPC and bandwidth tables, the cluster arena and scratch
/// buffers reused across distance computations.
struct Run<'a> {
    curves: &'a [AppCurves],
    w: usize,
    max_bw: Option<f64>,
    /// `1 / ipc(round(W / n))` of each app.
    inv_ref: Vec<f64>,
    /// `ipc[a * w + x]`: app `a`'s IPC at `x + 1` ways of its cluster.
    ipc: Vec<f64>,
    /// Same for bandwidth.
    bw: Vec<f64>,
    arena: Vec<KCluster>,
    /// Cached distance of arena pair `(first, second)` at
    /// `first * cap + second`, NaN if unknown.
    dist: Vec<f64>,
    cap: usize,
    refs: Vec<&'a [f64]>,
    frac: Vec<f64>,
    combined: Vec<f64>,
}

impl<'a> Run<'a> {
    fn new(curves: &'a [AppCurves], w: usize, max_bw: Option<f64>) -> Self {
        let n = curves.len();
        let fair = (w as f64 / n as f64).round_ties_even() as usize;
        let fair = fair.max(1);
        let inv_ref = curves.iter().map(|c| 1.0 / c.ipc[fair - 1]).collect();
        let mut ipc = Vec::with_capacity(n * w);
        let mut bw = Vec::with_capacity(n * w);
        for c in curves {
            ipc.extend_from_slice(&c.ipc[..w]);
            bw.extend_from_slice(&c.bandwidth_mbps[..w]);
        }
        let arena: Vec<KCluster> = curves
            .iter()
            .enumerate()
            .map(|(i, c)| KCluster {
                apps: vec![i],
                curve: c.llcmpki[..w].to_vec(),
            })
            .collect();
        let cap = 2 * n;
        Run {
            curves,
            w,
            max_bw,
            inv_ref,
            ipc,
            bw,
            arena,
            dist: vec![f64::NAN; cap * cap],
            cap,
            refs: Vec::with_capacity(n),
            frac: Vec::with_capacity(n * w),
            combined: vec![0.0; w],
        }
    }

    /// Splits the ways among the apps of clusters `x` then `y` and fills
    /// `frac` (fractional ways per app, per size) and `combined`.
    fn combine(&mut self, x: usize, y: usize) {
        self.refs.clear();
        for &a in self.arena[x].apps.iter().chain(&self.arena[y].apps) {
            self.refs.push(&self.curves[a].llcmpki[..self.w]);
        }
        let m = self.refs.len();
        split_ways(&self.refs, self.w, &mut self.frac);
        for s in 0..self.w {
            let row = &self.frac[s * m..(s + 1) * m];
            self.combined[s] = row
                .iter()
                .zip(&self.refs)
                .map(|(&f, c)| read_combined(c, f))
                .sum();
        }
    }

    /// KPart's distance between clusters `x` and `y` (in that order).
    fn distance(&mut self, x: usize, y: usize) -> f64 {
        let cap = self.cap;
        let cached = self.dist[x * cap + y];
        if !cached.is_nan() {
            return cached;
        }
        self.combine(x, y);
        let (a, b) = (&self.arena[x].curve, &self.arena[y].curve);
        let mut d = 0.0;
        for s in 1..self.w {
            let (wa, wb) = lookahead2(a, b, s + 1);
            d += (self.combined[s] - (a[wa - 1] + b[wb - 1])).abs();
        }
        self.dist[x * cap + y] = d;
        d
    }

    /// Merges clusters `x` and `y` into a new arena cluster; returns its id.
    fn merge(&mut self, x: usize, y: usize) -> usize {
        self.combine(x, y);
        let apps: Vec<usize> = self.arena[x]
            .apps
            .iter()
            .chain(&self.arena[y].apps)
            .copied()
            .collect();
        let m = apps.len();
        let w = self.w;
        for s in 0..w {
            let row = &self.frac[s * m..(s + 1) * m];
            let total: f64 = row.iter().sum();
            for (t, &a) in apps.iter().enumerate() {
                let f = (s + 1) as f64 * row[t] / total;
                let c = &self.curves[a];
                self.ipc[a * w + s] = interpolate(&c.ipc[..w], f);
                self.bw[a * w + s] = interpolate(&c.bandwidth_mbps[..w], f);
            }
        }
        self.arena.push(KCluster {
            apps,
            curve: self.combined.clone(),
        });
        self.arena.len() - 1
    }

    /// App `a`'s speedup at `x + 1` ways, scaled by `scale`.
    #[inline]
    fn speedup(&self, a: usize, x: usize, scale: f64) -> f64 {
        self.ipc[a * self.w + x] * (scale * self.inv_ref[a])
    }

    /// Way counts per cluster of `order` and the score (sum of speedups).
    fn best_partition(&self, order: &[usize]) -> (Vec<usize>, f64) {
        let k = order.len();
        let n = self.curves.len();
        let split = |scale: &[f64]| -> (Vec<usize>, f64) {
            let sizes = if k == 1 {
                vec![self.w]
            } else {
                let inv: Vec<Vec<f64>> = order
                    .iter()
                    .map(|&c| {
                        (0..self.w)
                            .map(|x| {
                                let s: f64 = self.arena[c]
                                    .apps
                                    .iter()
                                    .map(|&a| self.speedup(a, x, scale[a]))
                                    .sum();
                                1.0 / s
                            })
                            .collect()
                    })
                    .collect();
                lookahead(&inv, self.w)
            };
            let mut score = 0.0;
            for (&c, &s) in order.iter().zip(&sizes) {
                for &a in &self.arena[c].apps {
                    score += self.speedup(a, s - 1, scale[a]);
                }
            }
            (sizes, score)
        };
        let ones = vec![1.0; n];
        let (sizes, score) = split(&ones);
        let Some(limit) = self.max_bw else {
            return (sizes, score);
        };
        let mut total = 0.0;
        for (&c, &s) in order.iter().zip(&sizes) {
            for &a in &self.arena[c].apps {
                total += self.bw[a * self.w + s - 1];
            }
        }
        if total <= limit {
            return (sizes, score);
        }
        let factor = total / limit;
        let mut scale = ones;
        for (&c, &s) in order.iter().zip(&sizes) {
            for &a in &self.arena[c].apps {
                scale[a] = 1.0 - (self.bw[a * self.w + s - 1] / total) * factor;
            }
        }
        split(&scale)
    }
}

/// KPart's clusters for `curves` over `ways` ways: `(apps, way count)` in
/// KPart's order. `max_bw` enables the bandwidth scaling. Requires at least
/// one app and curves covering `ways` way counts.
pub fn kpart_clusters(
    curves: &[AppCurves],
    ways: usize,
    max_bw: Option<f64>,
) -> Vec<(Vec<usize>, u32)> {
    let n = curves.len();
    let mut run = Run::new(curves, ways, max_bw);
    let mut order: Vec<usize> = (0..n).collect();
    // Levels with more clusters than ways score -1 in PBBCache and can only
    // win when every feasible level scores below -1 (a bandwidth limit far
    // below the apps' demand makes the scaled speedups negative); they are
    // never taken here, so the plan stays feasible.
    let mut best: Option<(f64, Vec<usize>, Vec<usize>)> = None;
    let mut consider = |order: &[usize], run: &Run| {
        if order.len() > ways {
            return;
        }
        let (sizes, score) = run.best_partition(order);
        let better = match &best {
            None => true,
            Some((b, _, _)) => score > *b,
        };
        if better {
            best = Some((score, order.to_vec(), sizes));
        }
    };
    consider(&order, &run);
    while order.len() > 1 {
        let mut pick: Option<(usize, usize, f64)> = None;
        for i in 0..order.len() {
            for j in i + 1..order.len() {
                let d = run.distance(order[i], order[j]);
                let better = match pick {
                    None => true,
                    Some((_, _, m)) => d < m,
                };
                if better {
                    pick = Some((i, j, d));
                }
            }
        }
        let (i, j, _) = pick.expect("at least one pair");
        let merged = run.merge(order[i], order[j]);
        order.remove(j);
        order.remove(i);
        order.insert(0, merged);
        consider(&order, &run);
    }
    let (_, order, sizes) = best.expect("the one-cluster level is feasible");
    order
        .iter()
        .zip(sizes)
        .map(|(&c, s)| (run.arena[c].apps.clone(), s as u32))
        .collect()
}

impl Policy for Kpart {
    fn name(&self) -> &str {
        "kpart"
    }

    fn decide(&mut self, machine: &mut dyn Machine) -> Result<Plan, PolicyError> {
        let ways = machine.platform().ways as usize;
        let max_bw = machine.platform().max_bandwidth_mbps;
        let curves = machine.alone_curves()?;
        if curves.is_empty() {
            return Err(PolicyError::EmptyMix);
        }
        if ways == 0 || curves.iter().any(|c| c.ways() < ways) {
            return Err(PolicyError::MissingData {
                policy: "kpart".into(),
                what: format!("IPC, MPKI and bandwidth at every way count 1..={ways}"),
            });
        }
        Ok(Plan::from_clusters(kpart_clusters(curves, ways, max_bw)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_testkit::{curves_from_ipc, FixedMachine};
    use proptest::prelude::*;

    #[test]
    fn combined_read_points() {
        let c = [4.0, 2.0, 1.0];
        assert_eq!(read_combined(&c, 1.0), 4.0);
        assert_eq!(read_combined(&c, 2.0), 2.0);
        assert_eq!(read_combined(&c, 3.0), 1.0);
        assert_eq!(read_combined(&c, 7.0), 1.0);
        assert!((read_combined(&c, 1.5) - 3.0).abs() < 1e-12);
        // below one way: 4 + (1 - 0.5) * (4 - 2) = 5
        assert!((read_combined(&c, 0.5) - 5.0).abs() < 1e-12);
        // negative extrapolation reads 1
        assert_eq!(read_combined(&[1.0, 9.0], 0.25), 1.0);
    }

    #[test]
    fn two_apps_of_opposite_needs_are_isolated() {
        // a streaming app (flat, many misses) and a sensitive one
        let w = 8;
        let stream = curves_from_ipc("s", &[0.5; 8], &[30.0; 8]);
        let ipc: Vec<f64> = (1..=w).map(|x| 0.5 + 0.1 * x as f64).collect();
        let mpkc: Vec<f64> = (1..=w).map(|x| 20.0 / x as f64).collect();
        let sens = curves_from_ipc("t", &ipc, &mpkc);
        let mut m = FixedMachine::new(vec![stream, sens], w as u32);
        let p = Kpart.decide(&mut m).unwrap();
        assert_eq!(p.clusters.len(), 2);
        assert_eq!(p.clusters[0].apps, vec![0]);
        assert_eq!(p.clusters[0].mask.0.count_ones(), 1);
        assert_eq!(p.clusters[1].mask.0.count_ones(), 7);
    }

    #[test]
    fn one_app_takes_every_way() {
        let c = curves_from_ipc("a", &[1.0, 1.1, 1.2], &[3.0, 2.0, 1.0]);
        let mut m = FixedMachine::new(vec![c], 3);
        assert_eq!(Kpart.decide(&mut m).unwrap(), Plan::shared_all(1, 3));
        let mut m = FixedMachine::new(vec![], 3);
        assert!(matches!(Kpart.decide(&mut m), Err(PolicyError::EmptyMix)));
    }

    proptest! {
        #[test]
        fn lookahead2_is_lookahead(
            a in proptest::collection::vec(0.0f64..5.0, 11),
            b in proptest::collection::vec(0.0f64..5.0, 11),
            total in 2usize..=11,
        ) {
            let l = lookahead(&[&a[..], &b[..]], total);
            prop_assert_eq!(lookahead2(&a, &b, total), (l[0], l[1]));
        }
    }
}
