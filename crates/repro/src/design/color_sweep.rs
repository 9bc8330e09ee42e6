//! `color-sweep`: each program runs alone with colors `0..n` for every `n`
//! of the sweep (Tam et al., Fig. 3: run time against L2 partitions).
//!
//! Metrics, per program P: `time:P:N` (run time with N colors / run time
//! with the most colors), `knee:P` (the fewest colors whose run time is
//! within `knee-tolerance` of the most colors'), `range:P` (run time with
//! the fewest colors / with the most).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{color_range, miss_rate, positive};
use crate::build::{Run, RunApp};
use crate::plot::{Chart, Series};
use crate::runner::{Analysis, RunResult};
use crate::table::{num, Table};

fn tolerance() -> f64 {
    0.05
}

/// The `color-sweep` design.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ColorSweep {
    /// The programs, each run alone.
    pub programs: Vec<String>,
    /// Color counts, ascending (colors `0..n` each).
    pub colors: Vec<u32>,
    /// Relative run-time excess that still counts as "as fast as with
    /// the most colors" for the knee (default 0.05).
    #[serde(default = "tolerance")]
    pub knee_tolerance: f64,
}

impl ColorSweep {
    pub(super) fn programs_used(&self) -> Vec<(String, String)> {
        self.programs
            .iter()
            .enumerate()
            .map(|(i, p)| (format!("programs[{i}]"), p.clone()))
            .collect()
    }

    /// Every metric [`Self::analyse`] may compute.
    pub(super) fn metric_names(&self) -> Vec<String> {
        let mut v = Vec::new();
        for p in &self.programs {
            v.extend(self.colors.iter().map(|n| format!("time:{p}:{n}")));
            v.push(format!("knee:{p}"));
            v.push(format!("range:{p}"));
        }
        v
    }

    pub(super) fn check(&self) -> Result<(), (String, String)> {
        if self.programs.is_empty() || self.colors.is_empty() {
            return Err(("programs".into(), "needs programs and colors".into()));
        }
        for (i, &c) in self.colors.iter().enumerate() {
            positive(&format!("colors[{i}]"), c)?;
            if i > 0 && c <= self.colors[i - 1] {
                return Err((format!("colors[{i}]"), "color counts must ascend".into()));
            }
        }
        if !(self.knee_tolerance >= 0.0 && self.knee_tolerance.is_finite()) {
            return Err((
                "knee-tolerance".into(),
                "must be a non-negative number".into(),
            ));
        }
        Ok(())
    }

    pub(super) fn runs(&self) -> Vec<Run> {
        let mut runs = Vec::new();
        for p in &self.programs {
            for &n in &self.colors {
                runs.push(Run::new(
                    format!("{p}/{n}"),
                    vec![RunApp::of(p).set("colors", color_range(0, n))],
                ));
            }
        }
        runs
    }

    pub(super) fn analyse(&self, _runs: &[Run], results: &[RunResult]) -> Analysis {
        let mut table = Table::new(&[
            "program",
            "colors",
            "cycles",
            "time vs most colors",
            "IPC",
            "LLC miss rate",
            "LLC MPKI",
            "fallbacks",
        ]);
        let mut metrics = BTreeMap::new();
        let mut series = Vec::new();
        let mut observations = Vec::new();
        let k = self.colors.len();
        for (pi, p) in self.programs.iter().enumerate() {
            let rs = &results[pi * k..(pi + 1) * k];
            let full = rs[k - 1].totals[0].cycles;
            let mut pts = Vec::new();
            let mut knee = None;
            for (ci, r) in rs.iter().enumerate() {
                let t = &r.totals[0];
                let rel = t.cycles / full;
                let n = self.colors[ci];
                if knee.is_none() && rel <= 1.0 + self.knee_tolerance {
                    knee = Some(n);
                }
                metrics.insert(format!("time:{p}:{n}"), rel);
                pts.push((f64::from(n), rel));
                table.push(vec![
                    p.clone(),
                    n.to_string(),
                    format!("{:.0}", t.cycles),
                    num(rel, 3),
                    num(t.ipc, 3),
                    num(miss_rate(t), 3),
                    num(t.llc_mpki(), 2),
                    r.fallbacks[0].to_string(),
                ]);
            }
            let knee = knee.unwrap_or(self.colors[k - 1]);
            let range = rs[0].totals[0].cycles / full;
            metrics.insert(format!("knee:{p}"), f64::from(knee));
            metrics.insert(format!("range:{p}"), range);
            let monotone = pts.windows(2).all(|w| w[1].1 <= w[0].1 * 1.01);
            observations.push(format!(
                "**{p}**: {:.2}x the run time with {} color(s) as with {}; within {:.0}% of it from {knee} colors on; run time {} as colors grow.",
                range,
                self.colors[0],
                self.colors[k - 1],
                self.knee_tolerance * 100.0,
                if monotone { "never rises (by more than 1%)" } else { "rises somewhere" }
            ));
            series.push(Series {
                name: p.clone(),
                points: pts,
                dashed: false,
            });
        }
        Analysis {
            table,
            chart: Chart {
                title: "Run time alone against the number of colors".into(),
                x_label: "colors (of the LLC's)".into(),
                y_label: "run time / run time with the most colors".into(),
                series,
                x_ticks: None,
                reference: Some(1.0),
                legend_left: false,
            },
            metrics,
            observations,
        }
    }
}
