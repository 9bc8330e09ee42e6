//! Exact LRU: each line carries the time of its last use; the victim is
//! the allowed way used longest ago.

use super::{ways_of, Replacement};

/// Exact least-recently-used replacement (per-line timestamps).
#[derive(Clone, Debug)]
pub struct Lru {
    ways: usize,
    stamp: Vec<u64>,
    clock: u64,
}

impl Lru {
    /// State for `sets` x `ways` lines.
    pub fn new(sets: usize, ways: usize) -> Self {
        Lru {
            ways,
            stamp: vec![0; sets * ways],
            clock: 1,
        }
    }

    #[inline]
    fn touch(&mut self, set: usize, way: usize) {
        self.stamp[set * self.ways + way] = self.clock;
        self.clock += 1;
    }
}

impl Replacement for Lru {
    #[inline]
    fn on_hit(&mut self, set: usize, way: usize) {
        self.touch(set, way);
    }

    /// The set's most recent line stays the most recent: nothing to do.
    #[inline]
    fn on_repeat_hit(&mut self, _set: usize, _way: usize) {}

    #[inline]
    fn on_fill(&mut self, set: usize, way: usize) {
        self.touch(set, way);
    }

    #[inline]
    fn victim(&mut self, set: usize, mask: u64) -> usize {
        let stamps = &self.stamp[set * self.ways..(set + 1) * self.ways];
        if mask.count_ones() as usize == self.ways {
            // The first oldest way, without a data-dependent branch.
            let mut best = 0;
            let mut oldest = stamps[0];
            for (w, &s) in stamps.iter().enumerate().skip(1) {
                let older = s < oldest;
                best = if older { w } else { best };
                oldest = if older { s } else { oldest };
            }
            best
        } else {
            ways_of(mask)
                .min_by_key(|&w| stamps[w])
                .expect("victim mask is never empty")
        }
    }

    fn on_invalidate(&mut self, set: usize, way: usize) {
        self.stamp[set * self.ways + way] = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used_within_mask() {
        let mut p = Lru::new(1, 4);
        for w in 0..4 {
            p.on_fill(0, w);
        }
        p.on_hit(0, 0);
        assert_eq!(p.victim(0, 0b1111), 1);
        assert_eq!(p.victim(0, 0b1101), 2);
        assert_eq!(p.victim(0, 0b1001), 3);
        p.on_hit(0, 1);
        assert_eq!(p.victim(0, 0b1111), 2);
    }
}
