//! Counting what a stream of records holds: accesses by kind,
//! instructions and page footprint.

use std::collections::HashSet;

use serde::Serialize;

use crate::record::{Kind, Record};

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
        match r.kind() {
            Kind::Load => self.loads += 1,
            Kind::DepLoad => {
                self.loads += 1;
                self.dependent_loads += 1;
            }
            Kind::Store => self.stores += 1,
            Kind::Ifetch => self.ifetches += 1,
            Kind::Modify => self.modifies += 1,
            Kind::Escape => self.escapes += 1,
        }
    }

    /// Adds every record of `records`, as [`Counts::add`] of each in turn
    /// would: one pass that tallies the kinds by code, for the capture
    /// routes that check a run of raw words at a time.
    pub fn add_all(&mut self, records: &[Record]) {
        let mut by_code = [0u64; 8];
        let mut instructions = 0u64;
        for r in records {
            by_code[r.kind_code() as usize] += 1;
            instructions += r.instructions();
        }
        let n = |k: Kind| by_code[k as usize];
        self.records += records.len() as u64;
        self.instructions += instructions;
        self.loads += n(Kind::Load) + n(Kind::DepLoad);
        self.dependent_loads += n(Kind::DepLoad);
        self.stores += n(Kind::Store);
        self.ifetches += n(Kind::Ifetch);
        self.modifies += n(Kind::Modify);
        // codes 6 and 7 never reach a record; `Record::kind` reads them as
        // escapes
        self.escapes += n(Kind::Escape) + by_code[6] + by_code[7];
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
