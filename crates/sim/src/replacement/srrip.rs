//! SRRIP (Jaleel et al., ISCA 2010), hit-priority variant: a 2-bit
//! re-reference prediction value (RRPV) per line, 0 on a hit, 2 on a fill;
//! the victim is the first allowed way at 3, after ageing the allowed
//! ways until one is. Only the ways in the mask age, so a partition does
//! not age another's lines.

use super::{ways_of, Replacement};

/// Largest RRPV (2 bits): "re-referenced in the distant future".
const MAX_RRPV: u8 = 3;
/// RRPV of a newly filled line: "long" re-reference interval.
const INSERT_RRPV: u8 = 2;

/// Static RRIP with 2-bit RRPVs and insertion at 2.
#[derive(Clone, Debug)]
pub struct Srrip {
    ways: usize,
    rrpv: Vec<u8>,
}

impl Srrip {
    /// State for `sets` x `ways` lines.
    pub fn new(sets: usize, ways: usize) -> Self {
        Srrip {
            ways,
            rrpv: vec![MAX_RRPV; sets * ways],
        }
    }

    /// The RRPV of a line (for tests and inspection).
    pub fn rrpv(&self, set: usize, way: usize) -> u8 {
        self.rrpv[set * self.ways + way]
    }
}

impl Replacement for Srrip {
    #[inline]
    fn on_hit(&mut self, set: usize, way: usize) {
        self.rrpv[set * self.ways + way] = 0;
    }

    #[inline]
    fn on_fill(&mut self, set: usize, way: usize) {
        self.rrpv[set * self.ways + way] = INSERT_RRPV;
    }

    fn victim(&mut self, set: usize, mask: u64) -> usize {
        let r = &mut self.rrpv[set * self.ways..(set + 1) * self.ways];
        loop {
            if let Some(w) = ways_of(mask).find(|&w| r[w] >= MAX_RRPV) {
                return w;
            }
            for w in ways_of(mask) {
                r[w] += 1;
            }
        }
    }

    fn on_invalidate(&mut self, set: usize, way: usize) {
        self.rrpv[set * self.ways + way] = MAX_RRPV;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_until_a_distant_line_appears() {
        let mut p = Srrip::new(1, 4);
        for w in 0..4 {
            p.on_fill(0, w);
        }
        p.on_hit(0, 2);
        // All at 2 except way 2 at 0: one ageing round makes ways 0, 1, 3 distant.
        assert_eq!(p.victim(0, 0b1111), 0);
        assert_eq!(p.rrpv(0, 2), 1);
        assert_eq!(p.rrpv(0, 3), 3);
    }

    #[test]
    fn ages_only_the_masked_ways() {
        let mut p = Srrip::new(1, 4);
        for w in 0..4 {
            p.on_fill(0, w);
        }
        assert_eq!(p.victim(0, 0b1100), 2);
        assert_eq!(p.rrpv(0, 0), 2);
        assert_eq!(p.rrpv(0, 1), 2);
        assert_eq!(p.rrpv(0, 3), 3);
    }
}
