//! The max-plus dynamic programme over subsets of apps and way counts:
//! the best total of a value that is additive over clusters.
//!
//! `g[S][w]` is the best sum of `value(T, a)` over every clustering of the
//! apps `S` into clusters `T` holding `a >= 1` ways each, `w` ways in all
//! (`-inf` if impossible); the cluster holding the lowest app of `S` is
//! chosen first, so each clustering is met once. `3^n * ways^2 / 2`
//! operations; subsets of one size are filled in parallel (the result does
//! not depend on the thread count: `max` is exact).

use super::progress::Budget;
use rayon::prelude::*;

/// `g[S * (ways + 1) + w]` for every subset `S` of the `n` apps, or `None`
/// if the time limit passed first.
pub(crate) fn best_by_subsets<F>(
    n: usize,
    ways: usize,
    value: F,
    budget: &Budget,
) -> Option<Vec<f64>>
where
    F: Fn(u64, usize) -> f64 + Sync,
{
    let w1 = ways + 1;
    let full = (1usize << n) - 1;
    let mut g = vec![f64::NEG_INFINITY; (full + 1) * w1];
    g[0] = 0.0;
    let row = |g: &[f64], s: usize| -> [f64; 65] {
        let mut r = [f64::NEG_INFINITY; 65];
        let low = s & s.wrapping_neg();
        let rest = s ^ low;
        let mut sub = rest;
        loop {
            let tm = sub | low;
            let rm = s ^ tm;
            let gr = &g[rm * w1..rm * w1 + w1];
            // a non-empty rest needs a way at least
            let lead = usize::from(rm != 0);
            for a in 1..=ways - lead {
                let h = value(tm as u64, a);
                for (b, &gv) in gr.iter().enumerate().take(w1 - a).skip(lead) {
                    let v = h + gv;
                    if v > r[a + b] {
                        r[a + b] = v;
                    }
                }
            }
            if sub == 0 {
                break;
            }
            sub = (sub - 1) & rest;
        }
        r
    };
    let mut by_size: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
    for s in 1..=full {
        by_size[s.count_ones() as usize].push(s);
    }
    for (p, layer) in by_size.iter().enumerate().skip(1) {
        // chunks of about 2^18 cluster choices (a few ms of work each)
        // keep the clock checked: a limit is overshot by one chunk at most
        let len = ((1usize << 18) >> (p - 1)).max(4);
        for chunk in layer.chunks(len) {
            if budget.expired() {
                return None;
            }
            let rows: Vec<[f64; 65]> = chunk
                .par_iter()
                .with_min_len((len / 4).clamp(1, 16))
                .map(|&s| row(&g, s))
                .collect();
            for (&s, r) in chunk.iter().zip(&rows) {
                g[s * w1..s * w1 + w1].copy_from_slice(&r[..w1]);
            }
        }
    }
    Some(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_maxima() {
        let b = Budget::new(None, None);
        // value 1 per cluster: the most clusters of 3 apps in w ways is min(3, w)
        let g = best_by_subsets(3, 4, |_, _| 1.0, &b).unwrap();
        let at = |s: usize, w: usize| g[s * 5 + w];
        assert_eq!(at(0b111, 1), 1.0);
        assert_eq!(at(0b111, 2), 2.0);
        assert_eq!(at(0b111, 4), 3.0);
        assert_eq!(at(0b011, 0), f64::NEG_INFINITY);
        // value = ways * apps: best with everyone in one cluster
        let g = best_by_subsets(3, 4, |m, a| (a as f64) * m.count_ones() as f64, &b).unwrap();
        assert_eq!(g[0b111 * 5 + 4], 12.0);
        assert_eq!(g[0b101 * 5 + 3], 6.0);
    }
}
