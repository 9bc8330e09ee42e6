//! Table-driven counts: each app's rates come from its row of a profile
//! table (PBBCache's metrics, one row per way count) at the number of LLC
//! ways it may fill *now*. The machine tells the source each app's way
//! count when it applies a plan ([`CounterSource::set_ways`]); before the
//! first plan, and in the default group, an app has every way.
//!
//! Nothing is interpolated: at `w` ways an app runs at the table's row for
//! `w`. As with [`FakeCounters`](super::FakeCounters), each read counts a
//! fixed nominal interval at the given clock, so the same table, plans and
//! reads give the same counts whatever the wall clock did. This is what
//! lets online controllers and `cachepart profile measure` be tested on a
//! machine without a PMU: the counts respond to partitioning.
//!
//! The table also gives what a utility monitor would have counted
//! ([`CounterSource::utility`]): with `m(w)` the fraction of references
//! that miss with `w` ways (`llcmpki / llcrpki` of row `w`, `m(0) = 1`,
//! made non-increasing), the last read's `R` references hit at stack
//! position `p` in `R x (m(p-1) - m(p))` and at none in `R x m(W)`.

use super::{CounterSource, Counts, FakeRates};
use crate::error::{Error, Result};
use std::collections::BTreeSet;
use std::time::Duration;

/// Counts from a profile table at each app's current way count.
#[derive(Clone, Debug)]
pub struct TableCounters {
    interval: Duration,
    /// Per app: its rates at `1..=W` ways (`rates[app][w - 1]`).
    rates: Vec<Vec<FakeRates>>,
    /// Per app: the ways it may fill now.
    ways: Vec<u32>,
    attached: BTreeSet<usize>,
    /// Per app: the references of its last read.
    last_refs: Vec<f64>,
}

impl TableCounters {
    /// Counts over `interval` per read; app `i` runs at `rates[i][w - 1]`
    /// with `w` ways (every app starts with all of its table's ways). Every
    /// app needs at least one row.
    pub fn new(interval: Duration, rates: Vec<Vec<FakeRates>>) -> Result<TableCounters> {
        if let Some(i) = rates.iter().position(Vec::is_empty) {
            return Err(Error::parse(
                "profile table",
                format!("app {i} has no row: expected one per way count 1..W"),
            ));
        }
        let ways = rates.iter().map(|r| r.len() as u32).collect();
        Ok(TableCounters {
            interval,
            last_refs: vec![0.0; rates.len()],
            rates,
            ways,
            attached: BTreeSet::new(),
        })
    }

    /// The ways app `app` runs with now (its table's row).
    pub fn ways_of(&self, app: usize) -> Option<u32> {
        self.ways.get(app).copied()
    }
}

impl CounterSource for TableCounters {
    fn attach(&mut self, app: usize, _pid: u32) -> Result<()> {
        if app >= self.rates.len() {
            return Err(Error::parse(
                "profile table",
                format!(
                    "app {app}: the table gives rows for {} apps",
                    self.rates.len()
                ),
            ));
        }
        self.attached.insert(app);
        Ok(())
    }

    fn detach(&mut self, app: usize) {
        self.attached.remove(&app);
    }

    fn set_ways(&mut self, app: usize, ways: u32) {
        if let (Some(w), Some(r)) = (self.ways.get_mut(app), self.rates.get(app)) {
            // A mask wider than the table's rows runs at its last row.
            *w = ways.clamp(1, r.len() as u32);
        }
    }

    fn read(&mut self, app: usize, _elapsed: Duration) -> Result<Counts> {
        let Some(rates) = self.rates.get(app) else {
            return Ok(Counts::default());
        };
        let r = rates[self.ways[app] as usize - 1];
        if !self.attached.contains(&app) {
            self.last_refs[app] = 0.0;
            return Ok(Counts {
                l2_miss_stall_cycles: r.stall_fraction.map(|_| 0.0),
                ..Counts::default()
            });
        }
        let c = r.counts_over(self.interval);
        self.last_refs[app] = c.llc_references;
        Ok(c)
    }

    fn utility(&self, app: usize) -> Option<(Vec<f64>, f64)> {
        let rates = self.rates.get(app)?;
        let refs = self.last_refs[app];
        let mut prev = 1.0f64;
        let mut hits = Vec::with_capacity(rates.len());
        for r in rates {
            let m = if r.llc_refs_pki > 0.0 {
                (r.llc_mpki / r.llc_refs_pki).clamp(0.0, 1.0)
            } else {
                0.0
            }
            .min(prev);
            hits.push(refs * (prev - m));
            prev = m;
        }
        Some((hits, refs * prev))
    }

    fn stall_event(&self) -> Option<&str> {
        let all = self
            .rates
            .iter()
            .flatten()
            .all(|r| r.stall_fraction.is_some());
        all.then_some("table")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rates(ipc: f64, mpki: f64, stall: Option<f64>) -> FakeRates {
        FakeRates {
            ghz: 2.0,
            ipc,
            llc_refs_pki: 2.0 * mpki,
            llc_mpki: mpki,
            stall_fraction: stall,
        }
    }

    #[test]
    fn counts_follow_the_row_of_the_current_way_count() {
        let table = vec![
            vec![rates(0.5, 8.0, Some(0.4)), rates(1.0, 2.0, Some(0.1))],
            vec![rates(1.5, 0.5, None), rates(1.5, 0.5, None)],
        ];
        let mut t = TableCounters::new(Duration::from_millis(1), table).unwrap();
        let ms = Duration::from_millis(1);
        // detached: zero
        assert_eq!(t.read(0, ms).unwrap().instructions, 0.0);
        t.attach(0, 10).unwrap();
        // every way at first: the last row
        let c = t.read(0, ms).unwrap();
        assert_eq!((c.cycles, c.instructions), (2e6, 2e6));
        assert_eq!((c.llc_misses, c.llc_references), (4e3, 8e3));
        assert_eq!(c.l2_miss_stall_cycles, Some(2e5));
        t.set_ways(0, 1);
        assert_eq!(t.ways_of(0), Some(1));
        let c = t.read(0, Duration::from_secs(3)).unwrap();
        assert_eq!((c.instructions, c.llc_misses), (1e6, 8e3));
        assert_eq!(c.l2_miss_stall_cycles, Some(8e5));
        // wider than the table: its last row; zero ways: the first
        t.set_ways(0, 11);
        assert_eq!(t.ways_of(0), Some(2));
        t.set_ways(0, 0);
        assert_eq!(t.ways_of(0), Some(1));
        // one app without the stall column: no stall event
        assert_eq!(t.stall_event(), None);
        assert!(t.attach(2, 1).is_err());
        assert!(TableCounters::new(ms, vec![vec![]]).is_err());
    }

    #[test]
    fn the_utility_monitor_splits_the_last_references_by_stack_position() {
        // misses per reference: 1/2 with one way, 1/8 with two (and a
        // row that would miss more with more ways counts as no change)
        let row = |mpki| FakeRates {
            llc_refs_pki: 8.0,
            ..rates(1.0, mpki, None)
        };
        let table = vec![vec![row(4.0), row(1.0), row(1.5)]];
        let mut t = TableCounters::new(Duration::from_millis(1), table).unwrap();
        assert_eq!(t.utility(0), Some((vec![0.0, 0.0, 0.0], 0.0)));
        t.attach(0, 1).unwrap();
        let c = t.read(0, Duration::from_millis(1)).unwrap();
        let (hits, misses) = t.utility(0).unwrap();
        let r = c.llc_references;
        assert_eq!(hits, vec![r * 0.5, r * 0.375, 0.0]);
        assert_eq!(misses, r * 0.125);
        assert_eq!(hits.iter().sum::<f64>() + misses, r);
        assert_eq!(t.utility(5), None);
    }
}
