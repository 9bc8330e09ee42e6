//! Static partition sizing from per-app curves, as Tam et al. (WIOSCA'07)
//! size page-coloring partitions: each app's miss-rate curve (MRC) or
//! stall-rate curve (SRC, memory-stall cycles per billion cycles) over its
//! partition size, measured alone, and a split of the `total` units
//! (colors or ways) that minimises the sum of the curves.
//!
//! The paper sizes partitions by hand from the curves and argues that SRCs
//! predict performance better than MRCs; it gives no search procedure. This
//! module makes the choice exact: a dynamic program over apps and units
//! (`O(apps x total^2)`) returns the split of exactly `total` units, at
//! least `min_each` per app, with the smallest sum. Ties go to the
//! lexicographically smallest vector of sizes (the first app as small as
//! possible), so the answer is deterministic.

use crate::error::PolicyError;

const NAME: &str = "tam-sizing";

/// The sizes (units per app, in input order) minimising the sum of
/// `curves[a][s - 1]` (app `a`'s cost at `s` units) over splits of exactly
/// `total` units with at least `min_each` each. Every curve must have at
/// least `total - (apps - 1) * min_each` points, none of them NaN.
pub fn size_partitions(
    curves: &[Vec<f64>],
    total: u32,
    min_each: u32,
) -> Result<Vec<u32>, PolicyError> {
    let n = curves.len();
    if n == 0 {
        return Err(PolicyError::EmptyMix);
    }
    let bad = |name: String, value: String, expected: String| PolicyError::BadParameter {
        policy: NAME.into(),
        name,
        value,
        expected,
    };
    let min_each = min_each.max(1);
    let need = n as u64 * u64::from(min_each);
    if need > u64::from(total) {
        return Err(bad(
            "total".into(),
            total.to_string(),
            format!("at least {min_each} unit(s) for each of {n} apps ({need})"),
        ));
    }
    let max_size = (total - (n as u32 - 1) * min_each) as usize;
    for (a, c) in curves.iter().enumerate() {
        if c.len() < max_size {
            return Err(bad(
                format!("curves[{a}]"),
                format!("{} points", c.len()),
                format!("a value for every size 1..={max_size}"),
            ));
        }
        if let Some(i) = c.iter().position(|v| v.is_nan()) {
            return Err(bad(
                format!("curves[{a}][{i}]"),
                "NaN".into(),
                "a number".into(),
            ));
        }
    }
    let total = total as usize;
    let m = min_each as usize;
    // best[i][r]: smallest cost of apps i.. with exactly r units.
    let mut best = vec![vec![f64::INFINITY; total + 1]; n + 1];
    best[n][0] = 0.0;
    for i in (0..n).rev() {
        for r in 0..=total {
            let mut b = f64::INFINITY;
            for s in m..=r.min(max_size) {
                let rest = best[i + 1][r - s];
                if rest.is_finite() {
                    b = b.min(curves[i][s - 1] + rest);
                }
            }
            best[i][r] = b;
        }
    }
    let mut sizes = Vec::with_capacity(n);
    let mut r = total;
    for i in 0..n {
        let s = (m..=r.min(max_size))
            .find(|&s| {
                let rest = best[i + 1][r - s];
                rest.is_finite() && curves[i][s - 1] + rest == best[i][r]
            })
            .expect("the optimum is reached by some size");
        sizes.push(s as u32);
        r -= s;
    }
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every split of `total` into `n` parts of at least `m`, in
    /// lexicographic order.
    fn splits(n: usize, total: u32, m: u32) -> Vec<Vec<u32>> {
        if n == 1 {
            return if total >= m {
                vec![vec![total]]
            } else {
                vec![]
            };
        }
        let mut out = Vec::new();
        for s in m..=total {
            for mut rest in splits(n - 1, total - s, m) {
                rest.insert(0, s);
                out.push(rest);
            }
        }
        out
    }

    #[test]
    fn a_cache_hungry_app_gets_the_colors() {
        // App 0 stops missing at 6 colors; app 1 is flat (streaming).
        let hungry: Vec<f64> = (1..=8).map(|c| if c >= 6 { 1.0 } else { 10.0 }).collect();
        let flat = vec![5.0; 8];
        assert_eq!(size_partitions(&[hungry, flat], 8, 1).unwrap(), vec![6, 2]);
    }

    #[test]
    fn ties_keep_the_first_app_small() {
        let flat = vec![1.0; 4];
        assert_eq!(
            size_partitions(&[flat.clone(), flat], 4, 1).unwrap(),
            vec![1, 3]
        );
    }

    #[test]
    fn bad_input_is_named() {
        let e = size_partitions(&[vec![1.0; 4], vec![1.0; 4]], 1, 1).unwrap_err();
        assert!(e.to_string().contains("total"), "{e}");
        let e = size_partitions(&[vec![1.0; 4], vec![1.0; 2]], 4, 1).unwrap_err();
        assert!(e.to_string().contains("curves[1]"), "{e}");
        let e = size_partitions(&[vec![1.0, f64::NAN, 1.0]], 3, 1).unwrap_err();
        assert!(e.to_string().contains("curves[0][1]"), "{e}");
        assert!(size_partitions(&[], 4, 1).is_err());
    }

    proptest! {
        /// The DP equals brute force over every split, ties included.
        #[test]
        fn equals_brute_force(
            n in 1usize..4, total in 3u32..10, m in 1u32..3,
            seed in proptest::collection::vec(0u32..6, 40),
        ) {
            prop_assume!(n as u32 * m <= total);
            let curves: Vec<Vec<f64>> = (0..n)
                .map(|a| (0..total as usize).map(|s| f64::from(seed[(a * 13 + s) % 40])).collect())
                .collect();
            let cost = |v: &[u32]| v.iter().enumerate().map(|(a, &s)| curves[a][s as usize - 1]).sum::<f64>();
            let all = splits(n, total, m);
            let best = all.iter().map(|v| cost(v)).fold(f64::INFINITY, f64::min);
            let first = all.iter().find(|v| cost(v) == best).unwrap().clone();
            prop_assert_eq!(size_partitions(&curves, total, m).unwrap(), first);
        }
    }
}
