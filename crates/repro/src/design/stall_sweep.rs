//! `stall-sweep`: each program runs alone with colors `0..n` for every `n`
//! of the sweep, read as Tam et al.'s Figs. 6-8 (WIOSCA'07): the stall
//! rate, the L2 (LLC) miss rate and where the misses were served (the L3
//! victim cache or memory), each per 10^9 cycles, against the number of
//! colors. The runs are those of [`color_sweep`](super::color_sweep); only
//! the reading differs.
//!
//! Metrics, per program P and color count N:
//! * `stall:P:N`: cycles stalled on accesses that left the private levels
//!   (served by the LLC, the L3 or memory: Tam's "instruction retirement
//!   stalled due to L1 data cache misses") per 10^9 cycles;
//! * `mem-stall:P:N`: cycles stalled on memory alone per 10^9 cycles;
//! * `misses:P:N`: LLC misses per 10^9 cycles (Fig. 7 on the same axis);
//! * `miss-ratio:P:N`: LLC misses / LLC references;
//! * `l3:P:N` and `memory:P:N`: LLC misses served by the L3 and by memory
//!   per 10^9 cycles (Fig. 8; without an L3 every miss is a memory one);
//! * `stall-drop:P`: `stall` with the fewest colors / with the second
//!   fewest; `misses-change:P`: `misses` with the second fewest / with the
//!   fewest; `ratio-change:P`: the same of `miss-ratio`;
//! * `stall-monotone:P`: 1 if the stall rate never rises (by more than
//!   1%) as colors grow, else 0.

use std::collections::BTreeMap;

use cachepart_sim::system::AppTotals;
use serde::{Deserialize, Serialize};

use super::color_sweep::ColorSweep;
use super::miss_rate;
use crate::build::Run;
use crate::plot::{Chart, Series};
use crate::runner::{Analysis, RunResult};
use crate::table::{num, Table};

/// The `stall-sweep` design (fields as `color-sweep`'s but the knee
/// tolerance, which it does not use).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct StallSweep {
    /// The programs, each run alone.
    pub programs: Vec<String>,
    /// Color counts, ascending (colors `0..n` each).
    pub colors: Vec<u32>,
}

/// The rates of one run, per 10^9 cycles.
struct Rates {
    stall: f64,
    mem_stall: f64,
    misses: f64,
    l3: f64,
    memory: f64,
}

fn rates(t: &AppTotals) -> Rates {
    let g = |x: f64| {
        if t.cycles > 0.0 {
            x / t.cycles * 1e9
        } else {
            0.0
        }
    };
    let l3 = t.l3_hits.unwrap_or(0);
    let memory = t.l3_misses.unwrap_or(t.llc_misses);
    Rates {
        stall: g(t.l2_miss_stall_cycles),
        mem_stall: g(t.memory_stall_cycles),
        misses: g(t.llc_misses as f64),
        l3: g(l3 as f64),
        memory: g(memory as f64),
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

impl StallSweep {
    fn sweep(&self) -> ColorSweep {
        ColorSweep {
            programs: self.programs.clone(),
            colors: self.colors.clone(),
            knee_tolerance: 0.05,
        }
    }

    pub(super) fn programs_used(&self) -> Vec<(String, String)> {
        self.sweep().programs_used()
    }

    /// Every metric [`Self::analyse`] may compute.
    pub(super) fn metric_names(&self) -> Vec<String> {
        let mut v = Vec::new();
        for p in &self.programs {
            for n in &self.colors {
                for m in ["stall", "mem-stall", "misses", "miss-ratio", "l3", "memory"] {
                    v.push(format!("{m}:{p}:{n}"));
                }
            }
            for m in [
                "stall-drop",
                "misses-change",
                "ratio-change",
                "stall-monotone",
            ] {
                v.push(format!("{m}:{p}"));
            }
        }
        v
    }

    pub(super) fn check(&self) -> Result<(), (String, String)> {
        self.sweep().check()?;
        if self.colors.len() < 2 {
            return Err(("colors".into(), "needs at least two color counts".into()));
        }
        Ok(())
    }

    pub(super) fn runs(&self) -> Vec<Run> {
        self.sweep().runs()
    }

    pub(super) fn analyse(&self, _runs: &[Run], results: &[RunResult]) -> Analysis {
        let mut table = Table::new(&[
            "program",
            "colors",
            "IPC",
            "stall / Gcycle",
            "mem stall / Gcycle",
            "LLC misses / Gcycle",
            "LLC miss ratio",
            "L3 hits / Gcycle",
            "memory / Gcycle",
        ]);
        let mut metrics = BTreeMap::new();
        let mut series = Vec::new();
        let mut observations = Vec::new();
        let k = self.colors.len();
        for (pi, p) in self.programs.iter().enumerate() {
            let rs = &results[pi * k..(pi + 1) * k];
            let mut pts = Vec::new();
            let mut all = Vec::new();
            for (ci, r) in rs.iter().enumerate() {
                let t = &r.totals[0];
                let n = self.colors[ci];
                let x = rates(t);
                let mr = miss_rate(t);
                for (m, v) in [
                    ("stall", x.stall),
                    ("mem-stall", x.mem_stall),
                    ("misses", x.misses),
                    ("miss-ratio", mr),
                    ("l3", x.l3),
                    ("memory", x.memory),
                ] {
                    metrics.insert(format!("{m}:{p}:{n}"), v);
                }
                table.push(vec![
                    p.clone(),
                    n.to_string(),
                    num(t.ipc, 3),
                    format!("{:.3e}", x.stall),
                    format!("{:.3e}", x.mem_stall),
                    format!("{:.3e}", x.misses),
                    num(mr, 3),
                    format!("{:.3e}", x.l3),
                    format!("{:.3e}", x.memory),
                ]);
                pts.push((f64::from(n), x.stall / 1e9));
                all.push((x, mr));
            }
            let (a, b) = (&all[0], &all[1]);
            let stall_drop = ratio(a.0.stall, b.0.stall);
            let misses_change = ratio(b.0.misses, a.0.misses);
            let ratio_change = ratio(b.1, a.1);
            let monotone = pts.windows(2).all(|w| w[1].1 <= w[0].1 * 1.01);
            metrics.insert(format!("stall-drop:{p}"), stall_drop);
            metrics.insert(format!("misses-change:{p}"), misses_change);
            metrics.insert(format!("ratio-change:{p}"), ratio_change);
            metrics.insert(format!("stall-monotone:{p}"), f64::from(u8::from(monotone)));
            let (n0, n1) = (self.colors[0], self.colors[1]);
            let served = |x: &Rates| {
                let m = x.l3 + x.memory;
                if m > 0.0 {
                    format!(
                        "{:.0}% of its LLC misses served by the L3",
                        100.0 * x.l3 / m
                    )
                } else {
                    "no LLC misses".into()
                }
            };
            observations.push(format!(
                "**{p}**: from {n0} to {n1} color(s) the stall rate falls {stall_drop:.2}x while LLC misses per Gcycle change {misses_change:.2}x and the miss ratio {ratio_change:.2}x ({} with {n0}, {} with {n1}); the stall rate {} as colors grow.",
                served(&a.0),
                served(&b.0),
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
                title: "Stall rate alone against the number of colors".into(),
                x_label: "colors (of the LLC's)".into(),
                y_label: "share of cycles stalled beyond the L1 (stall rate / 10^9)".into(),
                series,
                x_ticks: None,
                reference: None,
                legend_left: false,
            },
            metrics,
            observations,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(cycles: f64, stall: f64, misses: u64, refs: u64, l3: Option<u64>) -> RunResult {
        RunResult {
            label: String::new(),
            totals: vec![AppTotals {
                instructions: 1000,
                cycles,
                llc_references: refs,
                llc_misses: misses,
                l2_miss_stall_cycles: stall,
                l3_hits: l3,
                l3_misses: l3.map(|h| misses - h),
                ..AppTotals::default()
            }],
            fallbacks: vec![0],
            cycles: cycles as u64,
            report: None,
        }
    }

    #[test]
    fn rates_per_gigacycle_by_hand() {
        let d = StallSweep {
            programs: vec!["a".into(), "b".into()],
            colors: vec![1, 2],
        };
        assert_eq!(d.runs().len(), 4);
        let results = vec![
            // a: 1 color, 2 colors (faster, fewer misses, served by the L3)
            result(1e6, 8e5, 1000, 2000, Some(100)),
            result(5e5, 2e5, 800, 2000, Some(600)),
            // b: no L3; its stall rate rises with 2 colors
            result(1e6, 1e5, 10, 100, None),
            result(1e6, 2e5, 10, 100, None),
        ];
        let a = d.analyse(&d.runs(), &results);
        let m = |k: &str| a.metrics[k];
        assert!((m("stall:a:1") - 8e8).abs() < 1e-3);
        assert!((m("stall:a:2") - 4e8).abs() < 1e-3);
        assert!((m("stall-drop:a") - 2.0).abs() < 1e-12);
        // 1000 misses per 1e6 cycles -> 1e6 per Gcycle; 800 per 5e5 -> 1.6e6
        assert!((m("misses-change:a") - 1.6).abs() < 1e-12);
        assert!((m("ratio-change:a") - 0.8).abs() < 1e-12);
        assert!((m("l3:a:2") - 1.2e6).abs() < 1e-3);
        assert!((m("memory:a:2") - 4e5).abs() < 1e-3);
        assert_eq!(m("stall-monotone:a"), 1.0);
        // Without an L3 every miss is a memory one.
        assert_eq!(m("l3:b:1"), 0.0);
        assert!((m("memory:b:1") - 1e4).abs() < 1e-6);
        assert_eq!(m("stall-monotone:b"), 0.0);
        for k in d.metric_names() {
            assert!(a.metrics.contains_key(&k), "{k}");
        }
        assert!(StallSweep {
            programs: vec!["a".into()],
            colors: vec![1],
        }
        .check()
        .is_err());
    }
}
