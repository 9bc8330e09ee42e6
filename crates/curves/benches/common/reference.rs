//! The plain reference loop the exact curve is measured against: what a
//! straightforward C implementation does (a hash map from line to last
//! access time and a Fenwick tree with one slot per reference, no
//! compaction, no fast paths), on an array of line numbers.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A one-multiply hasher, as a C hash table would use.
#[derive(Default)]
pub struct MulHasher(u64);

impl Hasher for MulHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys")
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (x ^ (x >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Stack-distance histogram of `lines` (`hist[d]`, and cold misses).
pub fn plain_fenwick(lines: &[u64]) -> (Vec<u64>, u64) {
    let n = lines.len();
    let mut tree = vec![0u32; n + 1];
    let mut last: HashMap<u64, u32, BuildHasherDefault<MulHasher>> = HashMap::default();
    let mut hist = vec![0u64; 1024];
    let mut cold = 0u64;
    for (t, &line) in lines.iter().enumerate() {
        if let Some(tp) = last.insert(line, t as u32) {
            let tp = tp as usize;
            let mut s = 0u64;
            let mut j = tp + 1;
            while j > 0 {
                s += u64::from(tree[j]);
                j &= j - 1;
            }
            let d = (last.len() as u64 - s) as usize;
            if d >= hist.len() {
                hist.resize(2 * d + 1, 0);
            }
            hist[d] += 1;
            let mut j = tp + 1;
            while j <= n {
                tree[j] -= 1;
                j += j & j.wrapping_neg();
            }
        } else {
            cold += 1;
        }
        let mut j = t + 1;
        while j <= n {
            tree[j] += 1;
            j += j & j.wrapping_neg();
        }
    }
    while hist.last() == Some(&0) {
        hist.pop();
    }
    (hist, cold)
}
