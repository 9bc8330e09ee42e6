//! The 64-bit mixer used to hash line addresses: for SHARDS sampling (the
//! hash decides which lines are sampled) and for the line map's buckets.
//!
//! It is the splitmix64 finalizer (Steele, Lea and Flood, "Fast splittable
//! pseudorandom number generators", OOPSLA 2014): two xor-shift-multiply
//! rounds, a bijection on `u64` in which every input bit affects every
//! output bit. Consecutive line numbers give uncorrelated hashes, so a
//! threshold on the hash samples a uniform random subset of lines.

/// Mixes `x` into a uniformly distributed 64-bit hash (a bijection).
#[inline(always)]
pub fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_injective_on_a_range() {
        let mut seen: Vec<u64> = (0..100_000).map(mix64).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 100_000);
    }

    #[test]
    fn threshold_samples_about_the_rate() {
        let t = u64::MAX / 100; // rate 0.01
        let n = (0..1_000_000u64).filter(|&x| mix64(x) < t).count();
        assert!((9_000..11_000).contains(&n), "{n}");
    }
}
