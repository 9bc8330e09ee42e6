//! The incumbent PBBCache starts its exact searches from: UCP's lookahead
//! on slowdown curves (`ucp-slowdown`), per app or per cluster.

use super::tables::Tables;
use cachepart_machine::share::interpolate;

/// Lookahead allocation of `ways` ways over `curves` (index `w - 1` = value
/// at `w` ways; lower is better). Every curve starts at one way; repeatedly
/// the curve with the largest marginal utility `(c(cur) - c(cur + k)) / k`
/// (strictly largest, first curve on ties; smallest `k` on ties) takes `k`
/// more ways, while some utility is positive. Left-over ways are spread one
/// by one from the first curve (PBBCache divides with floats here, which
/// never happens on its data; integer division is used instead).
pub(crate) fn lookahead(curves: &[Vec<f64>], ways: usize) -> Vec<usize> {
    let k = curves.len();
    let mut sol = vec![1usize; k];
    let mut avail = ways.saturating_sub(k);
    while avail > 0 {
        let mut best_mu = 0.0;
        let mut best: Option<(usize, usize)> = None;
        for (idx, c) in curves.iter().enumerate() {
            let cur = sol[idx];
            let mut mu_max = 0.0;
            let mut mu_ways = 0;
            for i in 1..=avail.min(ways - cur) {
                let new = cur + i;
                let mu = (c[new - 1] - c[cur - 1]) / (cur as f64 - new as f64);
                if mu > mu_max {
                    mu_max = mu;
                    mu_ways = new;
                }
            }
            if mu_max > best_mu {
                best_mu = mu_max;
                best = Some((idx, mu_ways));
            }
        }
        let Some((idx, to)) = best else { break };
        avail -= to - sol[idx];
        sol[idx] = to;
    }
    if avail > 0 {
        let per = avail / k;
        let mut extra = avail % k;
        for s in sol.iter_mut() {
            if avail == 0 {
                break;
            }
            let mut add = per;
            if extra > 0 {
                add += 1;
                extra -= 1;
            }
            *s += add;
            avail -= add;
        }
    }
    sol
}

/// `ucp-slowdown` for strict partitioning: lookahead on each app's slowdown.
pub(crate) fn ucp_slowdown(t: &Tables) -> Vec<usize> {
    let curves: Vec<Vec<f64>> = t
        .mix
        .apps
        .iter()
        .map(|a| a.curves.slowdown.clone())
        .collect();
    lookahead(&curves, t.ways)
}

/// `ucp-slowdown` on clusters: lookahead on each cluster's summed
/// (shared-model) slowdown curve, clusters in the order given.
pub(crate) fn ucp_clusters(t: &Tables, clusters: &[u64]) -> Vec<usize> {
    let curves: Vec<Vec<f64>> = clusters
        .iter()
        .map(|&mask| {
            (1..=t.ways)
                .map(|w| {
                    let mut bits = mask;
                    let mut pos = 0;
                    let mut s: Option<f64> = None;
                    while bits != 0 {
                        let a = bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        let v = interpolate(&t.mix.apps[a].curves.slowdown, t.frac(mask, w, pos));
                        pos += 1;
                        s = Some(s.map_or(v, |acc| acc + v));
                    }
                    s.unwrap_or(0.0)
                })
                .collect()
        })
        .collect();
    lookahead(&curves, t.ways)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookahead_follows_marginal_utility() {
        // App 0 gains a lot from its 2nd way, app 1 from ways 2-3 jointly.
        let c0 = vec![3.0, 1.0, 1.0, 1.0];
        let c1 = vec![2.0, 2.0, 1.0, 1.0];
        assert_eq!(lookahead(&[c0.clone(), c1.clone()], 4), vec![3, 1]);
        assert_eq!(lookahead(&[c0, c1], 5), vec![2, 3]);
        // flat curves: left-over ways spread from the first
        let f = vec![1.0; 6];
        assert_eq!(lookahead(&[f.clone(), f.clone(), f], 6), vec![2, 2, 2]);
    }
}
