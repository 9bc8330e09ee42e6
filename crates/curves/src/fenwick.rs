//! A Fenwick (binary indexed) tree of counts over time slots: point
//! updates and prefix sums in O(log n). The LRU stack marks each line's
//! last access time in it, so the number of distinct lines touched since a
//! time is a suffix count.

/// Counts over slots `0..len`, each 0 or more.
#[derive(Clone, Debug, Default)]
pub(crate) struct Fenwick {
    /// 1-based: `tree[i]` sums slots `(i - lowbit(i), i]` (1-based).
    tree: Vec<u32>,
}

impl Fenwick {
    /// A tree of `len` slots whose first `ones` slots hold 1, the rest 0
    /// (built in O(len)).
    pub(crate) fn with_prefix_ones(len: usize, ones: usize) -> Self {
        let mut tree = vec![0u32; len + 1];
        for (i, t) in tree.iter_mut().enumerate().skip(1) {
            let low = i & i.wrapping_neg();
            *t = (i.min(ones) - (i - low).min(ones)) as u32;
        }
        Fenwick { tree }
    }

    /// Number of slots.
    pub(crate) fn len(&self) -> usize {
        self.tree.len().saturating_sub(1)
    }

    /// Adds 1 to slot `i`.
    #[inline(always)]
    pub(crate) fn inc(&mut self, i: usize) {
        let mut j = i + 1;
        let n = self.tree.len();
        while j < n {
            self.tree[j] = self.tree[j].wrapping_add(1);
            j += j & j.wrapping_neg();
        }
    }

    /// Subtracts 1 from slot `i` (which must be positive).
    #[inline(always)]
    pub(crate) fn dec(&mut self, i: usize) {
        let mut j = i + 1;
        let n = self.tree.len();
        while j < n {
            self.tree[j] = self.tree[j].wrapping_sub(1);
            j += j & j.wrapping_neg();
        }
    }

    /// Sum of slots `0..=i`.
    #[inline(always)]
    pub(crate) fn prefix(&self, i: usize) -> u64 {
        let mut j = i + 1;
        let mut s = 0u64;
        while j > 0 {
            s += u64::from(self.tree[j]);
            j &= j - 1;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn prefix_sums_match_a_plain_array(
            len in 1usize..200,
            ones in 0usize..200,
            ops in prop::collection::vec((any::<bool>(), 0usize..200), 0..300),
        ) {
            let ones = ones.min(len);
            let mut f = Fenwick::with_prefix_ones(len, ones);
            let mut plain: Vec<u64> = (0..len).map(|i| u64::from(i < ones)).collect();
            prop_assert_eq!(f.len(), len);
            for (up, i) in ops {
                let i = i % len;
                if up {
                    f.inc(i);
                    plain[i] += 1;
                } else if plain[i] > 0 {
                    f.dec(i);
                    plain[i] -= 1;
                }
                let j = (i * 7 + 3) % len;
                prop_assert_eq!(f.prefix(j), plain[..=j].iter().sum::<u64>());
            }
        }
    }
}
