//! An open-addressing hash map from line numbers to `u32` values: the LRU
//! stack's index from a line to its last access time slot, and the colored
//! pass's page numbering.
//!
//! Linear probing over a power-of-two table kept at most half full; a
//! bucket holds its key and value side by side (16 bytes, so a lookup
//! touches one cache line). Keys are placed by Fibonacci hashing (one
//! multiply by 2^64/φ, top bits), which spreads consecutive and strided
//! line numbers evenly and is cheaper than a full mixer on this path (one
//! lookup per reference). Removal shifts later entries back, so there are
//! no tombstones.

/// Marks an empty bucket (line numbers are below 2^61).
const EMPTY: u64 = u64::MAX;

/// 2^64 / φ, odd.
const FIB: u64 = 0x9e37_79b9_7f4a_7c15;

#[derive(Clone, Copy, Debug)]
struct Bucket {
    key: u64,
    val: u32,
}

const VACANT: Bucket = Bucket { key: EMPTY, val: 0 };

/// Where a key is, or where it would go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// The key is in this bucket.
    Found(usize),
    /// The key is absent; this empty bucket ends its probe run.
    Vacant(usize),
}

/// Map from line number to a `u32`.
#[derive(Clone, Debug)]
pub(crate) struct LineMap {
    buckets: Vec<Bucket>,
    /// `64 - log2(buckets)`.
    shift: u32,
    len: usize,
}

impl LineMap {
    /// An empty map.
    pub(crate) fn new() -> Self {
        Self::with_buckets(1 << 10)
    }

    fn with_buckets(n: usize) -> Self {
        LineMap {
            buckets: vec![VACANT; n],
            shift: 64 - n.trailing_zeros(),
            len: 0,
        }
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.buckets.len() - 1
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(FIB) >> self.shift) as usize
    }

    /// Asks the host to bring `key`'s home bucket into its cache, so that
    /// a [`LineMap::find`] a few references later does not wait for it
    /// (a hint: no effect on the map, and none at all off x86-64).
    #[inline(always)]
    pub(crate) fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let b = self.home(key);
            debug_assert!(b < self.buckets.len());
            // SAFETY: `home` is below the bucket count, so the pointer is
            // inside the table; a prefetch reads nothing and cannot fault.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(self.buckets.as_ptr().add(b).cast()) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// Finds `key`'s bucket, or the empty bucket where it would go.
    #[inline(always)]
    pub(crate) fn find(&self, key: u64) -> Slot {
        let mask = self.mask();
        let mut b = self.home(key);
        loop {
            let k = self.buckets[b].key;
            if k == key {
                return Slot::Found(b);
            }
            if k == EMPTY {
                return Slot::Vacant(b);
            }
            b = (b + 1) & mask;
        }
    }

    /// The value in bucket `b` (from [`Slot::Found`]).
    #[inline(always)]
    pub(crate) fn val(&self, b: usize) -> u32 {
        self.buckets[b].val
    }

    /// Sets the value in bucket `b` (from [`Slot::Found`]).
    #[inline(always)]
    pub(crate) fn set_val(&mut self, b: usize, v: u32) {
        self.buckets[b].val = v;
    }

    /// Inserts `key` with `val` at `b`, the [`Slot::Vacant`] bucket that
    /// [`LineMap::find`] just returned for it (bucket numbers are invalid
    /// after the call, as the table may grow).
    #[inline(always)]
    pub(crate) fn insert_at(&mut self, b: usize, key: u64, val: u32) {
        self.buckets[b] = Bucket { key, val };
        self.len += 1;
        if self.len * 2 > self.buckets.len() {
            self.grow();
        }
    }

    /// The value of `key`, or inserts `make()` and returns `None`.
    #[inline(always)]
    pub(crate) fn get_or_insert(&mut self, key: u64, make: impl FnOnce() -> u32) -> Option<u32> {
        match self.find(key) {
            Slot::Found(b) => Some(self.val(b)),
            Slot::Vacant(b) => {
                self.insert_at(b, key, make());
                None
            }
        }
    }

    /// The value of `key`, if present.
    #[cfg(test)]
    pub(crate) fn get(&self, key: u64) -> Option<u32> {
        match self.find(key) {
            Slot::Found(b) => Some(self.val(b)),
            Slot::Vacant(_) => None,
        }
    }

    /// Applies `f` to every value, in bucket order.
    pub(crate) fn for_each_val_mut(&mut self, mut f: impl FnMut(&mut u32)) {
        for b in &mut self.buckets {
            if b.key != EMPTY {
                f(&mut b.val);
            }
        }
    }

    /// Removes `key`, returning its value.
    pub(crate) fn remove(&mut self, key: u64) -> Option<u32> {
        let Slot::Found(b) = self.find(key) else {
            return None;
        };
        let mask = self.mask();
        let val = self.buckets[b].val;
        self.len -= 1;
        // Backward-shift deletion: move up every later entry of the probe
        // run whose home bucket is not between the hole and itself.
        let mut hole = b;
        let mut j = b;
        loop {
            j = (j + 1) & mask;
            let e = self.buckets[j];
            if e.key == EMPTY {
                break;
            }
            let home = self.home(e.key);
            let dist_home = j.wrapping_sub(home) & mask;
            let dist_hole = j.wrapping_sub(hole) & mask;
            if dist_home >= dist_hole {
                self.buckets[hole] = e;
                hole = j;
            }
        }
        self.buckets[hole] = VACANT;
        Some(val)
    }

    fn grow(&mut self) {
        let mut bigger = Self::with_buckets(self.buckets.len() * 2);
        let mask = bigger.mask();
        for e in &self.buckets {
            if e.key != EMPTY {
                let mut b = bigger.home(e.key);
                while bigger.buckets[b].key != EMPTY {
                    b = (b + 1) & mask;
                }
                bigger.buckets[b] = *e;
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
        fn behaves_like_a_hash_map(ops in prop::collection::vec((0u8..3, 0u64..64), 0..2000)) {
            let mut m = LineMap::new();
            let mut r: HashMap<u64, u32> = HashMap::new();
            for (n, (op, k)) in ops.into_iter().enumerate() {
                // Spread keys so that they collide in a small table.
                let key = k << 54 | k;
                match op {
                    0 => {
                        let got = m.get_or_insert(key, || n as u32);
                        let want = r.get(&key).copied();
                        r.entry(key).or_insert(n as u32);
                        prop_assert_eq!(got, want);
                    }
                    1 => prop_assert_eq!(m.remove(key), r.remove(&key)),
                    _ => {
                        if let Slot::Found(b) = m.find(key) {
                            m.set_val(b, n as u32);
                            r.insert(key, n as u32);
                        } else {
                            prop_assert!(!r.contains_key(&key));
                        }
                    }
                }
                prop_assert_eq!(m.len(), r.len());
                for (&k, &v) in &r {
                    prop_assert_eq!(m.get(k), Some(v));
                }
            }
            let mut vals = Vec::new();
            m.for_each_val_mut(|v| vals.push(*v));
            vals.sort_unstable();
            let mut want: Vec<u32> = r.values().copied().collect();
            want.sort_unstable();
            prop_assert_eq!(vals, want);
        }

        #[test]
        fn grows_past_many_keys(n in 1usize..5000, stride in 1u64..1 << 20) {
            let mut m = LineMap::new();
            for i in 0..n as u64 {
                prop_assert_eq!(m.get_or_insert(i * stride, || i as u32), None);
            }
            for i in 0..n as u64 {
                prop_assert_eq!(m.get(i * stride), Some(i as u32));
            }
        }
    }
}
