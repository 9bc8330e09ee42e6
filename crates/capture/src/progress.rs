//! Live figures of a running capture ([`CaptureProgress`]), for a progress
//! display on another thread, and the decoding side's [`Tally`], which
//! publishes them every so many records so that the counting costs next
//! to nothing per record.

use std::sync::atomic::{AtomicU64, Ordering};

use cachepart_trace::Record;

/// What a capture has seen so far. Read it from any thread while the
/// capture runs ([`CaptureOptions::progress`](crate::CaptureOptions::progress)).
#[derive(Debug, Default)]
pub struct CaptureProgress {
    instructions: AtomicU64,
    kept: AtomicU64,
}

impl CaptureProgress {
    /// Instructions of the program seen so far, kept or skipped.
    pub fn instructions_seen(&self) -> u64 {
        self.instructions.load(Ordering::Relaxed)
    }

    /// Records kept (written to the trace or passed to the sink) so far.
    pub fn records_kept(&self) -> u64 {
        self.kept.load(Ordering::Relaxed)
    }
}

/// Records between two publications.
const EVERY: u64 = 1 << 16;

/// Counts records on the decoding thread and publishes the totals into a
/// [`CaptureProgress`] every [`EVERY`] records and when dropped.
pub(crate) struct Tally<'a> {
    to: &'a CaptureProgress,
    instructions: u64,
    kept: u64,
    pending: u64,
}

impl<'a> Tally<'a> {
    pub(crate) fn new(to: &'a CaptureProgress) -> Tally<'a> {
        Tally {
            to,
            instructions: 0,
            kept: 0,
            pending: 0,
        }
    }

    /// One record seen, `kept` or dropped by the window.
    pub(crate) fn note(&mut self, r: Record, kept: bool) {
        self.instructions = self.instructions.saturating_add(r.instructions());
        self.kept += u64::from(kept);
        self.pending += 1;
        if self.pending >= EVERY {
            self.publish();
        }
    }

    fn publish(&mut self) {
        self.pending = 0;
        self.to
            .instructions
            .store(self.instructions, Ordering::Relaxed);
        self.to.kept.store(self.kept, Ordering::Relaxed);
    }
}

impl Drop for Tally<'_> {
    fn drop(&mut self) {
        self.publish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_trace::Kind;

    #[test]
    fn totals_are_published_in_batches_and_at_the_end() {
        let p = CaptureProgress::default();
        let r = Record::access(Kind::Load, 64, 8, 3).unwrap();
        {
            let mut t = Tally::new(&p);
            for i in 0..EVERY {
                t.note(r, i % 2 == 0);
            }
            // one batch published
            assert_eq!(p.instructions_seen(), 3 * EVERY);
            assert_eq!(p.records_kept(), EVERY / 2);
            t.note(r, true);
            assert_eq!(p.records_kept(), EVERY / 2, "not yet published");
        }
        assert_eq!(p.instructions_seen(), 3 * (EVERY + 1));
        assert_eq!(p.records_kept(), EVERY / 2 + 1);
    }
}
