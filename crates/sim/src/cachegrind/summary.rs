//! cachegrind's nine totals (`Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw`):
//! computed from the simulator's counts, or read from the `summary:` line
//! of a `cachegrind.out` file, so that the two can be compared field by
//! field.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{Result, SimError};
use crate::hierarchy::HierarchyStats;
use crate::stats::AccessKind;

/// cachegrind's totals (the `summary:` line of its output file).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct CachegrindSummary {
    pub ir: u64,
    pub i1mr: u64,
    pub ilmr: u64,
    pub dr: u64,
    pub d1mr: u64,
    pub dlmr: u64,
    pub dw: u64,
    pub d1mw: u64,
    pub dlmw: u64,
}

/// The event names, in cachegrind's order.
pub const EVENTS: [&str; 9] = [
    "Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw",
];

impl CachegrindSummary {
    /// The totals of a cachegrind-mode hierarchy.
    pub fn from_stats(s: &HierarchyStats) -> Self {
        use AccessKind::*;
        CachegrindSummary {
            ir: s.l1i.refs(Instr),
            i1mr: s.l1i.misses(Instr),
            ilmr: s.llc.misses(Instr),
            dr: s.l1d.refs(Read),
            d1mr: s.l1d.misses(Read),
            dlmr: s.llc.misses(Read),
            dw: s.l1d.refs(Write),
            d1mw: s.l1d.misses(Write),
            dlmw: s.llc.misses(Write),
        }
    }

    /// The values in [`EVENTS`] order.
    pub fn values(&self) -> [u64; 9] {
        [
            self.ir, self.i1mr, self.ilmr, self.dr, self.d1mr, self.dlmr, self.dw, self.d1mw,
            self.dlmw,
        ]
    }

    /// The totals from values in [`EVENTS`] order (the inverse of
    /// [`CachegrindSummary::values`]).
    pub fn from_values(v: [u64; 9]) -> Self {
        let [ir, i1mr, ilmr, dr, d1mr, dlmr, dw, d1mw, dlmw] = v;
        CachegrindSummary {
            ir,
            i1mr,
            ilmr,
            dr,
            d1mr,
            dlmr,
            dw,
            d1mw,
            dlmw,
        }
    }

    /// Reads the totals from the text of a `cachegrind.out` file: the
    /// `events:` line names the columns of the `summary:` line.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = |m: &str| SimError::CachegrindOutput(m.to_string());
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|rest| rest.split_whitespace().collect::<Vec<_>>())
        };
        let events = field("events:").ok_or_else(|| bad("no events: line"))?;
        let values = field("summary:").ok_or_else(|| bad("no summary: line"))?;
        if events.len() != values.len() {
            return Err(bad("events: and summary: lines differ in length"));
        }
        let mut out = [0u64; 9];
        for (slot, name) in out.iter_mut().zip(EVENTS) {
            let i = events
                .iter()
                .position(|e| *e == name)
                .ok_or_else(|| bad(&format!("no {name} event (was --cache-sim=yes given?)")))?;
            *slot = values[i]
                .parse()
                .map_err(|_| bad(&format!("bad {name} count {:?}", values[i])))?;
        }
        Ok(Self::from_values(out))
    }
}

impl fmt::Display for CachegrindSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, v) in EVENTS.iter().zip(self.values()) {
            write!(f, "{name}={v} ")?;
        }
        Ok(())
    }
}
