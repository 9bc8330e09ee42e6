//! The instruction window of a capture (`trace capture --skip N
//! --instructions M`): records of the program's first `skip` instructions
//! are dropped (its start-up), then records pass until `instructions` more
//! have been recorded, and the capture stops the program there.
//!
//! The window is cut at record boundaries: the first record kept is the
//! first whose instructions reach past `skip` (kept whole, with its gap:
//! up to one record's instructions from before `skip`), and the last is
//! the one with which the recorded instructions reach `instructions`.

use cachepart_trace::{Counts, Record};

/// What to do with one record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Admit {
    /// Before the window: drop it.
    Before,
    /// In the window: keep it.
    Keep,
    /// The window's last record: keep it, then stop the program.
    Last,
    /// After the window (records still in the pipe): drop it.
    After,
}

/// A window's state as records pass.
#[derive(Clone, Debug)]
pub(crate) struct Window {
    skip: u64,
    limit: Option<u64>,
    seen: u64,
    kept: Counts,
    ended: bool,
}

impl Window {
    /// Skip `skip` instructions, then record `limit` (`None`: to the end).
    pub(crate) fn new(skip: u64, limit: Option<u64>) -> Window {
        Window {
            skip,
            limit,
            seen: 0,
            kept: Counts::default(),
            ended: false,
        }
    }

    /// Whether the window passes everything (no skip, no limit).
    pub(crate) fn is_whole(&self) -> bool {
        self.skip == 0 && self.limit.is_none()
    }

    /// Decides on the next record.
    pub(crate) fn admit(&mut self, r: Record) -> Admit {
        if self.ended {
            return Admit::After;
        }
        self.seen = self.seen.saturating_add(r.instructions());
        if self.seen <= self.skip && self.skip > 0 {
            return Admit::Before;
        }
        self.kept.add(r);
        match self.limit {
            Some(n) if self.kept.instructions >= n => {
                self.ended = true;
                Admit::Last
            }
            _ => Admit::Keep,
        }
    }

    /// The records kept so far.
    pub(crate) fn kept(&self) -> &Counts {
        &self.kept
    }

    /// Instructions of every record seen, kept or not.
    pub(crate) fn seen(&self) -> u64 {
        self.seen
    }

    /// Whether the window's end was reached (the program is to be stopped).
    #[cfg(test)]
    fn ended(&self) -> bool {
        self.ended
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_trace::Kind;

    fn load(gap: u32) -> Record {
        Record::access(Kind::Load, 0x1000, 8, gap).unwrap()
    }

    #[test]
    fn skips_then_keeps_then_ends() {
        // ten loads, each after 10 instructions
        let mut w = Window::new(25, Some(30));
        let got: Vec<Admit> = (0..10).map(|_| w.admit(load(10))).collect();
        use Admit::*;
        // 10, 20 before; 30 reaches past 25 (kept whole); 40, 50 kept
        // (30 kept instructions at 50); then after
        assert_eq!(
            got,
            [Before, Before, Keep, Keep, Last, After, After, After, After, After]
        );
        assert_eq!(w.kept().records, 3);
        assert_eq!(w.kept().instructions, 30);
        assert!(w.ended());
    }

    #[test]
    fn the_whole_window_keeps_everything() {
        let mut w = Window::new(0, None);
        assert!(w.is_whole());
        for _ in 0..100 {
            assert_eq!(w.admit(load(3)), Admit::Keep);
        }
        assert_eq!(w.kept().instructions, 300);
        assert!(!w.ended());
    }

    #[test]
    fn a_limit_without_skip_counts_from_the_start() {
        let mut w = Window::new(0, Some(1));
        assert_eq!(
            w.admit(load(0)),
            Admit::Keep,
            "a load alone retires nothing"
        );
        assert_eq!(w.admit(load(1)), Admit::Last);
    }
}
