//! `variants`: the same apps under several configurations side by side,
//! each a set of scenario overrides (a coloring policy, thresholds, an
//! expansion method, ...) and per-app overrides (colors, cores, QoS),
//! run to the end by the scenario loop (so policies act and the report
//! keeps every sample). COLORIS 4.3 (threshold configurations C1-C4
//! under Selective Moving and Redistribution) and 4.4 (8 apps on 4
//! cores, COLORIS against no coloring).
//!
//! Metrics, per variant V and app A: `ipc:V:A`, `miss:V:A`,
//! `recolored:V:A` (pages recolored, from the samples), `norm:V:A` (IPC
//! / IPC in the baseline variant), and per variant `ipc-sum:V`,
//! `recolored:V`, `norm-mean:V` (geometric mean of `norm:V:*`),
//! `miss-max:V`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::miss_rate;
use crate::experiments::build::{Run, RunApp};
use crate::experiments::plot::{Chart, Series};
use crate::experiments::runner::{Analysis, RunResult};
use crate::experiments::table::{num, Table};

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
            let recolored = recolored_per_app(r);
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
                log_sum += norm.ln();
                ipc_sum += t.ipc;
                miss_max = miss_max.max(miss);
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
            observations.push(format!(
                "**{l}**: IPC sum {ipc_sum:.3}, geometric mean of IPC / {} {:.3}, highest miss rate {:.1}%, {total:.0} pages recolored.",
                self.variants[base_i].label,
                metrics[&format!("norm-mean:{l}")],
                miss_max * 100.0
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

/// Pages recolored per app over the run (from the report's samples).
fn recolored_per_app(r: &RunResult) -> Vec<f64> {
    let mut v = vec![0.0; r.totals.len()];
    if let Some(rep) = &r.report {
        for s in &rep.samples {
            if let Some(x) = v.get_mut(s.app) {
                *x += s.sample.pages_recolored;
            }
        }
    }
    v
}
