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
//! in a [`Window`](crate::experiments::window::Window) (the paper's
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

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{miss_rate, positive};
use crate::experiments::build::{Run, RunApp, Stop};
use crate::experiments::plot::{Chart, Series};
use crate::experiments::runner::{Analysis, RunResult};
use crate::experiments::table::{num, Table};
use cachepart_sim::system::AppTotals;

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

    pub(super) fn programs_used(&self) -> Vec<(String, String)> {
        let mut v = Vec::new();
        for (i, w) in self.workloads.iter().enumerate() {
            for (j, p) in w.programs.iter().enumerate() {
                v.push((format!("workload[{i}].programs[{j}]"), p.clone()));
            }
        }
        v
    }

    pub(super) fn metric_names(&self) -> Vec<String> {
        let mut v = Vec::new();
        for m in &self.mechanisms {
            let l = &m.label;
            for w in &self.workloads {
                for k in [
                    "ws", "ws-gain", "tlb-mpki", "llc-mpki", "tlb-red", "llc-red",
                ] {
                    v.push(format!("{k}:{l}:{}", w.name));
                }
            }
            for k in ["ws-gain", "tlb-red", "llc-red"] {
                v.push(format!("{k}-mean:{l}"));
                v.push(format!("{k}-max:{l}"));
            }
        }
        for a in self.alone_labels() {
            for p in self.programs() {
                for k in [
                    "alone-ipc",
                    "alone-tlb-mpki",
                    "alone-llc-mpki",
                    "alone-speedup",
                ] {
                    v.push(format!("{k}:{a}:{p}"));
                }
            }
            v.push(format!("alone-speedup-mean:{a}"));
        }
        v
    }

    pub(super) fn check(&self) -> Result<(), (String, String)> {
        positive("units", self.units)?;
        positive("unit-colors", self.unit_colors)?;
        match (self.warmup_instructions, self.measure_instructions) {
            (Some(_), None) | (None, Some(_)) => {
                return Err((
                    "measure-instructions".into(),
                    "warmup-instructions and measure-instructions go together".into(),
                ))
            }
            (_, Some(0)) => return Err(("measure-instructions".into(), "must be positive".into())),
            _ => {}
        }
        if self.workloads.is_empty() {
            return Err((
                "workload".into(),
                "needs at least one [[design.workload]]".into(),
            ));
        }
        if self.mechanisms.is_empty() {
            return Err((
                "mechanism".into(),
                "needs at least one [[design.mechanism]] (the first is the baseline)".into(),
            ));
        }
        let mut names = std::collections::BTreeSet::new();
        for (i, w) in self.workloads.iter().enumerate() {
            let f = |k: &str| format!("workload[{i}].{k}");
            if !names.insert(&w.name) {
                return Err((f("name"), format!("{:?} names two workloads", w.name)));
            }
            if w.name.is_empty() || w.name.contains(['/', ':']) {
                return Err((f("name"), "must be non-empty, without '/' or ':'".into()));
            }
            if w.programs.is_empty() {
                return Err((f("programs"), "needs at least one program".into()));
            }
            if w.colors.len() != w.programs.len() {
                return Err((
                    f("colors"),
                    format!(
                        "has {} shares for {} programs (one per program)",
                        w.colors.len(),
                        w.programs.len()
                    ),
                ));
            }
            if let Some(j) = w.colors.iter().position(|&c| c == 0) {
                return Err((
                    format!("workload[{i}].colors[{j}]"),
                    "must be positive".into(),
                ));
            }
            let sum: u64 = w.colors.iter().map(|&c| u64::from(c)).sum();
            if sum > u64::from(self.units) {
                return Err((
                    f("colors"),
                    format!("shares sum to {sum}, more than the {} units", self.units),
                ));
            }
        }
        let mut labels = std::collections::BTreeSet::new();
        for (i, m) in self.mechanisms.iter().enumerate() {
            if !labels.insert(&m.label) {
                return Err((
                    format!("mechanism[{i}].label"),
                    format!("{:?} labels two mechanisms", m.label),
                ));
            }
            if m.label.is_empty() || m.label.contains(['/', ':']) {
                return Err((
                    format!("mechanism[{i}].label"),
                    "must be non-empty, without '/' or ':'".into(),
                ));
            }
            for k in ["colors", "core", "name"] {
                if m.app.contains_key(k) {
                    return Err((
                        format!("mechanism[{i}].app.{k}"),
                        "is set by the design (colors from the workload's shares, one core per program)".into(),
                    ));
                }
            }
        }
        for (i, a) in self.alone.iter().enumerate() {
            if self.mechanism(a).is_none() {
                return Err((
                    format!("alone[{i}]"),
                    format!("no mechanism labelled {a:?}"),
                ));
            }
        }
        Ok(())
    }

    fn app(&self, m: &Mechanism, program: &str, core: usize) -> RunApp {
        let mut a = RunApp::of(program);
        a.overrides = m.app.clone();
        a.set("core", core as i64)
    }

    pub(super) fn runs(&self) -> Vec<Run> {
        let mut runs = Vec::new();
        for w in &self.workloads {
            for m in &self.mechanisms {
                let mut first = 0u32;
                let apps = w
                    .programs
                    .iter()
                    .zip(&w.colors)
                    .enumerate()
                    .map(|(core, (p, &units))| {
                        let mut a = self.app(m, p, core);
                        if m.partitioned {
                            let lo = first * self.unit_colors;
                            let hi = (first + units) * self.unit_colors - 1;
                            a = a.set("colors", format!("{lo}-{hi}"));
                        }
                        first += units;
                        a
                    })
                    .collect();
                let mut r = Run::new(format!("{}/{}", w.name, m.label), apps);
                r.scenario = m.scenario.clone();
                r.stop = self.stop(true);
                runs.push(r);
            }
        }
        for a in self.alone_labels() {
            let m = self.mechanism(&a).expect("checked");
            for p in self.programs() {
                let mut r = Run::new(format!("alone/{a}/{p}"), vec![self.app(m, &p, 0)]);
                r.scenario = m.scenario.clone();
                r.stop = self.stop(false);
                runs.push(r);
            }
        }
        runs
    }

    pub(super) fn analyse(&self, runs: &[Run], results: &[RunResult]) -> Analysis {
        let by_label: BTreeMap<&str, &RunResult> = runs
            .iter()
            .zip(results)
            .map(|(r, x)| (r.label.as_str(), x))
            .collect();
        let alone_labels = self.alone_labels();
        let reference = alone_labels[0].clone();
        let alone = |a: &str, p: &str| -> &AppTotals {
            &by_label[format!("alone/{a}/{p}").as_str()].totals[0]
        };
        let mut metrics = BTreeMap::new();
        let mut table = Table::new(&[
            "run",
            "workload",
            "mechanism",
            "app",
            "colors",
            "instructions",
            "IPC",
            "IPC / alone",
            "TLB MPKI",
            "LLC MPKI",
            "LLC miss rate",
        ]);
        let mut observations = Vec::new();
        let base = &self.mechanisms[0].label;
        // Per workload and mechanism: weighted speedup and miss totals.
        for w in &self.workloads {
            for m in &self.mechanisms {
                let label = format!("{}/{}", w.name, m.label);
                let r = by_label[label.as_str()];
                let run = runs.iter().find(|x| x.label == label).expect("made");
                let mut ws = 0.0;
                let (mut instr, mut tlb, mut llc) = (0u64, 0u64, 0u64);
                for (i, (p, t)) in w.programs.iter().zip(&r.totals).enumerate() {
                    let norm = t.ipc / alone(&reference, p).ipc;
                    ws += norm;
                    instr += t.instructions;
                    tlb += t.tlb_misses;
                    llc += t.llc_misses;
                    let colors = run.apps[i]
                        .overrides
                        .get("colors")
                        .and_then(|c| c.as_str())
                        .unwrap_or("all")
                        .to_string();
                    table.push(vec![
                        label.clone(),
                        w.name.clone(),
                        m.label.clone(),
                        p.clone(),
                        colors,
                        t.instructions.to_string(),
                        num(t.ipc, 4),
                        num(norm, 4),
                        num(per_kilo(t.tlb_misses, t.instructions), 3),
                        num(t.llc_mpki(), 3),
                        num(miss_rate(t), 3),
                    ]);
                }
                let l = &m.label;
                metrics.insert(format!("ws:{l}:{}", w.name), ws);
                metrics.insert(format!("tlb-mpki:{l}:{}", w.name), per_kilo(tlb, instr));
                metrics.insert(format!("llc-mpki:{l}:{}", w.name), per_kilo(llc, instr));
            }
            for m in &self.mechanisms {
                let (l, n) = (&m.label, &w.name);
                let ratio = |k: &str| {
                    metrics[&format!("{k}:{l}:{n}")] / metrics[&format!("{k}:{base}:{n}")]
                };
                let gain = ratio("ws") - 1.0;
                let tlb = 1.0 - ratio("tlb-mpki");
                let llc = 1.0 - ratio("llc-mpki");
                metrics.insert(format!("ws-gain:{l}:{n}"), gain);
                metrics.insert(format!("tlb-red:{l}:{n}"), tlb);
                metrics.insert(format!("llc-red:{l}:{n}"), llc);
            }
        }
        let mut series = Vec::new();
        for m in &self.mechanisms {
            let l = &m.label;
            for k in ["ws-gain", "tlb-red", "llc-red"] {
                let v: Vec<f64> = self
                    .workloads
                    .iter()
                    .map(|w| metrics[&format!("{k}:{l}:{}", w.name)])
                    .collect();
                let mean = v.iter().sum::<f64>() / v.len() as f64;
                let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                metrics.insert(format!("{k}-mean:{l}"), mean);
                metrics.insert(format!("{k}-max:{l}"), max);
            }
            if l != base {
                series.push(Series {
                    name: l.clone(),
                    points: self
                        .workloads
                        .iter()
                        .enumerate()
                        .map(|(i, w)| {
                            (
                                i as f64,
                                100.0 * metrics[&format!("ws-gain:{l}:{}", w.name)],
                            )
                        })
                        .collect(),
                    dashed: false,
                });
            }
            observations.push(format!(
                "**{l}** against {base}: weighted speedup {:+.2}% on average (at most {:+.2}%), TLB misses {:+.1}% (at most {:+.1}%), LLC misses {:+.1}% (at most {:+.1}%); reductions are shown as negative changes.",
                100.0 * metrics[&format!("ws-gain-mean:{l}")],
                100.0 * metrics[&format!("ws-gain-max:{l}")],
                -100.0 * metrics[&format!("tlb-red-mean:{l}")],
                -100.0 * metrics[&format!("tlb-red-max:{l}")],
                -100.0 * metrics[&format!("llc-red-mean:{l}")],
                -100.0 * metrics[&format!("llc-red-max:{l}")],
            ));
        }
        // Programs alone.
        for a in &alone_labels {
            let mut sum = 0.0;
            let programs = self.programs();
            for p in &programs {
                let t = alone(a, p);
                let speedup = t.ipc / alone(&reference, p).ipc - 1.0;
                sum += speedup;
                metrics.insert(format!("alone-ipc:{a}:{p}"), t.ipc);
                metrics.insert(
                    format!("alone-tlb-mpki:{a}:{p}"),
                    per_kilo(t.tlb_misses, t.instructions),
                );
                metrics.insert(format!("alone-llc-mpki:{a}:{p}"), t.llc_mpki());
                metrics.insert(format!("alone-speedup:{a}:{p}"), speedup);
                table.push(vec![
                    format!("alone/{a}/{p}"),
                    "alone".into(),
                    a.clone(),
                    p.clone(),
                    "all".into(),
                    t.instructions.to_string(),
                    num(t.ipc, 4),
                    num(1.0 + speedup, 4),
                    num(per_kilo(t.tlb_misses, t.instructions), 3),
                    num(t.llc_mpki(), 3),
                    num(miss_rate(t), 3),
                ]);
            }
            metrics.insert(
                format!("alone-speedup-mean:{a}"),
                sum / programs.len() as f64,
            );
        }
        Analysis {
            table,
            chart: Chart {
                title: "Weighted speedup over the baseline".into(),
                x_label: "workload".into(),
                y_label: format!("weighted speedup over {base} (%)"),
                series,
                x_ticks: Some(self.workloads.iter().map(|w| w.name.clone()).collect()),
                reference: Some(0.0),
                legend_left: true,
            },
            metrics,
            observations,
        }
    }
}

/// `n` per 1,000 of `of` (0 when `of` is 0).
fn per_kilo(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        n as f64 * 1000.0 / of as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn design(text: &str) -> Mechanisms {
        toml::from_str(text).unwrap()
    }

    const TWO: &str = r#"
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

    #[test]
    fn partitioned_runs_get_contiguous_unit_ranges() {
        let d = design(TWO);
        d.check().unwrap();
        let runs = d.runs();
        let labels: Vec<&str> = runs.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "WL1/base",
                "WL1/huge",
                "WL1/col",
                "alone/base/a",
                "alone/base/b",
                "alone/huge/a",
                "alone/huge/b"
            ]
        );
        let col = &runs[2];
        assert_eq!(col.stop, Stop::AnyDone);
        assert_eq!(col.apps[0].overrides["colors"].as_str(), Some("0-95"));
        assert_eq!(col.apps[1].overrides["colors"].as_str(), Some("96-127"));
        assert_eq!(col.apps[1].overrides["core"].as_integer(), Some(1));
        assert!(runs[0].apps[0].overrides.get("colors").is_none());
        assert_eq!(
            runs[1].apps[1].overrides["huge-pages"].as_str(),
            Some("always")
        );
        assert_eq!(
            runs[5].apps[0].overrides["huge-pages"].as_str(),
            Some("always")
        );
        assert_eq!(runs[5].stop, Stop::AllDone);
        let windowed = design(&TWO.replace(
            "units = 16",
            "units = 16\nwarmup-instructions = 5\nmeasure-instructions = 7",
        ));
        windowed.check().unwrap();
        assert!(windowed.runs().iter().all(|r| r.stop
            == Stop::Window {
                warmup: 5,
                measure: 7
            }));
    }

    #[test]
    fn bad_designs_name_the_field() {
        let cases = [
            ("colors = [12, 4]", "colors = [12]", "workload[0].colors"),
            ("colors = [12, 4]", "colors = [12, 8]", "workload[0].colors"),
            (
                "colors = [12, 4]",
                "colors = [12, 0]",
                "workload[0].colors[1]",
            ),
            (
                "alone = [\"base\", \"huge\"]",
                "alone = [\"nope\"]",
                "alone[0]",
            ),
            ("label = \"col\"", "label = \"base\"", "mechanism[2].label"),
            (
                "app = { huge-pages",
                "app = { colors = \"0\", huge-pages",
                "mechanism[1].app.colors",
            ),
            ("units = 16", "units = 0", "units"),
            (
                "units = 16",
                "units = 16\nwarmup-instructions = 5",
                "measure-instructions",
            ),
        ];
        for (from, to, field) in cases {
            let d = design(&TWO.replace(from, to));
            let (f, what) = d.check().unwrap_err();
            assert_eq!(f, field, "{to}: {what}");
        }
    }

    fn totals(ipc: f64, tlb: u64, llc: u64) -> AppTotals {
        AppTotals {
            instructions: 1000,
            ipc,
            tlb_misses: tlb,
            llc_misses: llc,
            llc_references: llc.max(1),
            ..AppTotals::default()
        }
    }

    #[test]
    fn weighted_speedup_and_reductions_by_hand() {
        let d = design(TWO);
        let runs = d.runs();
        let mk = |label: &str, t: Vec<AppTotals>| RunResult {
            label: label.into(),
            fallbacks: vec![0; t.len()],
            totals: t,
            cycles: 0,
            report: None,
        };
        let results = vec![
            mk("WL1/base", vec![totals(0.5, 100, 40), totals(1.0, 100, 60)]),
            mk("WL1/huge", vec![totals(0.6, 10, 40), totals(1.0, 10, 60)]),
            mk("WL1/col", vec![totals(0.75, 100, 20), totals(1.0, 300, 30)]),
            mk("alone/base/a", vec![totals(1.0, 50, 10)]),
            mk("alone/base/b", vec![totals(2.0, 50, 10)]),
            mk("alone/huge/a", vec![totals(1.25, 5, 10)]),
            mk("alone/huge/b", vec![totals(2.0, 5, 10)]),
        ];
        let a = d.analyse(&runs, &results);
        let m = |k: &str| a.metrics[k];
        // base: 0.5/1 + 1/2 = 1.0; huge: 0.6 + 0.5 = 1.1; col: 0.75 + 0.5.
        assert!((m("ws:base:WL1") - 1.0).abs() < 1e-12);
        assert!((m("ws-gain:huge:WL1") - 0.1).abs() < 1e-12);
        assert!((m("ws-gain:col:WL1") - 0.25).abs() < 1e-12);
        // TLB: 200 -> 20 misses over 2,000 instructions: -90%.
        assert!((m("tlb-red:huge:WL1") - 0.9).abs() < 1e-12);
        assert!((m("tlb-red:col:WL1") + 1.0).abs() < 1e-12);
        assert!((m("llc-red:col:WL1") - 0.5).abs() < 1e-12);
        assert!((m("alone-speedup:huge:a") - 0.25).abs() < 1e-12);
        assert!((m("alone-speedup-mean:huge") - 0.125).abs() < 1e-12);
        assert_eq!(m("ws-gain-mean:col"), m("ws-gain-max:col"));
        let mut names = d.metric_names();
        names.sort();
        let computed: Vec<&String> = a.metrics.keys().collect();
        assert_eq!(names.iter().collect::<Vec<_>>(), computed);
        assert_eq!(a.chart.series.len(), 2);
    }
}
