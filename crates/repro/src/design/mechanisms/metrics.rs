//! The metrics of a `mechanisms` design (their names, for claims, and
//! their values read from the runs' results), with the table of every
//! app's counters and the chart of weighted-speedup gains.

use std::collections::BTreeMap;

use super::Mechanisms;
use crate::build::Run;
use crate::design::miss_rate;
use crate::plot::{Chart, Series};
use crate::runner::{Analysis, RunResult};
use crate::table::{num, Table};
use cachepart_sim::system::AppTotals;

impl Mechanisms {
    pub(crate) fn metric_names(&self) -> Vec<String> {
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

    pub(crate) fn analyse(&self, runs: &[Run], results: &[RunResult]) -> Analysis {
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
    use super::super::fixtures::{design, TWO};
    use super::*;

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
