//! `dunn`: clustering on the fraction of cycles stalled on L2 misses, with
//! the number of clusters chosen by the Dunn index and overlapping way masks
//! (after Selfa et al., PACT 2017). `docs/policies/dunn.md` records how this
//! reading of the paper was reached and what could not be confirmed.
//!
//! 1. Each app's stall fraction `stalls_l2_miss` at all ways is min-max
//!    normalised to `[0, 1]` over the mix. If every app has the same value,
//!    one cluster holds every app and every way.
//! 2. For each `k = 2..=min(n - 1, max_clusters)` (just `k = 2` when
//!    `n = 2`), the optimal 1-D k-means clustering is computed exactly
//!    (dynamic programming over the sorted values, so deterministic; on
//!    ties the earlier split wins). Its Dunn index is the smallest gap
//!    between neighbouring clusters over the largest cluster diameter
//!    (infinite when every diameter is 0). The largest index wins; the
//!    smaller `k` wins ties.
//! 3. Clusters are ordered by decreasing centroid `x`; each gets
//!    `round(f(x))` ways clamped to `1..=W`, with the exponential fits
//!    `f(x) = 19.26833327 e^(0.67431637 x) - 17.72167744` for 20 ways and
//!    `f(x) = 4.09659516 e^(1.19540837 x) - 2.48157709` for 11 ways; for any
//!    other `W` the 20-way fit scaled by `W / 20`. Ways still unassigned
//!    (when the counts sum below `W`) go one at a time to the clusters from
//!    the lowest centroid upward, cyclically.
//! 4. Masks are contiguous and may overlap: clusters are placed in order,
//!    alternately from the left and from the right, each starting at the
//!    first (from that side) way that the fewest masks so far hold, shifted
//!    inward when it would not fit.

use crate::{Policy, PolicyError};
use cachepart_machine::{AppCurves, Cluster, Machine, Plan, ShareModel};
use cachepart_units::WayMask;

/// Dunn-index clustering on L2-miss stall fractions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dunn {
    /// Largest number of clusters tried (default 8).
    pub max_clusters: usize,
}

impl Default for Dunn {
    fn default() -> Self {
        Dunn { max_clusters: 8 }
    }
}

/// Ways for a cluster whose normalised centroid is `x`, on `ways` ways.
pub fn ways_for_centroid(x: f64, ways: u32) -> u32 {
    let f = match ways {
        20 => 19.26833327 * (0.67431637 * x).exp() - 17.72167744,
        11 => 4.09659516 * (1.19540837 * x).exp() - 2.48157709,
        w => (19.26833327 * (0.67431637 * x).exp() - 17.72167744) * f64::from(w) / 20.0,
    };
    (f.round().max(1.0) as u32).min(ways)
}

/// Optimal 1-D k-means of sorted `v` for every `k` in `1..=kmax`: returns
/// `cuts[k]`, the start indices of clusters `1..k` (cluster 0 starts at 0).
fn kmeans_1d(v: &[f64], kmax: usize) -> Vec<Vec<usize>> {
    let n = v.len();
    let mut s1 = vec![0.0; n + 1];
    let mut s2 = vec![0.0; n + 1];
    for (i, &x) in v.iter().enumerate() {
        s1[i + 1] = s1[i] + x;
        s2[i + 1] = s2[i] + x * x;
    }
    // sum of squared deviations of v[i..j]
    let sse = |i: usize, j: usize| {
        let m = (j - i) as f64;
        let s = s1[j] - s1[i];
        (s2[j] - s2[i] - s * s / m).max(0.0)
    };
    // cost[k][j]: best cost of v[..j] in k clusters; from[k][j]: last start
    let mut cost = vec![vec![f64::INFINITY; n + 1]; kmax + 1];
    let mut from = vec![vec![0usize; n + 1]; kmax + 1];
    cost[0][0] = 0.0;
    for k in 1..=kmax {
        for j in k..=n {
            for i in (k - 1)..j {
                let c = cost[k - 1][i] + sse(i, j);
                if c < cost[k][j] {
                    cost[k][j] = c;
                    from[k][j] = i;
                }
            }
        }
    }
    let mut out = vec![Vec::new(); kmax + 1];
    for (k, cuts) in out.iter_mut().enumerate().skip(1) {
        let mut j = n;
        for kk in (1..=k).rev() {
            let i = from[kk][j];
            if kk > 1 {
                cuts.push(i);
            }
            j = i;
        }
        cuts.reverse();
    }
    out
}

/// Dunn index of sorted `v` cut at `cuts`: smallest gap between
/// neighbouring clusters over the largest diameter.
fn dunn_index(v: &[f64], cuts: &[usize]) -> f64 {
    let mut bounds = Vec::with_capacity(cuts.len() + 2);
    bounds.push(0);
    bounds.extend_from_slice(cuts);
    bounds.push(v.len());
    let mut gap = f64::INFINITY;
    let mut diam: f64 = 0.0;
    for c in 0..bounds.len() - 1 {
        let (lo, hi) = (bounds[c], bounds[c + 1]);
        diam = diam.max(v[hi - 1] - v[lo]);
        if hi < v.len() {
            gap = gap.min(v[hi] - v[hi - 1]);
        }
    }
    if diam == 0.0 {
        f64::INFINITY
    } else {
        gap / diam
    }
}

/// Places contiguous masks of `sizes` ways on `ways` ways, alternately from
/// the left and from the right, each where the fewest masks overlap.
pub fn place_overlapping(sizes: &[u32], ways: u32) -> Vec<WayMask> {
    let w = ways as usize;
    let mut count = vec![0u32; w];
    let mut out = Vec::with_capacity(sizes.len());
    for (i, &s) in sizes.iter().enumerate() {
        let s = s.clamp(1, ways) as usize;
        let from_left = i % 2 == 0;
        let min = *count.iter().min().expect("at least one way");
        let start = if from_left {
            let first = count.iter().position(|&c| c == min).unwrap_or(0);
            first.min(w - s)
        } else {
            let last = count.iter().rposition(|&c| c == min).unwrap_or(w - 1);
            (last + 1).saturating_sub(s)
        };
        for c in &mut count[start..start + s] {
            *c += 1;
        }
        out.push(WayMask::contiguous(start as u32, s as u32));
    }
    out
}

/// The clusters (apps in mix order) and their masks for stall fractions
/// `stalls` on `ways` ways.
pub fn dunn_plan(stalls: &[f64], ways: u32, max_clusters: usize) -> Plan {
    let n = stalls.len();
    let lo = stalls.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = stalls.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if n < 2 || hi <= lo || max_clusters < 2 {
        return Plan::shared_all(n, ways);
    }
    let norm: Vec<f64> = stalls.iter().map(|&s| (s - lo) / (hi - lo)).collect();
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&a, &b| norm[a].total_cmp(&norm[b]).then(a.cmp(&b)));
    let sorted: Vec<f64> = idx.iter().map(|&i| norm[i]).collect();
    let kmax = if n == 2 { 2 } else { (n - 1).min(max_clusters) };
    let cuts = kmeans_1d(&sorted, kmax);
    let mut best_k = 2;
    let mut best = f64::NEG_INFINITY;
    for (k, c) in cuts.iter().enumerate().skip(2) {
        let d = dunn_index(&sorted, c);
        if d > best {
            best = d;
            best_k = k;
        }
    }
    // clusters as (centroid, apps), highest centroid first
    let mut bounds = vec![0];
    bounds.extend_from_slice(&cuts[best_k]);
    bounds.push(n);
    let mut clusters: Vec<(f64, Vec<usize>)> = bounds
        .windows(2)
        .map(|b| {
            let xs = &sorted[b[0]..b[1]];
            let centroid = xs.iter().sum::<f64>() / xs.len() as f64;
            let mut apps = idx[b[0]..b[1]].to_vec();
            apps.sort_unstable();
            (centroid, apps)
        })
        .collect();
    clusters.reverse();
    let mut sizes: Vec<u32> = clusters
        .iter()
        .map(|(x, _)| ways_for_centroid(*x, ways))
        .collect();
    let mut left = i64::from(ways) - sizes.iter().map(|&s| i64::from(s)).sum::<i64>();
    let mut i = sizes.len() - 1;
    while left > 0 {
        if sizes[i] < ways {
            sizes[i] += 1;
            left -= 1;
        }
        i = if i == 0 { sizes.len() - 1 } else { i - 1 };
    }
    let masks = place_overlapping(&sizes, ways);
    Plan {
        clusters: clusters
            .into_iter()
            .zip(masks)
            .map(|((_, apps), mask)| Cluster { mask, apps })
            .collect(),
        share_model: ShareModel::default(),
        colors: Vec::new(),
        throttle: Vec::new(),
    }
}

/// Each app's stall fraction at all ways, or which app lacks it.
fn stalls_at_full_ways(curves: &[AppCurves]) -> Result<Vec<f64>, PolicyError> {
    curves
        .iter()
        .map(|c| {
            c.stalls_l2_miss
                .as_ref()
                .and_then(|s| s.last().copied())
                .ok_or_else(|| PolicyError::MissingData {
                    policy: "dunn".into(),
                    what: format!("the stalls_l2_miss curve of app {:?}", c.name),
                })
        })
        .collect()
}

impl Policy for Dunn {
    fn name(&self) -> &str {
        "dunn"
    }

    fn decide(&mut self, machine: &mut dyn Machine) -> Result<Plan, PolicyError> {
        let ways = machine.platform().ways;
        let curves = machine.alone_curves()?;
        if curves.is_empty() {
            return Err(PolicyError::EmptyMix);
        }
        if self.max_clusters < 2 {
            return Err(PolicyError::BadParameter {
                policy: "dunn".into(),
                name: "max_clusters".into(),
                value: self.max_clusters.to_string(),
                expected: "at least 2".into(),
            });
        }
        let stalls = stalls_at_full_ways(curves)?;
        Ok(dunn_plan(&stalls, ways, self.max_clusters))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_testkit::FixedMachine;

    #[test]
    fn three_groups_on_eleven_ways() {
        // normalised: 0, 0.025 | 0.5, 0.525 | 1 -> k = 3 (Dunn 0.475 / 0.025)
        let stalls = [0.5, 0.1, 0.9, 0.12, 0.52];
        let p = dunn_plan(&stalls, 11, 8);
        assert_eq!(p.clusters.len(), 3);
        assert_eq!(p.clusters[0].apps, vec![2]);
        assert_eq!(p.clusters[1].apps, vec![0, 4]);
        assert_eq!(p.clusters[2].apps, vec![1, 3]);
        // x = 1 -> 11 ways from the left; x = 0.5125 -> 5 from the right;
        // x = 0.0125 -> 2 from the left
        assert_eq!(p.clusters[0].mask, WayMask(0x7ff));
        assert_eq!(p.clusters[1].mask, WayMask(0x7c0));
        assert_eq!(p.clusters[2].mask, WayMask(0x3));
        assert!(!p.is_disjoint());
    }

    #[test]
    fn exponential_fits() {
        assert_eq!(ways_for_centroid(1.0, 11), 11);
        assert_eq!(ways_for_centroid(0.0, 11), 2);
        assert_eq!(ways_for_centroid(1.0, 20), 20);
        assert_eq!(ways_for_centroid(0.0, 20), 2);
        assert_eq!(ways_for_centroid(0.0, 8), 1);
        assert_eq!(ways_for_centroid(1.0, 8), 8);
    }

    #[test]
    fn kmeans_splits_at_the_big_gap() {
        let v = [0.0, 0.1, 0.2, 0.9, 1.0];
        let cuts = kmeans_1d(&v, 3);
        assert_eq!(cuts[2], vec![3]);
        assert!(dunn_index(&v, &cuts[2]) > dunn_index(&v, &cuts[3]));
    }

    #[test]
    fn leftover_ways_go_to_the_lowest_clusters() {
        // k = 2: {0, 0} and {1}; on 4 ways the scaled fit gives 4 (x = 1)
        // and 1 (x = 0): nothing left over, the masks overlap.
        let p = dunn_plan(&[0.0, 0.0, 1.0], 4, 8);
        assert_eq!(p.clusters[0].apps, vec![2]);
        assert_eq!(p.clusters[0].mask, WayMask(0xf));
        assert_eq!(p.clusters[1].apps, vec![0, 1]);
        assert_eq!(p.clusters[1].mask, WayMask(0x8));
        // k = 2 on 20 ways: {0, 0.5, 0.5} (x = 1/3 -> 6 ways) and {1, 1}
        // (x = 1 -> 20 ways)
        let p = dunn_plan(&[0.0, 0.5, 0.5, 1.0, 1.0], 20, 2);
        assert_eq!(p.clusters.len(), 2);
        assert_eq!(p.clusters[0].mask.0.count_ones(), 20);
        assert_eq!(p.clusters[1].mask.0.count_ones(), 6);
        // a leftover on 8 ways (scaled fit), k forced to 2: {0, 0} (x = 0
        // -> 1 way) and {0.55, 0.7, 0.85, 1} (x = 0.775 -> 6 ways); the way
        // left goes to the lowest cluster.
        let p = dunn_plan(&[0.0, 0.0, 0.55, 0.7, 0.85, 1.0], 8, 2);
        assert_eq!(p.clusters[0].apps, vec![2, 3, 4, 5]);
        assert_eq!(p.clusters[0].mask.0.count_ones(), 6);
        assert_eq!(p.clusters[1].mask.0.count_ones(), 2);
        // ties at k = 2 and 3 (diameters 0) keep k = 2
        let p = dunn_plan(&[0.0, 0.0, 1.0, 1.0], 20, 8);
        assert_eq!(p.clusters.len(), 2);
        assert_eq!(p.clusters[0].mask.0.count_ones(), 20);
    }

    #[test]
    fn equal_stalls_or_missing_data() {
        assert_eq!(dunn_plan(&[0.3, 0.3, 0.3], 11, 8), Plan::shared_all(3, 11));
        let mut c = cachepart_testkit::curves_from_bw("a", &[1.0, 1.0]);
        c.stalls_l2_miss = None;
        let mut m = FixedMachine::new(vec![c], 2);
        assert!(matches!(
            Dunn::default().decide(&mut m),
            Err(PolicyError::MissingData { .. })
        ));
    }
}
