//! A Fenwick (binary indexed) tree of counts: point updates and prefix
//! sums in O(log n). The LRU stack counts the live marks of each block of
//! time slots in it, so the number of distinct lines touched since a time
//! is a suffix count.

/// Counts over slots `0..len`, each 0 or more.
#[derive(Clone, Debug, Default)]
pub(crate) struct Fenwick {
    /// 1-based: `tree[i]` sums slots `(i - lowbit(i), i]` (1-based).
    tree: Vec<u32>,
}

impl Fenwick {
    /// A tree over `counts` (built in O(len)).
    pub(crate) fn from_counts(counts: &[u32]) -> Self {
        let mut tree = vec![0u32; counts.len() + 1];
        tree[1..].copy_from_slice(counts);
        let n = tree.len();
        for i in 1..n {
            let parent = i + (i & i.wrapping_neg());
            if parent < n {
                tree[parent] = tree[parent].wrapping_add(tree[i]);
            }
        }
        Fenwick { tree }
    }

    /// Number of slots.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.tree.len().saturating_sub(1)
    }

    /// Adds 1 to slot `i`.
    #[cfg(test)]
    pub(crate) fn inc(&mut self, i: usize) {
        let mut j = i + 1;
        let n = self.tree.len();
        while j < n {
            self.tree[j] = self.tree[j].wrapping_add(1);
            j += j & j.wrapping_neg();
        }
    }

    /// Adds `v` to slot `i`.
    #[inline(always)]
    pub(crate) fn add(&mut self, i: usize, v: u32) {
        let mut j = i + 1;
        let n = self.tree.len();
        while j < n {
            self.tree[j] = self.tree[j].wrapping_add(v);
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
            init in prop::collection::vec(0u32..600, 1..200),
            ops in prop::collection::vec((0u8..3, 0usize..200), 0..300),
        ) {
            let len = init.len();
            let mut f = Fenwick::from_counts(&init);
            let mut plain: Vec<u64> = init.iter().map(|&c| u64::from(c)).collect();
            prop_assert_eq!(f.len(), len);
            for (op, i) in ops {
                let i = i % len;
                if op == 0 {
                    f.inc(i);
                    plain[i] += 1;
                } else if op == 1 {
                    f.add(i, 7);
                    plain[i] += 7;
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
