//! Random replacement from a seeded, deterministic stream (SplitMix64):
//! the same seed gives the same victims on every run and platform.

use super::Replacement;
use crate::splitmix::SplitMix64;

/// Uniformly random victim among the allowed ways.
#[derive(Clone, Debug)]
pub struct RandomPolicy {
    rng: SplitMix64,
}

impl RandomPolicy {
    /// A stream seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        RandomPolicy {
            rng: SplitMix64::new(seed),
        }
    }
}

impl Replacement for RandomPolicy {
    #[inline]
    fn on_hit(&mut self, _set: usize, _way: usize) {}

    #[inline]
    fn on_fill(&mut self, _set: usize, _way: usize) {}

    fn victim(&mut self, _set: usize, mask: u64) -> usize {
        let mut k = self.rng.below(u64::from(mask.count_ones())) as u32;
        let mut m = mask;
        while k > 0 {
            m &= m - 1;
            k -= 1;
        }
        m.trailing_zeros() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn victims_stay_in_mask_and_cover_it() {
        let mut p = RandomPolicy::new(7);
        let mut seen = 0u64;
        for _ in 0..1000 {
            let w = p.victim(0, 0b1010_0110);
            assert!(0b1010_0110 & (1 << w) != 0);
            seen |= 1 << w;
        }
        assert_eq!(seen, 0b1010_0110);
    }

    #[test]
    fn same_seed_same_stream() {
        let mut a = RandomPolicy::new(42);
        let mut b = RandomPolicy::new(42);
        let va: Vec<usize> = (0..100).map(|_| a.victim(0, u64::MAX)).collect();
        let vb: Vec<usize> = (0..100).map(|_| b.victim(0, u64::MAX)).collect();
        assert_eq!(va, vb);
        let mut c = RandomPolicy::new(43);
        let vc: Vec<usize> = (0..100).map(|_| c.victim(0, u64::MAX)).collect();
        assert_ne!(va, vc);
    }
}
