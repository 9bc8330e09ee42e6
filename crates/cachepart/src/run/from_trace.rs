//! PBBCache metrics tables made from traces: each trace runs alone on the
//! simulator at every way count `1..=W` ([`crate::run::alone`]) and each
//! run becomes one row of the PBBCache metrics format, readable by
//! [`MetricsTable`](cachepart_profile::MetricsTable), so every policy of
//! the table-driven machine runs on real programs.
//!
//! The columns, at `w` ways, from the app's whole-run counters (cycles
//! `C`, instructions `I`, at `f` GHz):
//!
//! | column | meaning in the simulator | vs. PBBCache's hardware counters |
//! |---|---|---|
//! | `ipc` | `I / C` | same |
//! | `llcrpki`, `llcrpkc` | LLC references (L2 misses of loads, stores, fetches) per kilo-instruction / kilo-cycle | same event; no prefetches |
//! | `llcmpki`, `llcmpkc` | LLC misses per kilo-instruction / kilo-cycle | same; no prefetches |
//! | `llc_usage_kb` | the app's LLC lines, KiB, averaged over the run (cycle-weighted, read every [`OCCUPANCY_INTERVAL_CYCLES`](crate::run::alone::OCCUPANCY_INTERVAL_CYCLES)) | CMT occupancy; exact here |
//! | `bandwidth_mbps` | bytes moved to and from memory (fills and write-backs) per second, MB/s | MBM total bandwidth |
//! | `llcm_bandwidth` | LLC misses x line size per second, MB/s (fills only) | same definition |
//! | `stalls_l2_miss` | cycles stalled on loads and fetches served beyond the private levels (LLC or memory), / `C` | `cycle_activity.stalls_l2_miss`; the model charges each access its latency / `mlp`, no overlap with other work |
//! | `stalls_l3_miss` | cycles stalled on accesses served by memory, / `C` | `cycle_activity.stalls_l3_miss`; same caveat |
//! | `stalls_total` | every stall cycle (L2, LLC, memory latencies and page walks: cycles beyond `I x base-cpi`), / `C` | `cycle_activity.stalls_total` also counts core stalls (dependencies, branch misses) that the model folds into `base-cpi`: lower here |
//! | `stalls_store_buf` | 0: the model never stalls on stores (an unbounded write buffer) | `resource_stalls.sb`: an approximation |
//!
//! The stall fractions are in `[0, 1]` and `stalls_l3_miss <= stalls_l2_miss <= stalls_total`.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::error::Error;
use crate::output::{self, CsvOptions};
use crate::run::alone::{sweep_many_with, AloneRun, Axis, ProfileOptions, SweepProgress, TraceApp};

/// The header of the metrics CSV, PBBCache's column order.
pub const HEADER: [&str; 14] = [
    "BENCH",
    "NR_WAYS",
    "ipc",
    "llcrpki",
    "llcmpki",
    "llcrpkc",
    "llcmpkc",
    "llc_usage_kb",
    "bandwidth_mbps",
    "llcm_bandwidth",
    "stalls_l2_miss",
    "stalls_l3_miss",
    "stalls_total",
    "stalls_store_buf",
];

/// One row of the metrics table: one program at one way count.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MetricsRow {
    /// The program.
    #[serde(rename = "BENCH")]
    pub bench: String,
    /// Ways of its CAT mask.
    #[serde(rename = "NR_WAYS")]
    pub nr_ways: u32,
    /// Instructions per cycle.
    pub ipc: f64,
    /// LLC references per kilo-instruction.
    pub llcrpki: f64,
    /// LLC misses per kilo-instruction.
    pub llcmpki: f64,
    /// LLC references per kilo-cycle.
    pub llcrpkc: f64,
    /// LLC misses per kilo-cycle.
    pub llcmpkc: f64,
    /// Mean LLC occupancy, KiB (3 decimals in CSV).
    #[serde(serialize_with = "output::fixed::<3, _>")]
    pub llc_usage_kb: f64,
    /// Memory traffic (fills and write-backs), MB/s.
    pub bandwidth_mbps: f64,
    /// Memory traffic of LLC misses (fills), MB/s.
    pub llcm_bandwidth: f64,
    /// Fraction of cycles stalled beyond the private levels.
    pub stalls_l2_miss: f64,
    /// Fraction of cycles stalled on memory.
    pub stalls_l3_miss: f64,
    /// Fraction of cycles stalled, all causes the model has.
    pub stalls_total: f64,
    /// Fraction of cycles stalled on a full store buffer (0 in the model).
    pub stalls_store_buf: f64,
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

/// The row of an alone run of `bench` at `run.size` ways, on a platform
/// at `freq_ghz` with `line_bytes` lines.
pub fn metrics_row(bench: &str, run: &AloneRun, freq_ghz: f64, line_bytes: u32) -> MetricsRow {
    let t = &run.totals;
    let (i, c) = (t.instructions as f64, t.cycles);
    let secs = c / (freq_ghz * 1e9);
    let mbps = |bytes: f64| ratio(bytes, secs) / 1e6;
    // clamp against rounding: each is a part of the run's cycles
    let frac = |x: f64| ratio(x, c).clamp(0.0, 1.0);
    let total = frac(t.stall_cycles);
    let l2 = frac(t.l2_miss_stall_cycles).min(total);
    let l3 = frac(t.memory_stall_cycles).min(l2);
    MetricsRow {
        bench: bench.to_string(),
        nr_ways: run.size,
        ipc: t.ipc,
        llcrpki: ratio(t.llc_references as f64 * 1000.0, i),
        llcmpki: ratio(t.llc_misses as f64 * 1000.0, i),
        llcrpkc: ratio(t.llc_references as f64 * 1000.0, c),
        llcmpkc: ratio(t.llc_misses as f64 * 1000.0, c),
        llc_usage_kb: run.mean_occupancy_bytes / 1024.0,
        bandwidth_mbps: mbps(t.memory_bytes as f64),
        llcm_bandwidth: mbps(t.llc_misses as f64 * f64::from(line_bytes)),
        stalls_l2_miss: l2,
        stalls_l3_miss: l3,
        stalls_total: total,
        stalls_store_buf: 0.0,
    }
}

/// Checks a program name for the table's `BENCH` column: non-empty,
/// without commas, quotes or newlines.
pub fn check_bench_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.contains([',', '"', '\n', '\r']) {
        return Err(format!(
            "program name {name:?} must be non-empty, without commas, quotes or newlines"
        ));
    }
    Ok(())
}

/// Profiles every trace of `apps` at every way count of
/// `opts.platform` (in parallel); rows are program-major in `apps`
/// order, then by way count. Names must be unique.
pub fn metrics_rows(apps: &[TraceApp], opts: &ProfileOptions) -> Result<Vec<MetricsRow>, Error> {
    metrics_rows_with(apps, opts, None)
}

/// [`metrics_rows`], reporting each finished alone run (done, in all).
pub fn metrics_rows_with(
    apps: &[TraceApp],
    opts: &ProfileOptions,
    progress: Option<SweepProgress<'_>>,
) -> Result<Vec<MetricsRow>, Error> {
    if apps.is_empty() {
        return Err(Error::Usage("no trace to profile".into()));
    }
    let mut seen = BTreeSet::new();
    for a in apps {
        check_bench_name(&a.name)
            .map_err(|e| Error::Usage(format!("trace {}: {e}", a.path.display())))?;
        if !seen.insert(a.name.as_str()) {
            return Err(Error::Usage(format!(
                "trace {}: program name {:?} is used twice (name the traces with --name)",
                a.path.display(),
                a.name
            )));
        }
    }
    let runs = sweep_many_with(apps, Axis::Ways, opts, progress)?;
    let freq = opts.platform.timing.freq_ghz;
    let line = opts.platform.llc.line_bytes;
    Ok(apps
        .iter()
        .zip(&runs)
        .flat_map(|(a, rs)| rs.iter().map(move |r| metrics_row(&a.name, r, freq, line)))
        .collect())
}

/// The rows as PBBCache metrics CSV (header included; 6 decimals, 3 for
/// `llc_usage_kb`).
pub fn to_csv(rows: &[MetricsRow]) -> String {
    output::to_csv(rows, CsvOptions::fixed(6))
}

/// [`metrics_rows`] as CSV text.
pub fn profile_traces(apps: &[TraceApp], opts: &ProfileOptions) -> Result<String, Error> {
    Ok(to_csv(&metrics_rows(apps, opts)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_traces::{sensitive, tiny_platform, write_trace, Scratch};
    use cachepart_profile::MetricsTable;
    use std::path::Path;

    #[test]
    fn table_reads_back_with_every_column() {
        let dir = Scratch::new("from-trace");
        let a = write_trace(dir.path(), "sens", &sensitive(96 * 1024), 40_000);
        let b = write_trace(
            dir.path(),
            "stream",
            r#"{"class": "streaming", "array-bytes": 4194304}"#,
            40_000,
        );
        let apps = [
            TraceApp::from_path(&a).unwrap(),
            TraceApp::from_path(&b).unwrap(),
        ];
        let opts = ProfileOptions::new(tiny_platform());
        let csv = profile_traces(&apps, &opts).unwrap();
        assert_eq!(csv, profile_traces(&apps, &opts).unwrap(), "deterministic");
        let t = MetricsTable::from_csv_str(&csv, Path::new("m.csv")).unwrap();
        assert_eq!(t.ways(), 8);
        assert_eq!(t.columns().len(), HEADER.len() - 2);
        let col = |app: &str, c: &str| t.column(app, c).unwrap().to_vec();
        // a cache-sensitive app gains from ways, a streaming one does not
        let m = col("sens", "llcmpki");
        assert!(m[0] > 3.0 * m[7], "{m:?}");
        let s = col("stream", "llcmpki");
        assert!(s[0] > 0.0 && (s[0] - s[7]).abs() <= 0.05 * s[0], "{s:?}");
        for app in ["sens", "stream"] {
            for w in 0..8 {
                let (l2, l3, tot) = (
                    col(app, "stalls_l2_miss")[w],
                    col(app, "stalls_l3_miss")[w],
                    col(app, "stalls_total")[w],
                );
                assert!((0.0..=1.0).contains(&tot) && l3 <= l2 && l2 <= tot);
                assert!(col(app, "llcmpki")[w] <= col(app, "llcrpki")[w]);
                assert!(col(app, "llcm_bandwidth")[w] <= col(app, "bandwidth_mbps")[w] + 1e-6);
                // occupancy never exceeds the ways the app had
                assert!(col(app, "llc_usage_kb")[w] <= 16.0 * (w + 1) as f64 + 1e-9);
            }
        }
        // a duplicated name is refused, naming the trace
        let e = profile_traces(&[apps[0].clone(), apps[0].clone()], &opts)
            .unwrap_err()
            .to_string();
        assert!(e.contains("sens.cpt") && e.contains("twice"), "{e}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(6))]
        /// One core, LRU: LLC misses never grow with ways (the stack
        /// property through CAT masks of the first `w` ways).
        #[test]
        fn lru_misses_fall_with_ways(ws_kib in 8u64..256, accesses in 5_000u64..20_000) {
            let dir = Scratch::new(&format!("mono-{ws_kib}-{accesses}"));
            let p = write_trace(dir.path(), "app", &sensitive(ws_kib * 1024), accesses);
            let rows = metrics_rows(&[TraceApp::from_path(&p).unwrap()], &ProfileOptions::new(tiny_platform())).unwrap();
            proptest::prop_assert_eq!(rows.len(), 8);
            for w in 1..rows.len() {
                proptest::prop_assert!(rows[w].llcmpki <= rows[w - 1].llcmpki, "{:?}", rows);
            }
            for r in &rows {
                proptest::prop_assert!(r.stalls_l2_miss <= 1.0 && r.stalls_l2_miss >= r.stalls_l3_miss);
            }
        }
    }
}
