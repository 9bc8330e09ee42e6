//! The search spaces: per-app duty-cycle vectors and prefetcher words.

use cachepart_machine::Duty;
use cachepart_sim::prefetch::Kind;

/// Every vector of `n` picks from `options`, in lexicographic order.
pub(super) fn product<T: Clone>(options: &[T], n: usize) -> Vec<Vec<T>> {
    (0..n).fold(vec![Vec::new()], |acc, _| {
        acc.into_iter()
            .flat_map(|v| {
                options.iter().map(move |o| {
                    let mut v = v.clone();
                    v.push(o.clone());
                    v
                })
            })
            .collect()
    })
}

/// Every per-app duty vector over `levels` with at least one app at full
/// speed, in lexicographic order.
pub(super) fn duty_vectors(levels: &[Duty], n: usize) -> Vec<Vec<Duty>> {
    let mut out = product(levels, n);
    out.retain(|v| v.iter().any(|d| d.is_full()));
    out
}

/// Every per-app word vector where each app's word is `base` or `base`
/// with one of `kinds` flipped.
pub(super) fn word_vectors(base: u64, kinds: &[Kind], n: usize) -> Vec<Vec<Option<u64>>> {
    let options: Vec<Option<u64>> = std::iter::once(base)
        .chain(kinds.iter().map(|k| base ^ k.bit()))
        .map(Some)
        .collect();
    product(&options, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_spaces() {
        let levels = Duty::all(8).unwrap();
        let d = duty_vectors(&levels, 2);
        assert_eq!(d.len(), 15);
        assert!(d.iter().all(|v| v.iter().any(|x| x.is_full())));
        assert_eq!(duty_vectors(&levels, 3).len(), 512 - 343);
        let w = word_vectors(0x4, &[Kind::L2Streamer, Kind::L1NextLine], 2);
        assert_eq!(w.len(), 9);
        assert!(w.contains(&vec![Some(0x5), Some(0x0)]));
    }
}
