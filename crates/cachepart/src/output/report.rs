//! Reports: outcomes flattened to per-app rows ([`Row`]), written by the
//! output layer's writers as a human table, CSV or JSON.
//!
//! Output is deterministic: the same inputs give byte-identical reports.
//! Wall times are left out unless asked for ([`ReportOptions::timings`]).

use crate::output::{self, Align, CsvOptions, TextTable};
use crate::run::profile::Outcome;
use serde::Serialize;

/// One row per (workload, algorithm, app), with the workload's metrics.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Row {
    /// Workload name.
    pub workload: String,
    /// Algorithm name.
    pub algorithm: String,
    /// Apps in the workload.
    pub n_apps: usize,
    /// Position of the app in the workload (0-based).
    pub app_index: usize,
    /// Program name.
    pub app: String,
    /// Cluster index in the plan.
    pub cluster: usize,
    /// Cluster way mask (`0x...`).
    pub mask: String,
    /// Ways of the app's cluster.
    pub ways: u32,
    /// Estimated ways the app holds (fractional when shared).
    pub effective_ways: f64,
    /// Slowdown from the cache alone.
    pub slowdown_nobw: f64,
    /// 1 / slowdown.
    pub speedup: f64,
    /// Slowdown with the bandwidth model.
    pub slowdown: f64,
    /// Workload STP.
    pub stp: f64,
    /// Workload ANTT.
    pub antt: f64,
    /// Workload unfairness (max/min slowdown).
    pub unfairness: f64,
    /// Workload CoV of slowdowns.
    pub unfairness_cov: f64,
    /// Workload Jain index.
    pub jain: f64,
    /// Workload geometric-mean speedup.
    pub gmean_speedup: f64,
    /// Workload geometric-mean IPC.
    pub gmean_ipc: f64,
    /// Exact solvers: whether optimality was proven (empty for heuristics).
    pub proven_optimal: Option<bool>,
    /// Decision wall time in seconds (only with timings on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_seconds: Option<f64>,
}

/// Report settings.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReportOptions {
    /// Include wall times (makes output differ run to run).
    pub timings: bool,
}

/// Flattens outcomes into per-app rows (no timings).
pub fn rows(outcomes: &[Outcome]) -> Vec<Row> {
    rows_with(outcomes, ReportOptions::default())
}

/// Flattens outcomes into per-app rows.
pub fn rows_with(outcomes: &[Outcome], opts: ReportOptions) -> Vec<Row> {
    let mut out = Vec::new();
    for o in outcomes {
        let m = &o.evaluation.metrics;
        for a in &o.evaluation.apps {
            out.push(Row {
                workload: o.workload.clone(),
                algorithm: o.algorithm.to_string(),
                n_apps: o.evaluation.apps.len(),
                app_index: a.app,
                app: a.name.clone(),
                cluster: a.cluster,
                mask: a.mask.to_hex(),
                ways: a.cluster_ways,
                effective_ways: a.effective_ways,
                slowdown_nobw: a.slowdown_nobw,
                speedup: 1.0 / a.slowdown,
                slowdown: a.slowdown,
                stp: m.stp,
                antt: m.antt,
                unfairness: m.unfairness,
                unfairness_cov: m.unfairness_cov,
                jain: m.jain,
                gmean_speedup: m.gmean_speedup,
                gmean_ipc: m.gmean_ipc,
                proven_optimal: o.solver.map(|s| s.proven_optimal),
                decision_seconds: opts.timings.then_some(o.decision_seconds),
            });
        }
    }
    out
}

/// CSV with a header; floats printed with 6 decimals.
pub fn to_csv(rows: &[Row]) -> String {
    output::to_csv(rows, CsvOptions::fixed(6))
}

/// JSON: a list of per-app rows.
pub fn to_json(rows: &[Row]) -> String {
    output::to_json(rows)
}

/// A human table: one line per (workload, algorithm) with the mix metrics
/// and the plan as `{apps}:ways` per cluster.
pub fn to_table(rows: &[Row]) -> String {
    let mut table = TextTable::new(&[
        ("workload", Align::Left),
        ("algorithm", Align::Left),
        ("STP", Align::Left),
        ("ANTT", Align::Left),
        ("unfairness", Align::Left),
        ("CoV", Align::Left),
        ("optimal", Align::Left),
        ("plan (apps:ways[/effective ways] per cluster)", Align::Left),
    ]);
    let mut i = 0;
    while i < rows.len() {
        let r = &rows[i];
        let j = rows[i..]
            .iter()
            .position(|x| x.workload != r.workload || x.algorithm != r.algorithm)
            .map_or(rows.len(), |k| i + k);
        let group = &rows[i..j];
        let mut clusters: Vec<(usize, u32, Vec<String>)> = Vec::new();
        for a in group {
            let label = if group.iter().filter(|b| b.cluster == a.cluster).count() > 1 {
                format!("{}/{:.2}", a.app, a.effective_ways)
            } else {
                a.app.clone()
            };
            match clusters.iter_mut().find(|c| c.0 == a.cluster) {
                Some(c) => c.2.push(label),
                None => clusters.push((a.cluster, a.ways, vec![label])),
            }
        }
        clusters.sort_by_key(|c| c.0);
        let plan = clusters
            .iter()
            .map(|(_, w, apps)| {
                if apps.len() == 1 {
                    format!("{}:{w}", apps[0])
                } else {
                    format!("{{{}}}:{w}", apps.join(" "))
                }
            })
            .collect::<Vec<_>>()
            .join("  ");
        table.push(vec![
            r.workload.clone(),
            r.algorithm.clone(),
            format!("{:.3}", r.stp),
            format!("{:.5}", r.antt),
            format!("{:.5}", r.unfairness),
            format!("{:.5}", r.unfairness_cov),
            match r.proven_optimal {
                Some(true) => "yes".into(),
                Some(false) => "NO (time limit)".into(),
                None => "-".into(),
            },
            plan,
        ]);
        i = j;
    }
    table.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(timed: bool) -> Row {
        Row {
            workload: "w,1".into(),
            algorithm: "ucp".into(),
            n_apps: 1,
            app: "a".into(),
            mask: "0x3".into(),
            ways: 2,
            effective_ways: 2.0,
            slowdown_nobw: 1.0,
            speedup: 1.0,
            slowdown: 1.0,
            stp: 1.0,
            antt: 1.0,
            unfairness: 1.0,
            jain: 1.0,
            gmean_speedup: 1.0,
            gmean_ipc: 0.5,
            decision_seconds: timed.then_some(0.25),
            ..Row::default()
        }
    }

    /// The CSV header names the JSON rows' keys, with and without
    /// timings; floats have 6 decimals and names are quoted where needed.
    #[test]
    fn csv_and_json_have_the_same_columns() {
        for timed in [false, true] {
            let rows = [row(timed)];
            let csv = to_csv(&rows);
            let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
            let json: serde_json::Value = serde_json::from_str(&to_json(&rows)).unwrap();
            let keys: Vec<&str> = json[0]
                .as_object()
                .unwrap()
                .keys()
                .map(|k| k.as_str())
                .collect();
            let mut sorted = header.clone();
            sorted.sort_unstable();
            assert_eq!(keys, sorted, "serde_json's map sorts its keys");
            assert_eq!(header.last() == Some(&"decision_seconds"), timed);
            let line = csv.lines().nth(1).unwrap();
            assert!(
                line.starts_with("\"w,1\",ucp,1,0,a,0,0x3,2,2.000000,"),
                "{line}"
            );
            assert!(
                line.ends_with(if timed {
                    ",0.500000,,0.250000"
                } else {
                    ",0.500000,"
                }),
                "{line}"
            );
        }
        assert_eq!(
            to_table(&[row(false)]).lines().nth(1).unwrap(),
            "w,1       ucp        1.000  1.00000  1.00000     0.00000  -        a:2"
        );
    }
}
