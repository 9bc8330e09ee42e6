//! Exact short stack distances by looking back over the recent records:
//! SHARDS' complement for the sizes below its sampling resolution.
//!
//! For a reference at position `pos` of a record window, walk the lines
//! referenced before it, most recent first, counting the distinct ones
//! (a small epoch-stamped hash set) until the referenced line itself turns
//! up: the count is then its exact stack distance. The walk stops early
//! when `cap` distinct lines have been seen (the distance is at least
//! `cap`) or after [`WINDOW`] records (at least the count so far).
//! Its cost is that of the walk, so [`crate::shards`] calls it only for
//! a sample of the references.

use cachepart_trace::Record;

use crate::raw::decode;

/// Records a look-back walks over at most (before the reference's own):
/// SHARDS' reference sample sees distances whose previous use is at most
/// this many records back.
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

    /// The stack distance of the reference to `target` made by
    /// `recs.1[pos]` (one of the lines that record touches), from the
    /// lines of `recs.1[pos]` before `target`, of `recs.1[..pos]` and of
    /// `recs.0` (the records before `recs.1`).
    pub(crate) fn distance(
        &mut self,
        recs: (&[Record], &[Record]),
        pos: usize,
        target: u64,
        shift: u32,
        ifetch: bool,
    ) -> Reach {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.set.fill((0, 0));
            self.epoch = 1;
        }
        let mut seen = 0u64;
        let mut prev = target;
        // Lines of the target's own record that come before it.
        let own = decode(recs.1[pos], shift, ifetch);
        let mut line = target;
        while line > own.first {
            line -= 1;
            if let Some(r) = self.visit(line, target, &mut seen, &mut prev) {
                return r;
            }
        }
        let before = recs.1[..pos].iter().rev().chain(recs.0.iter().rev());
        for &r in before.take(WINDOW) {
            // Most records are fetches (not references) or touch one line:
            // test those cheaply first.
            let x = r.raw();
            let kind = (x >> 48) & 7;
            if kind == 4 || (kind == 2 && !ifetch) {
                continue;
            }
            let d = decode(r, shift, ifetch);
            if d.first == d.last {
                if let Some(r) = self.visit(d.first, target, &mut seen, &mut prev) {
                    return r;
                }
                continue;
            }
            let mut line = d.last;
            loop {
                if let Some(r) = self.visit(line, target, &mut seen, &mut prev) {
                    return r;
                }
                if line == d.first {
                    break;
                }
                line -= 1;
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
    use cachepart_trace::Kind;
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
            accs in prop::collection::vec((0u64..64, 1u32..100, any::<bool>()), 1..400),
            cap in 1u64..40,
        ) {
            // Loads of 1..99 bytes (some crossing lines) with fetches in
            // between, which are not references here.
            let recs: Vec<Record> = accs
                .iter()
                .map(|&(l, size, fetch)| {
                    let kind = if fetch { Kind::Ifetch } else { Kind::Load };
                    Record::access(kind, l * 48, size, 0).unwrap()
                })
                .collect();
            let mut lb = LookBack::new(cap);
            let mut lines = Vec::new();
            for (pos, &r) in recs.iter().enumerate() {
                let d = decode(r, 6, false);
                if !d.is_ref {
                    continue;
                }
                for target in d.first..=d.last {
                    lines.push(target);
                    // Split the window anywhere: the walk crosses over.
                    let cut = pos / 2;
                    let got = lb.distance((&recs[..cut], &recs[cut..]), pos - cut, target, 6, false);
                    match naive(&lines) {
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
}
