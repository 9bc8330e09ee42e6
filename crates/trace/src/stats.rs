//! Counting what a stream of records holds: accesses by kind,
//! instructions and page footprint.

use std::collections::HashSet;

use serde::Serialize;

use crate::record::{kind_of_code, Kind, Record};

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Counts over a stream of records.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Records, escapes included.
    pub records: u64,
    /// Load records, dependent loads included.
    pub loads: u64,
    /// Of the loads, those marked dependent ([`Kind::DepLoad`]); left
    /// out of JSON when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub dependent_loads: u64,
    /// Store records.
    pub stores: u64,
    /// Instruction fetch records.
    pub ifetches: u64,
    /// Modify records.
    pub modifies: u64,
    /// Escape records.
    pub escapes: u64,
    /// Instructions (see [`Record::instructions`]).
    pub instructions: u64,
}

impl Counts {
    /// Accesses: records that are not escapes.
    pub fn accesses(&self) -> u64 {
        self.records - self.escapes
    }

    /// Adds one record.
    #[inline]
    pub fn add(&mut self, r: Record) {
        self.records += 1;
        self.instructions += r.instructions();
        self.add_kind(r.kind(), 1);
    }

    /// Adds every record of `records`, as [`Counts::add`] of each in turn
    /// would: one pass that tallies the kinds, for the capture routes that
    /// check a run of raw words at a time and for `trace info`'s frames.
    pub fn add_all(&mut self, records: &[Record]) {
        let mut by_code = [0u64; 8];
        let mut instructions = 0u64;
        for r in records {
            by_code[r.kind_code() as usize] += 1;
            instructions += r.instructions();
        }
        self.records += records.len() as u64;
        self.instructions += instructions;
        for (code, n) in (0u64..).zip(by_code) {
            self.add_kind(kind_of_code(code), n);
        }
    }

    /// Counts `n` records of kind `kind` (a dependent load is a load too).
    #[inline]
    fn add_kind(&mut self, kind: Kind, n: u64) {
        match kind {
            Kind::Load => self.loads += n,
            Kind::DepLoad => {
                self.loads += n;
                self.dependent_loads += n;
            }
            Kind::Store => self.stores += n,
            Kind::Ifetch => self.ifetches += n,
            Kind::Modify => self.modifies += n,
            Kind::Escape => self.escapes += n,
        }
    }

    /// Adds another count.
    pub fn merge(&mut self, o: &Counts) {
        self.records += o.records;
        self.loads += o.loads;
        self.dependent_loads += o.dependent_loads;
        self.stores += o.stores;
        self.ifetches += o.ifetches;
        self.modifies += o.modifies;
        self.escapes += o.escapes;
        self.instructions += o.instructions;
    }
}

/// The set of pages (or lines) touched by accesses, for a power-of-two
/// granule.
#[derive(Clone, Debug)]
pub struct Footprint {
    shift: u32,
    pages: HashSet<u64>,
}

impl Footprint {
    /// A footprint counted in units of `granule` bytes (a power of two:
    /// 4096 for pages, 64 for lines).
    pub fn new(granule: u64) -> Footprint {
        Footprint {
            shift: granule.max(1).trailing_zeros(),
            pages: HashSet::new(),
        }
    }

    /// Adds the granules an access touches (an escape touches none).
    #[inline]
    pub fn add(&mut self, r: Record) {
        if r.is_access() {
            let first = r.addr() >> self.shift;
            let last = (r.addr().wrapping_add(u64::from(r.size()) - 1)) >> self.shift;
            self.pages.insert(first);
            if last != first {
                self.pages.insert(last);
            }
        }
    }

    /// Adds another footprint of the same granule.
    pub fn merge(&mut self, o: Footprint) {
        if self.pages.len() < o.pages.len() {
            let mine = std::mem::replace(&mut self.pages, o.pages);
            self.pages.extend(mine);
        } else {
            self.pages.extend(o.pages);
        }
    }

    /// Number of distinct granules touched.
    pub fn len(&self) -> u64 {
        self.pages.len() as u64
    }

    /// Whether nothing was touched.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::record::Event;

    proptest! {
        /// `Counts::add_all` of a run of records equals `Counts::add` of each:
        /// every kind, gaps, and `InstrGap` escapes with any payload.
        #[test]
        fn counts_of_a_slice_are_the_counts_of_each_record(
            picks in proptest::collection::vec((0u8..7, 0u64..(1 << 47), 0u32..64), 0..300)
        ) {
            let kinds = [Kind::Load, Kind::Store, Kind::Ifetch, Kind::Modify, Kind::DepLoad];
            let records: Vec<Record> = picks
                .iter()
                .map(|&(k, x, gap)| match k {
                    5 => Record::event(Event::InstrGap(x), gap).unwrap(),
                    6 => Record::event(Event::ThreadSwitch(x), gap).unwrap(),
                    k => Record::access(kinds[usize::from(k)], x, 1 + (x % 64) as u32, gap).unwrap(),
                })
                .collect();
            let mut one_by_one = Counts::default();
            for &r in &records {
                one_by_one.add(r);
            }
            let mut all = Counts::default();
            all.add_all(&records[..records.len() / 2]);
            all.add_all(&records[records.len() / 2..]);
            prop_assert_eq!(&all, &one_by_one);
            // `Record::instructions`, written out: the gap, one for a
            // fetch, and an `InstrGap`'s payload
            let spelled: u64 = picks
                .iter()
                .map(|&(k, x, gap)| u64::from(gap) + u64::from(k == 2) + if k == 5 { x } else { 0 })
                .sum();
            prop_assert_eq!(all.instructions, spelled);
        }
    }
}
