//! Which counters a Linux run or measurement reads: the hardware's
//! (perf), scripted ones (`--fake-counters`: each app at fixed rates), or
//! a profile table's (`--fake-counters-from TABLE`: each app at its
//! program's row for the way count its current plan gives it, so that the
//! counts respond to partitioning on a machine without a PMU).
//!
//! A table's columns become rates as follows: `ipc` is the IPC,
//! `llcmpki` the LLC misses per kilo-instruction, `llcrpki` the LLC
//! references per kilo-instruction (the misses' when the table has no
//! such column: every reference a miss), `stalls_l2_miss` the fraction of
//! cycles stalled on L2 misses (no stall event when absent). The clock is
//! the machine's ([`CpuModel::clock_mhz`]).

use std::path::Path;
use std::time::Duration;

use cachepart_linux::cpu::CpuModel;
use cachepart_linux::doctor::Roots;
use cachepart_linux::perf::{CounterSource, FakeCounters, FakeRates, PerfCounters, TableCounters};
use cachepart_profile::MetricsTable;

use crate::error::Error;

/// Where a run's counts come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterChoice<'a> {
    /// perf_event: the hardware's counters.
    Perf,
    /// Scripted rates per app ([`FakeCounters`]).
    Scripted,
    /// A profile table's rows at each app's way count ([`TableCounters`]).
    Table(&'a Path),
}

impl<'a> CounterChoice<'a> {
    /// The choice the command-line flags make: a table wins over
    /// `--fake-counters`.
    pub fn from_flags(fake_counters: bool, table: Option<&'a Path>) -> CounterChoice<'a> {
        match (table, fake_counters) {
            (Some(t), _) => CounterChoice::Table(t),
            (None, true) => CounterChoice::Scripted,
            (None, false) => CounterChoice::Perf,
        }
    }

    /// True unless the counts are the hardware's.
    pub fn is_fake(self) -> bool {
        self != CounterChoice::Perf
    }
}

/// The index of program `program` (app `app`'s) in `table`, or an error
/// naming the table and the closest name.
pub(crate) fn find_program(table: &MetricsTable, program: &str, app: &str) -> Result<usize, Error> {
    table.app_index(program).ok_or_else(|| {
        Error::config_file(
            table.source(),
            format_args!(
                "no program '{program}' (app {app}){}",
                table
                    .suggest(program)
                    .map(|s| format!("; did you mean '{s}'?"))
                    .unwrap_or_default()
            ),
        )
    })
}

/// Program `index`'s rates in `table` at every way count, at `ghz`.
pub fn table_rates(table: &MetricsTable, index: usize, ghz: f64) -> Vec<FakeRates> {
    let app = &table.apps()[index];
    let col = |name: &str| table.column_index(name).map(|c| app.values(c));
    let ipc = col("ipc").expect("a metrics table has an ipc column");
    let mpki = col("llcmpki").expect("a metrics table has an llcmpki column");
    let rpki = col("llcrpki").unwrap_or(mpki);
    let stalls = col("stalls_l2_miss");
    (0..table.ways())
        .map(|w| FakeRates {
            ghz,
            ipc: ipc[w],
            llc_refs_pki: rpki[w].max(mpki[w]),
            llc_mpki: mpki[w],
            stall_fraction: stalls.map(|s| s[w].clamp(0.0, 1.0)),
        })
        .collect()
}

/// The counter source for apps whose programs (their names in a profile
/// table) are `programs`, as `(app name, program)`, counting `interval`
/// per read.
pub fn counter_source(
    choice: CounterChoice<'_>,
    programs: &[(&str, &str)],
    interval: Duration,
    roots: &Roots,
) -> Result<Box<dyn CounterSource>, Error> {
    Ok(match choice {
        CounterChoice::Scripted => Box::new(FakeCounters::new(interval)),
        CounterChoice::Table(path) => {
            let table = MetricsTable::from_path(path)?;
            let ghz = CpuModel::clock_mhz(&roots.proc_root) / 1000.0;
            let rates = programs
                .iter()
                .map(|(app, program)| {
                    find_program(&table, program, app).map(|i| table_rates(&table, i, ghz))
                })
                .collect::<Result<Vec<_>, _>>()?;
            Box::new(TableCounters::new(interval, rates)?)
        }
        CounterChoice::Perf => {
            let cpu = CpuModel::read(&roots.proc_root).map_err(|_| {
                Error::machine_refused(format_args!(
                    "{}/cpuinfo: unreadable; perf needs the CPU model",
                    roots.proc_root.display()
                ))
            })?;
            Box::new(PerfCounters::new(&roots.sys, &cpu)?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_rows_become_rates_at_every_way_count() {
        let text = "BENCH,NR_WAYS,ipc,llcmpki,llcmpkc,bandwidth_mbps,stalls_l2_miss\n\
                    a,1,0.5,8,4,900,0.3\na,2,1.0,2,2,400,0.1\n\
                    b,1,1.5,0.2,0.3,20,0.02\nb,2,1.5,0.2,0.3,20,0.02\n";
        let t = MetricsTable::from_csv_str(text, Path::new("t.csv")).unwrap();
        let r = table_rates(&t, 0, 2.0);
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].ipc, r[0].llc_mpki, r[0].llc_refs_pki),
            (0.5, 8.0, 8.0)
        );
        assert_eq!((r[1].ipc, r[1].stall_fraction), (1.0, Some(0.1)));
        let e = find_program(&t, "aa", "x").unwrap_err().to_string();
        assert!(
            e.contains("t.csv: no program 'aa' (app x)") && e.contains("did you mean 'a'"),
            "{e}"
        );
    }
}
