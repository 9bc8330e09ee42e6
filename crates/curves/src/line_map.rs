//! An open-addressing hash map from line numbers to dense ids, the LRU
//! stack's index of the lines it holds.
//!
//! Linear probing over a power-of-two table kept at most half full, keys
//! hashed with [`mix64`]; removal shifts later entries back, so there are
//! no tombstones. It is several times faster than `std`'s map with SipHash
//! on this workload (one lookup per reference).

use crate::hash::mix64;

/// Marks an empty bucket (line numbers are below 2^61).
const EMPTY: u64 = u64::MAX;

/// Map from line number to a `u32` id.
#[derive(Clone, Debug)]
pub(crate) struct LineMap {
    keys: Vec<u64>,
    vals: Vec<u32>,
    mask: usize,
    len: usize,
}

impl LineMap {
    /// An empty map.
    pub(crate) fn new() -> Self {
        Self::with_buckets(1 << 10)
    }

    fn with_buckets(n: usize) -> Self {
        LineMap {
            keys: vec![EMPTY; n],
            vals: vec![0; n],
            mask: n - 1,
            len: 0,
        }
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn bucket(&self, key: u64) -> usize {
        (mix64(key) as usize) & self.mask
    }

    /// The id of `key`, or inserts `make()` and returns `None`.
    #[inline(always)]
    pub(crate) fn get_or_insert(&mut self, key: u64, make: impl FnOnce() -> u32) -> Option<u32> {
        let mut b = self.bucket(key);
        loop {
            let k = self.keys[b];
            if k == key {
                return Some(self.vals[b]);
            }
            if k == EMPTY {
                break;
            }
            b = (b + 1) & self.mask;
        }
        self.keys[b] = key;
        self.vals[b] = make();
        self.len += 1;
        if self.len * 2 > self.keys.len() {
            self.grow();
        }
        None
    }

    /// The id of `key`, if present.
    pub(crate) fn get(&self, key: u64) -> Option<u32> {
        let mut b = self.bucket(key);
        loop {
            let k = self.keys[b];
            if k == key {
                return Some(self.vals[b]);
            }
            if k == EMPTY {
                return None;
            }
            b = (b + 1) & self.mask;
        }
    }

    /// Removes `key`, returning its id.
    pub(crate) fn remove(&mut self, key: u64) -> Option<u32> {
        let mut b = self.bucket(key);
        loop {
            let k = self.keys[b];
            if k == EMPTY {
                return None;
            }
            if k == key {
                break;
            }
            b = (b + 1) & self.mask;
        }
        let val = self.vals[b];
        self.len -= 1;
        // Backward-shift deletion: move up every later entry of the probe
        // run whose home bucket is not between the hole and itself.
        let mut hole = b;
        let mut j = b;
        loop {
            j = (j + 1) & self.mask;
            let k = self.keys[j];
            if k == EMPTY {
                break;
            }
            let home = self.bucket(k);
            let dist_home = j.wrapping_sub(home) & self.mask;
            let dist_hole = j.wrapping_sub(hole) & self.mask;
            if dist_home >= dist_hole {
                self.keys[hole] = k;
                self.vals[hole] = self.vals[j];
                hole = j;
            }
        }
        self.keys[hole] = EMPTY;
        Some(val)
    }

    fn grow(&mut self) {
        let mut bigger = Self::with_buckets(self.keys.len() * 2);
        for (&k, &v) in self.keys.iter().zip(&self.vals) {
            if k != EMPTY {
                let mut b = bigger.bucket(k);
                while bigger.keys[b] != EMPTY {
                    b = (b + 1) & bigger.mask;
                }
                bigger.keys[b] = k;
                bigger.vals[b] = v;
            }
        }
        bigger.len = self.len;
        *self = bigger;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        #[test]
        fn behaves_like_a_hash_map(ops in prop::collection::vec((any::<bool>(), 0u64..64), 0..2000)) {
            let mut m = LineMap::new();
            let mut r: HashMap<u64, u32> = HashMap::new();
            for (n, (ins, k)) in ops.into_iter().enumerate() {
                // Spread keys so that they collide in a small table.
                let key = k << 20;
                if ins {
                    let got = m.get_or_insert(key, || n as u32);
                    let want = r.get(&key).copied();
                    r.entry(key).or_insert(n as u32);
                    prop_assert_eq!(got, want);
                } else {
                    prop_assert_eq!(m.remove(key), r.remove(&key));
                }
                prop_assert_eq!(m.len(), r.len());
                for (&k, &v) in &r {
                    prop_assert_eq!(m.get(k), Some(v));
                }
            }
        }
    }
}
