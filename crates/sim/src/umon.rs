//! [`Umon`]: a utility monitor, as UCP (Qureshi and Patt, MICRO'06)
//! places one beside each core: an auxiliary tag directory with the LLC's
//! associativity and true LRU, kept for a sample of the LLC's sets
//! (dynamic set sampling), and one hit counter per LRU stack position.
//! An access that hits at position `p` (0 = most recently used) would
//! have hit in a private partition of `p + 1` ways or more, so the hits
//! at positions `0..w` are what the app would hit with `w` ways to
//! itself, whatever it is actually given: the monitor sees the app's own
//! references only, and is not disturbed by co-runners.
//!
//! The monitor is fed the app's demand references to the LLC (L2
//! misses), by line; write-backs are not references. Counters are
//! cumulative; [`Umon::take`] reads and clears them, scaled from the
//! sampled sets to the whole cache.

use crate::geometry::Geometry;

/// A utility monitor over a sample of the LLC's sets (see the module docs).
#[derive(Clone, Debug)]
pub struct Umon {
    geom: Geometry,
    ways: usize,
    /// Every `stride`-th set is monitored.
    stride: u64,
    /// Per monitored set, its blocks from most to least recently used.
    stacks: Vec<Vec<u64>>,
    hits: Vec<u64>,
    misses: u64,
}

/// What a monitor counted since it was last read, scaled to the whole
/// cache: `hits[p]` references hit at LRU stack position `p`; `misses`
/// hit at no position (they would miss with every way).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UmonCounts {
    /// Hits per stack position, most recently used first.
    pub hits: Vec<f64>,
    /// References that hit at no position.
    pub misses: f64,
}

impl Umon {
    /// A monitor of `geom`'s sets, about `sampled_sets` of them (every
    /// `sets / sampled_sets`-th; all sets when `sampled_sets` is 0 or at
    /// least the number of sets).
    pub fn new(geom: Geometry, sampled_sets: u32) -> Umon {
        let sets = geom.sets();
        let stride = if sampled_sets == 0 || u64::from(sampled_sets) >= sets {
            1
        } else {
            sets / u64::from(sampled_sets)
        };
        let monitored = sets.div_ceil(stride) as usize;
        let ways = geom.ways() as usize;
        Umon {
            geom,
            ways,
            stride,
            stacks: vec![Vec::with_capacity(ways); monitored],
            hits: vec![0; ways],
            misses: 0,
        }
    }

    /// One demand reference to the LLC line `block` (a line number, as
    /// the caches take it).
    #[inline]
    pub fn access(&mut self, block: u64) {
        let set = self.geom.set_of(block) as u64;
        if !set.is_multiple_of(self.stride) {
            return;
        }
        let stack = &mut self.stacks[(set / self.stride) as usize];
        match stack.iter().position(|&b| b == block) {
            Some(p) => {
                self.hits[p] += 1;
                stack[..=p].rotate_right(1);
            }
            None => {
                self.misses += 1;
                if stack.len() == self.ways {
                    stack.pop();
                }
                stack.insert(0, block);
            }
        }
    }

    /// The counts since the last call, scaled by the sampling stride;
    /// the counters restart from zero (the tag directory keeps its
    /// contents).
    pub fn take(&mut self) -> UmonCounts {
        let k = self.stride as f64;
        let out = UmonCounts {
            hits: self.hits.iter().map(|&h| h as f64 * k).collect(),
            misses: self.misses as f64 * k,
        };
        self.hits.iter_mut().for_each(|h| *h = 0);
        self.misses = 0;
        out
    }

    /// Sets monitored.
    pub fn monitored_sets(&self) -> usize {
        self.stacks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Misses of a private `w`-way true-LRU cache with `geom`'s sets,
    /// simulated directly: the oracle the stack counters must match.
    fn lru_misses(geom: &Geometry, w: usize, blocks: &[u64]) -> u64 {
        let mut sets: Vec<Vec<u64>> = vec![Vec::new(); geom.sets() as usize];
        let mut misses = 0;
        for &b in blocks {
            let s = &mut sets[geom.set_of(b)];
            if let Some(p) = s.iter().position(|&x| x == b) {
                s.remove(p);
            } else {
                misses += 1;
                if s.len() == w {
                    s.pop();
                }
            }
            s.insert(0, b);
        }
        misses
    }

    proptest! {
        /// With every set monitored, the hits at positions `0..w` are the
        /// hits of a `w`-way LRU cache, for every `w`.
        #[test]
        fn stack_counts_are_the_hits_of_every_lru_size(
            blocks in proptest::collection::vec(0u64..4096, 1..3000),
        ) {
            let geom = Geometry::new(64 * 16 * 8, 8, 64).unwrap();
            let mut u = Umon::new(geom, 0);
            for &b in &blocks {
                u.access(b);
            }
            let c = u.take();
            let n = blocks.len() as f64;
            for w in 1..=8 {
                let hits: f64 = c.hits[..w].iter().sum();
                prop_assert_eq!(n - hits, lru_misses(&geom, w, &blocks) as f64, "w = {}", w);
            }
            prop_assert_eq!(c.hits.iter().sum::<f64>() + c.misses, n);
        }
    }

    #[test]
    fn sampling_counts_only_the_monitored_sets_and_scales() {
        let geom = Geometry::new(64 * 64 * 4, 4, 64).unwrap();
        let mut u = Umon::new(geom, 16);
        assert_eq!(u.monitored_sets(), 16);
        // Block b maps to set b % 64; sets 0, 4, 8, ... are monitored.
        for _ in 0..3 {
            for b in 0..64u64 {
                u.access(b);
            }
        }
        let c = u.take();
        // 16 monitored blocks, each missing once then hitting twice at
        // the top of its stack, scaled by the stride 4.
        assert_eq!(c.misses, 16.0 * 4.0);
        assert_eq!(c.hits[0], 32.0 * 4.0);
        assert_eq!(
            u.take(),
            UmonCounts {
                hits: vec![0.0; 4],
                misses: 0.0
            }
        );
    }

    #[test]
    fn a_cyclic_sweep_over_more_lines_than_ways_never_hits() {
        // Five lines of one set in a 4-way LRU: every reference misses,
        // at every size up to 4 ways.
        let geom = Geometry::new(64 * 4 * 4, 4, 64).unwrap();
        let mut u = Umon::new(geom, 0);
        for _ in 0..10 {
            for k in 0..5u64 {
                u.access(k * 4);
            }
        }
        let c = u.take();
        assert_eq!(c.misses, 50.0);
        assert!(c.hits.iter().all(|&h| h == 0.0));
    }
}
