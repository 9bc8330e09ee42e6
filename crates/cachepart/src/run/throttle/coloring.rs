//! The ideal static page-coloring partition of the best-fairness search
//! ([`crate::run::throttle::search`]): Zhang et al.'s comparison, "an ideal page
//! coloring approach (one that uses a statically defined cache partition
//! point and incurs no page recoloring cost)", whose partition point they
//! chose by trying every one.
//!
//! Each app gets a contiguous range of the platform's page colors, the
//! ranges in app order and covering every color; every split in which
//! each app has at least one color is tried (`C - 1` for a pair on `C`
//! colors: 63 on the Xeon 5160's 64). Colors are fixed before the run, so
//! no page is ever recolored: the ideal the paper assumes.

use cachepart_profile::optimal::composition_count;
use cachepart_units::IdSet;

/// Every split of `colors` page colors into `n` non-empty contiguous
/// ranges, in app order, lexicographic by the sizes.
pub fn color_splits(colors: u32, n: usize) -> Vec<Vec<IdSet>> {
    fn sizes(left: u32, n: usize, prefix: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        if n == 1 {
            if left > 0 {
                prefix.push(left);
                out.push(prefix.clone());
                prefix.pop();
            }
            return;
        }
        // Leave at least one color for each later app.
        for k in 1..=left.saturating_sub(n as u32 - 1) {
            prefix.push(k);
            sizes(left - k, n - 1, prefix, out);
            prefix.pop();
        }
    }
    let mut all = Vec::new();
    if n > 0 {
        sizes(colors, n, &mut Vec::new(), &mut all);
    }
    all.into_iter()
        .map(|s| {
            let mut start = 0;
            s.iter()
                .map(|&k| {
                    let set: IdSet = (start..start + k).collect();
                    start += k;
                    set
                })
                .collect()
        })
        .collect()
}

/// How many splits [`color_splits`] makes, without making them: the
/// compositions of `colors` into `n` parts, `C(colors - 1, n - 1)`
/// (saturating).
pub fn split_count(colors: u32, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    usize::try_from(composition_count(colors as usize, n)).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_split_covers_every_color_once() {
        let s = color_splits(64, 2);
        assert_eq!(s.len(), 63);
        assert_eq!(split_count(64, 2), 63);
        for v in &s {
            assert_eq!(v[0].len() + v[1].len(), 64);
            assert!(v[0].iter().all(|c| !v[1].contains(c)));
        }
        assert_eq!(s[0][0].to_string(), "0");
        assert_eq!(s[0][1].to_string(), "1-63");
        let three = color_splits(6, 3);
        assert_eq!(three.len(), 10);
        assert_eq!(split_count(6, 3), 10);
        assert!(color_splits(1, 2).is_empty());
        assert_eq!(split_count(1, 2), 0);
    }
}
