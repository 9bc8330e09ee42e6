//! Exact fully associative LRU curves in one pass: every reference's stack
//! distance from an [`LruStack`], into a [`StackHistogram`].
//!
//! A reference to the same line as the reference just before it has
//! distance 0 and leaves the stack unchanged, so it skips the stack
//! entirely (a large share of real programs' references).
//!
//! Once the stack holds [`QUEUE_FROM_LINES`] lines (its hash table then
//! outgrows a host core's private cache), the other references wait in a
//! short queue ([`AHEAD`] deep) before they reach the stack: a line's
//! hash bucket is prefetched when it enters, so that by the time the
//! stack looks it up the host has had [`AHEAD`] references' worth of time
//! to fetch it (a large footprint otherwise waits on a host cache miss
//! per reference; a small one gains nothing and would pay for the queue).
//! The stack still sees every reference in trace order, so the histogram
//! is unchanged.

use cachepart_trace::Record;

use crate::error::Result;
use crate::histogram::StackHistogram;
use crate::options::{LineFeed, Options};
use crate::stack::LruStack;

/// References queued ahead of the stack (a power of two).
const AHEAD: usize = 8;

/// Lines held from which references are queued (the table then has at
/// least 64 Ki buckets of 16 bytes: a megabyte, a host core's L2 here).
const QUEUE_FROM_LINES: usize = 1 << 15;

/// The references waiting for the stack, oldest first.
struct Ahead {
    lines: [u64; AHEAD],
    /// References queued so far.
    queued: usize,
    /// References handed on so far (the oldest waiting is `done`).
    done: usize,
}

impl Ahead {
    fn is_empty(&self) -> bool {
        self.queued == self.done
    }

    /// Queues `line`; when the queue was full, hands on the oldest line.
    #[inline(always)]
    fn push(&mut self, line: u64) -> Option<u64> {
        let out = if self.queued - self.done == AHEAD {
            self.pop()
        } else {
            None
        };
        self.lines[self.queued % AHEAD] = line;
        self.queued += 1;
        out
    }

    /// Hands on the oldest line, if any.
    #[inline(always)]
    fn pop(&mut self) -> Option<u64> {
        if self.is_empty() {
            return None;
        }
        let line = self.lines[self.done % AHEAD];
        self.done += 1;
        Some(line)
    }
}

/// Builds a [`StackHistogram`] record by record.
pub struct FullyAssociative {
    line_bytes: u64,
    feed: LineFeed,
    stack: LruStack,
    counts: Vec<u64>,
    cold: u64,
    prev: u64,
    /// References waiting for the stack (once it is large).
    ahead: Ahead,
}

impl FullyAssociative {
    /// A builder for `opts` (checked).
    pub fn new(opts: &Options) -> Result<Self> {
        opts.check()?;
        Ok(FullyAssociative {
            line_bytes: opts.line_bytes,
            feed: LineFeed::new(opts),
            stack: LruStack::new(),
            counts: vec![0; 1024],
            cold: 0,
            prev: u64::MAX,
            ahead: Ahead {
                lines: [0; AHEAD],
                queued: 0,
                done: 0,
            },
        })
    }

    /// Adds one record.
    #[inline]
    pub fn push(&mut self, r: Record) {
        let FullyAssociative {
            feed,
            stack,
            counts,
            cold,
            prev,
            ahead,
            ..
        } = self;
        feed.push(r, |line| {
            if line == *prev {
                counts[0] += 1;
                return;
            }
            *prev = line;
            if ahead.is_empty() && stack.len() < QUEUE_FROM_LINES {
                reference(stack, counts, cold, line);
                return;
            }
            stack.prefetch(line);
            if let Some(oldest) = ahead.push(line) {
                reference(stack, counts, cold, oldest);
            }
        });
    }

    /// Adds every record of `records`.
    pub fn extend<I: IntoIterator<Item = Record>>(&mut self, records: I) {
        for r in records {
            self.push(r);
        }
    }

    /// The histogram of the records added.
    pub fn finish(mut self) -> StackHistogram {
        while let Some(line) = self.ahead.pop() {
            reference(&mut self.stack, &mut self.counts, &mut self.cold, line);
        }
        StackHistogram::new(self.line_bytes, self.counts, self.cold, self.feed.totals)
    }
}

/// A reference to another line than the previous reference's (kept out
/// of line, so that the per-record loop around it stays small).
#[inline(never)]
fn reference(stack: &mut LruStack, counts: &mut Vec<u64>, cold: &mut u64, line: u64) {
    match stack.access(line) {
        Some(d) => {
            let d = d as usize;
            if d >= counts.len() {
                counts.resize((d + 1).max(2 * counts.len()), 0);
            }
            counts[d] += 1;
        }
        None => *cold += 1,
    }
}

/// The exact stack-distance histogram of `records` (one pass): the misses
/// of a fully associative LRU cache at every size.
///
/// ```
/// use cachepart_curves::{fully_associative, Options};
/// use cachepart_trace::{Kind, Record};
/// let recs = [0x0u64, 0x40, 0x0, 0x80, 0x40]
///     .map(|a| Record::access(Kind::Load, a, 8, 0).unwrap());
/// let h = fully_associative(recs, &Options::default()).unwrap();
/// assert_eq!(h.cold, 3);
/// assert_eq!(h.misses_at_lines(1), 5);
/// assert_eq!(h.misses_at_lines(2), 4); // 0x40 is 2 lines deep at its reuse
/// assert_eq!(h.misses_at_lines(3), 3);
/// ```
pub fn fully_associative<I: IntoIterator<Item = Record>>(
    records: I,
    opts: &Options,
) -> Result<StackHistogram> {
    let mut b = FullyAssociative::new(opts)?;
    b.extend(records);
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_trace::Kind;

    /// The histogram of `lines` with every reference handed straight to
    /// the stack, in order (no queue).
    fn direct(lines: &[u64]) -> (Vec<u64>, u64) {
        let (mut stack, mut counts, mut cold) = (LruStack::new(), vec![0; 1024], 0);
        let mut prev = u64::MAX;
        for &l in lines {
            if l == prev {
                counts[0] += 1;
                continue;
            }
            prev = l;
            reference(&mut stack, &mut counts, &mut cold, l);
        }
        while counts.last() == Some(&0) {
            counts.pop();
        }
        (counts, cold)
    }

    /// Enough distinct lines for the queue to start, then references that
    /// reuse them at every distance, with runs of one line and a tail
    /// shorter than the queue: the queue changes nothing.
    #[test]
    fn the_queue_keeps_every_distance() {
        let lines_held = 3 * QUEUE_FROM_LINES as u64;
        for n in [1000usize, 200_003, 200_005, 200_010] {
            let mut x = 0x2545_f491_4f6c_dd1du64;
            let lines: Vec<u64> = (0..n)
                .map(|i| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    match i % 7 {
                        0 => (i as u64 / 7) % lines_held,
                        1 => (x >> 40) % 64,
                        _ => x % lines_held,
                    }
                })
                .collect();
            let recs = lines
                .iter()
                .map(|&l| Record::access(Kind::Load, l * 64, 8, 0).unwrap());
            let h = fully_associative(recs, &Options::default()).unwrap();
            let (counts, cold) = direct(&lines);
            assert_eq!(h.accesses, n as u64);
            assert_eq!((h.counts, h.cold), (counts, cold), "{n} references");
        }
    }
}
