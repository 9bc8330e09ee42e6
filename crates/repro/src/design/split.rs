//! `split`: two programs on two cores share `total` colors, the first
//! getting colors `0..N` and the second `N..total`, for every N of the
//! sweep, against both sharing all `total` colors (no partitioning).
//! The run stops as soon as either program finishes, so both IPCs are
//! measured while they run together (Tam et al., Fig. 4: IPC normalised
//! to no partitioning).
//!
//! Metrics, per pair `A+B` and each of its programs X (Y the other):
//! `ipc:A+B:X:N` (X's IPC with N colors for A / X's IPC unpartitioned),
//! `max:A+B:X` (the best of those over N), `at:A+B:X` (that N),
//! `other:A+B:X` (Y's normalised IPC at that N), `mean-best:A+B` (the
//! best mean of the two normalised IPCs over N).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{color_range, miss_rate, positive};
use crate::build::{Run, RunApp, Stop};
use crate::plot::{Chart, Series};
use crate::runner::{Analysis, RunResult};
use crate::table::{num, Table};

fn sixteen() -> u32 {
    16
}

/// The `split` design.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Split {
    /// Pairs of programs `[A, B]`: A gets N colors, B the rest.
    pub pairs: Vec<[String; 2]>,
    /// Colors shared (default 16: `0..16`).
    #[serde(default = "sixteen")]
    pub total: u32,
    /// The values of N (default every one from 1 to total-1).
    #[serde(default)]
    pub n: Option<Vec<u32>>,
}

impl Split {
    fn ns(&self) -> Vec<u32> {
        self.n.clone().unwrap_or_else(|| (1..self.total).collect())
    }

    pub(super) fn programs_used(&self) -> Vec<(String, String)> {
        let mut v = Vec::new();
        for (i, [a, b]) in self.pairs.iter().enumerate() {
            v.push((format!("pairs[{i}][0]"), a.clone()));
            v.push((format!("pairs[{i}][1]"), b.clone()));
        }
        v
    }

    /// Every metric [`Self::analyse`] may compute.
    pub(super) fn metric_names(&self) -> Vec<String> {
        let mut v = Vec::new();
        for [a, b] in &self.pairs {
            let pair = format!("{a}+{b}");
            for n in self.ns() {
                v.push(format!("ipc:{pair}:{a}:{n}"));
                v.push(format!("ipc:{pair}:{b}:{n}"));
            }
            for name in [a, b] {
                for k in ["max", "at", "other"] {
                    v.push(format!("{k}:{pair}:{name}"));
                }
            }
            v.push(format!("mean-best:{pair}"));
            v.push(format!("mean-best-at:{pair}"));
        }
        v
    }

    pub(super) fn check(&self) -> Result<(), (String, String)> {
        if self.pairs.is_empty() {
            return Err(("pairs".into(), "needs at least one pair".into()));
        }
        for (i, [a, b]) in self.pairs.iter().enumerate() {
            if a == b {
                return Err((
                    format!("pairs[{i}]"),
                    "a pair needs two different programs".into(),
                ));
            }
        }
        positive("total", self.total)?;
        for (i, &n) in self.ns().iter().enumerate() {
            if n == 0 || n >= self.total {
                return Err((
                    format!("n[{i}]"),
                    format!(
                        "{n}: each program needs at least one color: 1..{}",
                        self.total - 1
                    ),
                ));
            }
        }
        Ok(())
    }

    pub(super) fn runs(&self) -> Vec<Run> {
        let mut runs = Vec::new();
        for [a, b] in &self.pairs {
            let pair = format!("{a}+{b}");
            let mut shared = Run::new(
                format!("{pair}/shared"),
                vec![
                    RunApp::of(a)
                        .set("colors", color_range(0, self.total))
                        .set("core", 0),
                    RunApp::of(b)
                        .set("colors", color_range(0, self.total))
                        .set("core", 1),
                ],
            );
            shared.stop = Stop::AnyDone;
            runs.push(shared);
            for n in self.ns() {
                let mut r = Run::new(
                    format!("{pair}/{n}"),
                    vec![
                        RunApp::of(a)
                            .set("colors", color_range(0, n))
                            .set("core", 0),
                        RunApp::of(b)
                            .set("colors", color_range(n, self.total - n))
                            .set("core", 1),
                    ],
                );
                r.stop = Stop::AnyDone;
                runs.push(r);
            }
        }
        runs
    }

    pub(super) fn analyse(&self, _runs: &[Run], results: &[RunResult]) -> Analysis {
        let ns = self.ns();
        let k = ns.len() + 1;
        let mut table = Table::new(&[
            "pair",
            "colors A",
            "colors B",
            "IPC A",
            "IPC B",
            "IPC A / unpartitioned",
            "IPC B / unpartitioned",
            "miss rate A",
            "miss rate B",
            "fallbacks A",
            "fallbacks B",
        ]);
        let mut metrics = BTreeMap::new();
        let mut series = Vec::new();
        let mut observations = Vec::new();
        for (pi, [a, b]) in self.pairs.iter().enumerate() {
            let pair = format!("{a}+{b}");
            let rs = &results[pi * k..(pi + 1) * k];
            let base = [rs[0].totals[0].ipc, rs[0].totals[1].ipc];
            let row = |label: String, lb: String, r: &RunResult, norm: [f64; 2]| {
                vec![
                    pair.clone(),
                    label,
                    lb,
                    num(r.totals[0].ipc, 4),
                    num(r.totals[1].ipc, 4),
                    num(norm[0], 4),
                    num(norm[1], 4),
                    num(miss_rate(&r.totals[0]), 3),
                    num(miss_rate(&r.totals[1]), 3),
                    r.fallbacks[0].to_string(),
                    r.fallbacks[1].to_string(),
                ]
            };
            table.push(row(
                format!("shared {}", self.total),
                format!("shared {}", self.total),
                &rs[0],
                [1.0, 1.0],
            ));
            let mut pts = [Vec::new(), Vec::new()];
            let mut norms = Vec::new();
            for (j, &n) in ns.iter().enumerate() {
                let r = &rs[j + 1];
                let norm = [r.totals[0].ipc / base[0], r.totals[1].ipc / base[1]];
                metrics.insert(format!("ipc:{pair}:{a}:{n}"), norm[0]);
                metrics.insert(format!("ipc:{pair}:{b}:{n}"), norm[1]);
                pts[0].push((f64::from(n), norm[0]));
                pts[1].push((f64::from(n), norm[1]));
                norms.push((n, norm));
                table.push(row(n.to_string(), (self.total - n).to_string(), r, norm));
            }
            for (x, name) in [a, b].into_iter().enumerate() {
                let y = 1 - x;
                let best =
                    norms
                        .iter()
                        .copied()
                        .fold(None::<(u32, [f64; 2])>, |acc, c| match acc {
                            Some(p) if p.1[x] >= c.1[x] => Some(p),
                            _ => Some(c),
                        });
                if let Some((n, v)) = best {
                    metrics.insert(format!("max:{pair}:{name}"), v[x]);
                    metrics.insert(format!("at:{pair}:{name}"), f64::from(n));
                    metrics.insert(format!("other:{pair}:{name}"), v[y]);
                    observations.push(format!(
                        "**{pair}**: {name} gains at most {:+.1}% (with {} colors for {a}), while {} changes by {:+.1}%.",
                        (v[x] - 1.0) * 100.0,
                        n,
                        [a, b][y],
                        (v[y] - 1.0) * 100.0
                    ));
                }
            }
            if let Some((n, v)) = norms
                .iter()
                .copied()
                .max_by(|p, q| (p.1[0] + p.1[1]).total_cmp(&(q.1[0] + q.1[1])))
            {
                metrics.insert(format!("mean-best:{pair}"), (v[0] + v[1]) / 2.0);
                metrics.insert(format!("mean-best-at:{pair}"), f64::from(n));
            }
            let [pa, pb] = pts;
            series.push(Series {
                name: format!("{a} ({pair})"),
                points: pa,
                dashed: false,
            });
            series.push(Series {
                name: format!("{b} ({pair})"),
                points: pb,
                dashed: true,
            });
        }
        Analysis {
            table,
            chart: Chart {
                title: format!(
                    "Two programs sharing {} colors: N for the first, {}-N for the second",
                    self.total, self.total
                ),
                x_label: "N (colors of the first program)".into(),
                y_label: "IPC / IPC without partitioning".into(),
                series,
                x_ticks: None,
                reference: Some(1.0),
                legend_left: true,
            },
            metrics,
            observations,
        }
    }
}
