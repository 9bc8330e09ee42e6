//! UCP's lookahead allocation (Qureshi and Patt, MICRO 2006), as PBBCache
//! runs it: the core of `ucp`, `ucp-slowdown`, KPart and LFOC.

/// Splits `total` ways among curves `m[i]` (index `w - 1` = cost at `w`
/// ways, lower is better), each getting at least one way.
///
/// Every partition starts at one way. While ways remain, each partition's
/// best extension `k` maximises the marginal utility
/// `(m(cur) - m(cur + k)) / k` (the smallest `k` wins ties, and the utility
/// must be positive); the partition with the largest utility (the lowest
/// index on ties) takes its `k` ways. When no extension has a positive
/// utility, the ways left are handed out one at a time round-robin from
/// partition 0 (PBBCache spreads them with float division, which makes
/// fractional way counts; this is the nearest integer plan).
///
/// Requires `1 <= m.len() <= total` and every curve to cover `total` ways.
pub fn lookahead<C: AsRef<[f64]>>(m: &[C], total: usize) -> Vec<usize> {
    let n = m.len();
    let mut alloc = vec![1usize; n];
    let mut avail = total - n;
    while avail > 0 {
        let mut best: Option<(usize, usize, f64)> = None;
        for (i, curve) in m.iter().enumerate() {
            let c = curve.as_ref();
            let cur = alloc[i];
            let limit = avail.min(c.len().saturating_sub(cur));
            let mut app_best: Option<(usize, f64)> = None;
            for k in 1..=limit {
                let mu = (c[cur - 1] - c[cur + k - 1]) / k as f64;
                if mu > 0.0 && app_best.is_none_or(|(_, b)| mu > b) {
                    app_best = Some((k, mu));
                }
            }
            if let Some((k, mu)) = app_best {
                if best.is_none_or(|(_, _, b)| mu > b) {
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
                let mut i = 0;
                while avail > 0 {
                    alloc[i % n] += 1;
                    avail -= 1;
                    i += 1;
                }
            }
        }
    }
    alloc
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn gives_ways_to_the_steepest_curve() {
        let flat = vec![1.0; 8];
        let steep = vec![8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0];
        assert_eq!(lookahead(&[flat.clone(), steep.clone()], 8), vec![1, 7]);
        assert_eq!(lookahead(&[steep, flat], 8), vec![7, 1]);
    }

    #[test]
    fn looks_past_plateaus() {
        // a cliff at 4 ways: greedy one-way-at-a-time would see no gain
        let cliff = vec![10.0, 10.0, 10.0, 1.0, 1.0, 1.0];
        let slope = vec![6.0, 5.0, 4.0, 3.0, 2.0, 1.0];
        assert_eq!(lookahead(&[cliff, slope], 6), vec![4, 2]);
    }

    proptest! {
        #[test]
        fn allocates_every_way(curves in proptest::collection::vec(
            proptest::collection::vec(0.0f64..10.0, 11), 1..11)) {
            let a = lookahead(&curves, 11);
            prop_assert_eq!(a.iter().sum::<usize>(), 11);
            prop_assert!(a.iter().all(|&w| w >= 1));
        }
    }
}
