//! `mechanisms`: several memory-system mechanisms compared on several
//! workloads, by weighted speedup and by total TLB and LLC misses (SWAP,
//! DAC'14, Figs. 2 and 7-10). Each mechanism is a set of scenario keys
//! (`swap`, ...) and per-app keys given to every app (`huge-pages`), and
//! says whether it partitions: a partitioning mechanism gives each app of
//! a workload its share of the colors, in color units (the paper's 16
//! colors of bits 15-18 are units of `unit-colors` 4 KiB colors each),
//! contiguously in workload order (8,4,2,2: units 0-7, 8-11, 12-13,
//! 14-15).
//!
//! Runs: every workload under every mechanism, its apps one per core,
//! measured while all run together; and every program alone under each
//! mechanism of `alone` (the first is the reference of the weighted
//! speedup, as the paper normalises to "the solo execution"). With
//! `warmup-instructions` and `measure-instructions` every run is measured
//! in a [`Window`](crate::window::Window) (the paper's
//! fast-forward, then a fixed number of instructions per program, the
//! programs whose window closed running on as co-runners; the apps'
//! `instructions` must leave them running that long); without them a
//! workload is measured until its first app finishes, a program alone to
//! its end.
//!
//! Metrics, per mechanism M and workload W: `ws:M:W` (weighted speedup:
//! the sum of each app's IPC over its IPC alone under `alone[0]`),
//! `ws-gain:M:W` (over the baseline mechanism's, minus 1), `tlb-mpki:M:W`
//! and `llc-mpki:M:W` (all the workload's misses per 1,000 of all its
//! instructions: the paper's totals over a fixed number of
//! instructions), `tlb-red:M:W` and `llc-red:M:W` (1 minus the ratio to
//! the baseline's); per mechanism `ws-gain-mean:M`, `ws-gain-max:M`,
//! `tlb-red-mean:M`, `tlb-red-max:M`, `llc-red-mean:M`, `llc-red-max:M`
//! (arithmetic means and maxima over the workloads, as the paper
//! averages); per alone mechanism A and program P `alone-ipc:A:P`,
//! `alone-tlb-mpki:A:P`, `alone-llc-mpki:A:P`, `alone-speedup:A:P`
//! (IPC over `alone[0]`'s, minus 1) and `alone-speedup-mean:A`.
//!
//! This file owns the design as written ([`Mechanisms`], [`Workload`],
//! [`Mechanism`]); `check.rs` its checks, `runs.rs` the runs it makes,
//! `metrics.rs` the metrics, table and chart read from their results.

mod check;
mod metrics;
mod runs;

use serde::{Deserialize, Serialize};

use crate::build::Stop;

/// One workload: programs run together, and their color shares.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Workload {
    /// Its name (`WL1`).
    pub name: String,
    /// The programs, one per core, in order.
    pub programs: Vec<String>,
    /// Each program's color units under a partitioning mechanism.
    pub colors: Vec<u32>,
}

/// One mechanism.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Mechanism {
    /// Its label (`SWAP`).
    pub label: String,
    /// Scenario keys over `[scenario]`.
    #[serde(default)]
    pub scenario: toml::Table,
    /// `[[app]]` keys given to every app.
    #[serde(default)]
    pub app: toml::Table,
    /// Whether apps get their workload's color shares.
    #[serde(default)]
    pub partitioned: bool,
}

/// The `mechanisms` design.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Mechanisms {
    /// The workloads.
    #[serde(rename = "workload")]
    pub workloads: Vec<Workload>,
    /// The mechanisms; the first is the baseline.
    #[serde(rename = "mechanism")]
    pub mechanisms: Vec<Mechanism>,
    /// Color units in all (16: the paper's bits 15-18).
    pub units: u32,
    /// 4 KiB colors per unit (8 on `sandybridge-8m`: 128 colors).
    pub unit_colors: u32,
    /// Mechanisms whose programs also run alone; the first normalises the
    /// weighted speedup (default: the baseline only).
    #[serde(default)]
    pub alone: Vec<String>,
    /// Instructions every app retires before measurement starts.
    #[serde(default)]
    pub warmup_instructions: Option<u64>,
    /// Instructions each app is measured for (with `warmup-instructions`).
    #[serde(default)]
    pub measure_instructions: Option<u64>,
}

impl Mechanisms {
    fn alone_labels(&self) -> Vec<String> {
        if self.alone.is_empty() {
            self.mechanisms
                .first()
                .map(|m| vec![m.label.clone()])
                .unwrap_or_default()
        } else {
            self.alone.clone()
        }
    }

    /// Every program of any workload, each once, in first-use order.
    fn programs(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for w in &self.workloads {
            for p in &w.programs {
                if !v.contains(p) {
                    v.push(p.clone());
                }
            }
        }
        v
    }

    fn stop(&self, all_together: bool) -> Stop {
        match (self.warmup_instructions, self.measure_instructions) {
            (Some(warmup), Some(measure)) => Stop::Window { warmup, measure },
            _ if all_together => Stop::AnyDone,
            _ => Stop::AllDone,
        }
    }

    fn mechanism(&self, label: &str) -> Option<&Mechanism> {
        self.mechanisms.iter().find(|m| m.label == label)
    }

    pub(crate) fn programs_used(&self) -> Vec<(String, String)> {
        let mut v = Vec::new();
        for (i, w) in self.workloads.iter().enumerate() {
            for (j, p) in w.programs.iter().enumerate() {
                v.push((format!("workload[{i}].programs[{j}]"), p.clone()));
            }
        }
        v
    }
}

/// The design the tests of this module's files share.
#[cfg(test)]
mod fixtures {
    use super::Mechanisms;

    pub(super) fn design(text: &str) -> Mechanisms {
        toml::from_str(text).unwrap()
    }

    pub(super) const TWO: &str = r#"
units = 16
unit-colors = 8
alone = ["base", "huge"]
[[workload]]
name = "WL1"
programs = ["a", "b"]
colors = [12, 4]
[[mechanism]]
label = "base"
[[mechanism]]
label = "huge"
app = { huge-pages = "always" }
[[mechanism]]
label = "col"
partitioned = true
"#;
}
