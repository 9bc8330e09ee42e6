//! `variants`: the same apps under several configurations side by side,
//! each a set of scenario overrides (a coloring policy, thresholds, an
//! expansion method, ...) and per-app overrides (colors, cores, QoS),
//! run to the end by the scenario loop (so policies act and the report
//! keeps every sample). COLORIS 4.3 (threshold configurations C1-C4
//! under Selective Moving and Redistribution) and 4.4 (8 apps on 4
//! cores, COLORIS against no coloring).
//!
//! Metrics, per variant V and app A: `ipc:V:A`, `miss:V:A`,
//! `recolored:V:A` (pages recolored), `colors:V:A` (its number of colors
//! at the end: the stable assignment), `norm:V:A` (IPC / IPC in the
//! baseline variant), and per variant `ipc-sum:V`,
//! `recolored:V`, `norm-mean:V` (geometric mean of `norm:V:*`),
//! `miss-max:V` (the highest miss rate among the apps that make at least
//! one LLC reference per 1,000 instructions: an app whose few references
//! are cold misses reads 100% in every variant and would hide the rest).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::miss_rate;
use crate::build::{Run, RunApp};
use crate::plot::{Chart, Series};
use crate::runner::{Analysis, RunResult};
use crate::table::{num, Table};

/// One configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Variant {
    /// Its label (`C1-SM`).
    pub label: String,
    /// Scenario keys over `[scenario]`.
    #[serde(default)]
    pub scenario: toml::Table,
    /// `[[app]]` keys per program, over the program's.
    #[serde(default)]
    pub apps: BTreeMap<String, toml::Table>,
}

/// The `variants` design.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Variants {
    /// The programs run in every variant, in order.
    pub apps: Vec<String>,
    /// The configurations.
    #[serde(rename = "variant")]
    pub variants: Vec<Variant>,
    /// The variant every IPC is normalised to (default: the first).
    #[serde(default)]
    pub baseline: Option<String>,
}

impl Variants {
    pub(super) fn programs_used(&self) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = self
            .apps
            .iter()
            .enumerate()
            .map(|(i, p)| (format!("apps[{i}]"), p.clone()))
            .collect();
        for (i, var) in self.variants.iter().enumerate() {
            for p in var.apps.keys() {
                v.push((format!("variant[{i}].apps.{p}"), p.clone()));
            }
        }
        v
    }

    /// Every metric [`Self::analyse`] may compute (`colors:LABEL:APP`
    /// only when the run reports the app's colors).
    pub(super) fn metric_names(&self) -> Vec<String> {
        let mut v = Vec::new();
        for var in &self.variants {
            let l = &var.label;
            for a in &self.apps {
                for k in ["ipc", "miss", "norm", "recolored", "colors"] {
                    v.push(format!("{k}:{l}:{a}"));
                }
            }
            for k in ["ipc-sum", "recolored", "norm-mean", "miss-max"] {
                v.push(format!("{k}:{l}"));
            }
        }
        v
    }

    pub(super) fn check(&self) -> Result<(), (String, String)> {
        if self.apps.is_empty() || self.variants.is_empty() {
            return Err(("apps".into(), "needs apps and at least one variant".into()));
        }
        for (i, var) in self.variants.iter().enumerate() {
            if let Some(p) = var.apps.keys().find(|p| !self.apps.contains(p)) {
                return Err((
                    format!("variant[{i}].apps.{p}"),
                    format!("{p} is not one of apps"),
                ));
            }
        }
        if let Some(b) = &self.baseline {
            if !self.variants.iter().any(|v| &v.label == b) {
                return Err(("baseline".into(), format!("no variant labelled {b:?}")));
            }
        }
        Ok(())
    }

    pub(super) fn runs(&self) -> Vec<Run> {
        self.variants
            .iter()
            .map(|v| {
                let apps = self
                    .apps
                    .iter()
                    .map(|p| {
                        let mut a = RunApp::of(p);
                        if let Some(o) = v.apps.get(p) {
                            a.overrides = o.clone();
                        }
                        a
                    })
                    .collect();
                let mut r = Run::new(v.label.clone(), apps);
                r.scenario = v.scenario.clone();
                r
            })
            .collect()
    }

    pub(super) fn analyse(&self, _runs: &[Run], results: &[RunResult]) -> Analysis {
        let base_i = self
            .baseline
            .as_ref()
            .and_then(|b| self.variants.iter().position(|v| &v.label == b))
            .unwrap_or(0);
        let base = &results[base_i];
        let mut table = Table::new(&[
            "variant",
            "app",
            "instructions",
            "IPC",
            "IPC / baseline",
            "LLC miss rate",
            "LLC MPKI",
            "pages recolored",
            "colors at the start",
            "colors at the end",
        ]);
        let mut metrics = BTreeMap::new();
        let mut series: Vec<Series> = self
            .apps
            .iter()
            .map(|a| Series {
                name: a.clone(),
                points: Vec::new(),
                dashed: false,
            })
            .collect();
        let mut observations = Vec::new();
        for (vi, (v, r)) in self.variants.iter().zip(results).enumerate() {
            let recolored: Vec<f64> = r.totals.iter().map(|t| t.pages_recolored as f64).collect();
            let (start, end) = colors_of(r);
            let mut log_sum = 0.0;
            let mut ipc_sum = 0.0;
            let mut miss_max = 0.0f64;
            for (ai, a) in self.apps.iter().enumerate() {
                let t = &r.totals[ai];
                let norm = t.ipc / base.totals[ai].ipc;
                let miss = miss_rate(t);
                let l = &v.label;
                metrics.insert(format!("ipc:{l}:{a}"), t.ipc);
                metrics.insert(format!("miss:{l}:{a}"), miss);
                metrics.insert(format!("norm:{l}:{a}"), norm);
                metrics.insert(format!("recolored:{l}:{a}"), recolored[ai]);
                if let Some(n) = end.get(ai).and_then(|c| count(c)) {
                    metrics.insert(format!("colors:{l}:{a}"), n as f64);
                }
                log_sum += norm.ln();
                ipc_sum += t.ipc;
                if t.llc_references * 1000 >= t.instructions {
                    miss_max = miss_max.max(miss);
                }
                series[ai].points.push((vi as f64, miss));
                table.push(vec![
                    l.clone(),
                    a.clone(),
                    t.instructions.to_string(),
                    num(t.ipc, 4),
                    num(norm, 4),
                    num(miss, 3),
                    num(t.llc_mpki(), 2),
                    format!("{:.0}", recolored[ai]),
                    start.get(ai).cloned().unwrap_or_else(|| "all".into()),
                    end.get(ai).cloned().unwrap_or_else(|| "all".into()),
                ]);
            }
            let l = &v.label;
            let total: f64 = recolored.iter().sum();
            metrics.insert(format!("ipc-sum:{l}"), ipc_sum);
            metrics.insert(format!("recolored:{l}"), total);
            metrics.insert(
                format!("norm-mean:{l}"),
                (log_sum / self.apps.len() as f64).exp(),
            );
            metrics.insert(format!("miss-max:{l}"), miss_max);
            let sizes: Vec<String> = end
                .iter()
                .map(|c| count(c).map_or_else(|| c.clone(), |n| n.to_string()))
                .collect();
            let events = r
                .report
                .as_ref()
                .and_then(|x| x.coloring.as_ref())
                .map_or(0, |c| c.events.len());
            observations.push(format!(
                "**{l}**: IPC sum {ipc_sum:.3}, geometric mean of IPC / {} {:.3}, highest miss rate {:.1}% (apps with at least 1 LLC reference per 1,000 instructions), {events} color changes, {total:.0} pages recolored; colors at the end ({}): ({}).",
                self.variants[base_i].label,
                metrics[&format!("norm-mean:{l}")],
                miss_max * 100.0,
                self.apps.join(", "),
                sizes.join(", ")
            ));
        }
        Analysis {
            table,
            chart: Chart {
                title: "LLC miss rate of each app under each configuration".into(),
                x_label: "configuration".into(),
                y_label: "LLC miss rate".into(),
                series,
                x_ticks: Some(self.variants.iter().map(|v| v.label.clone()).collect()),
                reference: None,
                legend_left: false,
            },
            metrics,
            observations,
        }
    }
}

/// Each app's colors at the start and at the end (from the report; empty
/// without one).
fn colors_of(r: &RunResult) -> (Vec<String>, Vec<String>) {
    match &r.report {
        None => (Vec::new(), Vec::new()),
        Some(rep) => {
            let end: Vec<String> = rep.apps.iter().map(|a| a.colors.clone()).collect();
            let start = rep
                .coloring
                .as_ref()
                .map_or_else(|| end.clone(), |c| c.initial.clone());
            (start, end)
        }
    }
}

/// The number of colors of a set in range syntax, if it is one.
fn count(text: &str) -> Option<usize> {
    text.parse::<cachepart_units::IdSet>().ok().map(|s| s.len())
}
