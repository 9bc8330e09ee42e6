//! Exact short stack distances by looking back over the recent records:
//! SHARDS' complement for the sizes below its sampling resolution.
//!
//! For a reference, walk the lines referenced before it (kept by the
//! caller, one per line reference), most recent first, counting the
//! distinct ones
//! (a small epoch-stamped hash set) until the referenced line itself turns
//! up: the count is then its exact stack distance. The walk stops early
//! when `cap` distinct lines have been seen (the distance is at least
//! `cap`) or after [`WINDOW`] line references (at least the count so far).
//! Its cost is that of the walk, so [`crate::shards`] calls it only for
//! a sample of the references.

/// Line references a look-back walks over at most: SHARDS' reference
/// sample sees distances whose previous use is at most this many line
/// references back.
pub const WINDOW: usize = 1 << 16;

/// 2^64 / φ, odd.
const FIB: u64 = 0x9e37_79b9_7f4a_7c15;

/// What the walk learnt about a reference's stack distance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reach {
    /// The exact distance.
    Exact(u64),
    /// At least this (the cap was reached).
    AtLeast(u64),
    /// At least this (the window started before the previous use).
    Truncated(u64),
}

/// The walker, with its reusable set of lines seen.
#[derive(Clone, Debug)]
pub(crate) struct LookBack {
    /// Distinct lines counted before stopping.
    cap: u64,
    /// `(line, epoch)`: a bucket is in use when its epoch is current.
    set: Vec<(u64, u32)>,
    shift: u32,
    epoch: u32,
}

impl LookBack {
    /// A walker that stops after `cap` distinct lines.
    pub(crate) fn new(cap: u64) -> Self {
        let buckets = (2 * cap.max(1)).next_power_of_two() as usize;
        LookBack {
            cap,
            set: vec![(0, 0); buckets],
            shift: 64 - buckets.trailing_zeros(),
            epoch: 0,
        }
    }

    /// Adds `line` to the set; whether it was new.
    #[inline(always)]
    fn insert(&mut self, line: u64) -> bool {
        let mask = self.set.len() - 1;
        let mut b = (line.wrapping_mul(FIB) >> self.shift) as usize;
        loop {
            let (k, e) = self.set[b];
            if e != self.epoch {
                self.set[b] = (line, self.epoch);
                return true;
            }
            if k == line {
                return false;
            }
            b = (b + 1) & mask;
        }
    }

    /// The stack distance of the reference to `before`'s successor, the
    /// line `target`: `before` holds the line references before it, most
    /// recent last, in up to three pieces (oldest first).
    pub(crate) fn distance(&mut self, target: u64, before: [&[u64]; 3]) -> Reach {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.set.fill((0, 0));
            self.epoch = 1;
        }
        let mut seen = 0u64;
        let mut prev = target;
        let [a, b, c] = before;
        let walk = c.iter().rev().chain(b.iter().rev()).chain(a.iter().rev());
        for &line in walk.take(WINDOW) {
            if let Some(r) = self.visit(line, target, &mut seen, &mut prev) {
                return r;
            }
        }
        Reach::Truncated(seen)
    }

    #[inline(always)]
    fn visit(&mut self, line: u64, target: u64, seen: &mut u64, prev: &mut u64) -> Option<Reach> {
        if line == target {
            return Some(Reach::Exact(*seen));
        }
        if line == *prev {
            return None;
        }
        *prev = line;
        if self.insert(line) {
            *seen += 1;
            if *seen >= self.cap {
                return Some(Reach::AtLeast(*seen));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Distinct lines between the previous use of the last line and it.
    fn naive(lines: &[u64]) -> Option<u64> {
        let (&t, before) = lines.split_last()?;
        let p = before.iter().rposition(|&l| l == t)?;
        let mut between: Vec<u64> = before[p + 1..].to_vec();
        between.sort_unstable();
        between.dedup();
        Some(between.len() as u64)
    }

    proptest! {
        #[test]
        fn finds_the_exact_distance_or_a_bound(
            lines in prop::collection::vec(0u64..64, 1..400),
            cap in 1u64..40,
            cut in 0usize..400,
        ) {
            let mut lb = LookBack::new(cap);
            for i in 0..lines.len() {
                // Split the history anywhere: the walk crosses over.
                let (old, cur) = lines[..i].split_at(cut.min(i));
                let (a, b) = old.split_at(old.len() / 2);
                let got = lb.distance(lines[i], [a, b, cur]);
                match naive(&lines[..=i]) {
                    Some(want) if want < cap => prop_assert_eq!(got, Reach::Exact(want)),
                    Some(_) => prop_assert_eq!(got, Reach::AtLeast(cap)),
                    None => match got {
                        Reach::Truncated(n) => prop_assert!(n < cap),
                        Reach::AtLeast(n) => prop_assert_eq!(n, cap),
                        Reach::Exact(_) => prop_assert!(false, "no previous use"),
                    },
                }
            }
        }
    }
}
