//! What a curve counts: the line size, and which records are references.
//!
//! A record is a *reference* when it is a data access (load, store or
//! modify) or, with [`Options::include_ifetch`], an instruction fetch.
//! Escape records are never references (a Dinero `Flush` does not flush the
//! modelled cache) but their instructions count. A reference touches every
//! cache line its bytes span, so an access that crosses a line boundary is
//! two line references, as in a real cache; `accesses` in every curve
//! counts line references.

use cachepart_trace::Record;
use serde::{Deserialize, Serialize};

use crate::error::{CurveError, Result};
use crate::raw::{decode, skip_fetch};

/// The parameters shared by every curve builder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Options {
    /// Cache line size in bytes: a power of two from 8 to 4096.
    pub line_bytes: u64,
    /// Count instruction fetches as references (data accesses only when
    /// false, the default).
    pub include_ifetch: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            line_bytes: 64,
            include_ifetch: false,
        }
    }
}

impl Options {
    /// Checks the line size.
    pub fn check(&self) -> Result<()> {
        if !self.line_bytes.is_power_of_two() || !(8..=4096).contains(&self.line_bytes) {
            return Err(CurveError::LineSize(self.line_bytes));
        }
        Ok(())
    }

    /// log2 of the line size.
    pub fn line_shift(&self) -> u32 {
        self.line_bytes.trailing_zeros()
    }

    /// The same options with instruction fetches counted or not.
    pub fn with_ifetch(mut self, yes: bool) -> Self {
        self.include_ifetch = yes;
        self
    }

    /// The same options with another line size.
    pub fn with_line_bytes(mut self, bytes: u64) -> Self {
        self.line_bytes = bytes;
        self
    }
}

/// Reference and instruction counts of a pass over a trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// Line references.
    pub accesses: u64,
    /// Instructions (see the trace format: gaps, fetches, `InstrGap`s).
    pub instructions: u64,
}

/// Turns records into line references: calls `f` with each referenced line
/// number (address / line size), in trace order.
pub(crate) struct LineFeed {
    shift: u32,
    ifetch: bool,
    /// Counts so far.
    pub totals: Totals,
}

impl LineFeed {
    pub(crate) fn new(opts: &Options) -> Self {
        LineFeed {
            shift: opts.line_shift(),
            ifetch: opts.include_ifetch,
            totals: Totals::default(),
        }
    }

    /// Feeds one record.
    #[inline(always)]
    pub(crate) fn push(&mut self, r: Record, mut f: impl FnMut(u64)) {
        if skip_fetch(r, self.ifetch) {
            // Most records of a full trace: one instruction, no reference.
            self.totals.instructions += u64::from(r.gap()) + 1;
            return;
        }
        let d = decode(r, self.shift, self.ifetch);
        self.totals.instructions += d.gap_instructions;
        if d.is_escape {
            self.totals.instructions += r.instructions() - d.gap_instructions;
            return;
        }
        f(d.first);
        if d.last != d.first {
            for line in d.first + 1..=d.last {
                f(line);
            }
        }
        self.totals.accesses += d.last - d.first + 1;
    }
}

/// Feeds every record of `records` to `f` as line references.
#[inline]
pub(crate) fn for_each_line<I: IntoIterator<Item = Record>>(
    records: I,
    opts: &Options,
    mut f: impl FnMut(u64),
) -> Totals {
    let mut feed = LineFeed::new(opts);
    for r in records {
        feed.push(r, &mut f);
    }
    feed.totals
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_trace::{Event, Kind};

    #[test]
    fn splits_crossing_accesses_and_counts_instructions() {
        let recs = [
            Record::access(Kind::Load, 0x103c, 8, 2).unwrap(), // lines 0x40, 0x41
            Record::access(Kind::Ifetch, 0x2000, 4, 0).unwrap(),
            Record::event(Event::InstrGap(100), 0).unwrap(),
            Record::access(Kind::Store, 0x1000, 8, 0).unwrap(),
        ];
        let mut lines = Vec::new();
        let t = for_each_line(recs, &Options::default(), |l| lines.push(l));
        assert_eq!(lines, vec![0x40, 0x41, 0x40]);
        assert_eq!(t.accesses, 3);
        assert_eq!(t.instructions, 2 + 1 + 100);
        let mut lines = Vec::new();
        let opts = Options::default().with_ifetch(true);
        let t = for_each_line(recs, &opts, |l| lines.push(l));
        assert_eq!(lines, vec![0x40, 0x41, 0x80, 0x40]);
        assert_eq!(t.accesses, 4);
    }

    #[test]
    fn rejects_bad_line_sizes() {
        assert!(Options::default().with_line_bytes(48).check().is_err());
        assert!(Options::default().with_line_bytes(4).check().is_err());
        assert!(Options::default().check().is_ok());
    }
}
