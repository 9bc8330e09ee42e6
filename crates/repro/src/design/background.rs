//! `background`: a foreground program against background sets (heavy,
//! medium, light: one program per remaining core), with page coloring
//! (P: each app gets the section of `colors-per-app` contiguous colors of
//! its core, COLORIS's static scheme) and without (every app may use
//! every color), against two control runs: the foreground alone with its
//! section (S) and alone with the whole cache (F). The backgrounds run
//! until the foreground finishes (COLORIS, section 4.2, Fig. 7 and 8).
//!
//! Variation is the foreground's run time against its control: with
//! coloring `time(X+P) / time(S) - 1`, without `time(X) / time(F) - 1`.
//! Metrics, per foreground G and background set X: `time:G:X`,
//! `time:G:X+P`, `time:G:S`, `time:G:F` (cycles), `var:G:X`, `var:G:X+P`,
//! `max-var:G` and `max-var-p:G` (the largest absolute variation without
//! and with coloring), `reduction:G` (`1 - max-var-p / max-var`: the
//! paper's "39% reduction in variation"), `gain:G:X` (`time(X) /
//! time(X+P) - 1`: what coloring saves), `miss:G:X`, `miss:G:X+P`.

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
fn forever() -> u64 {
    1 << 50
}

/// One background set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct BackgroundSet {
    /// Its label (`H`, `M`, `L`).
    pub label: String,
    /// Its programs, one per core from core 0.
    pub programs: Vec<String>,
}

/// The `background` design.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Background {
    /// The foreground programs (each on the core after the backgrounds').
    pub foregrounds: Vec<String>,
    /// The background sets, in the order of the table and figure.
    pub backgrounds: Vec<BackgroundSet>,
    /// Colors of each core's section under coloring (default 16).
    #[serde(default = "sixteen")]
    pub colors_per_app: u32,
    /// Instruction limit of background programs (default: effectively
    /// none; the run stops when the foreground finishes).
    #[serde(default = "forever")]
    pub background_instructions: u64,
}

impl Background {
    pub(super) fn programs_used(&self) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = self
            .foregrounds
            .iter()
            .enumerate()
            .map(|(i, p)| (format!("foregrounds[{i}]"), p.clone()))
            .collect();
        for (i, b) in self.backgrounds.iter().enumerate() {
            for (j, p) in b.programs.iter().enumerate() {
                v.push((format!("backgrounds[{i}].programs[{j}]"), p.clone()));
            }
        }
        v
    }

    /// Every metric [`Self::analyse`] may compute.
    pub(super) fn metric_names(&self) -> Vec<String> {
        let mut v = Vec::new();
        for g in &self.foregrounds {
            for k in ["time", "miss"] {
                v.push(format!("{k}:{g}:S"));
                v.push(format!("{k}:{g}:F"));
            }
            for b in &self.backgrounds {
                let x = &b.label;
                for k in ["time", "var", "miss"] {
                    v.push(format!("{k}:{g}:{x}+P"));
                    v.push(format!("{k}:{g}:{x}"));
                }
                v.push(format!("gain:{g}:{x}"));
            }
            for k in ["max-var-p", "max-var", "reduction"] {
                v.push(format!("{k}:{g}"));
            }
        }
        v
    }

    pub(super) fn check(&self) -> Result<(), (String, String)> {
        if self.foregrounds.is_empty() || self.backgrounds.is_empty() {
            return Err((
                "foregrounds".into(),
                "needs foregrounds and backgrounds".into(),
            ));
        }
        positive("colors-per-app", self.colors_per_app)?;
        let n = self.backgrounds[0].programs.len();
        for (i, b) in self.backgrounds.iter().enumerate() {
            if b.programs.len() != n {
                return Err((
                    format!("backgrounds[{i}].programs"),
                    format!("every set needs the same number of programs ({n})"),
                ));
            }
            if self.foregrounds.iter().any(|f| b.programs.contains(f)) {
                return Err((
                    format!("backgrounds[{i}].programs"),
                    "a foreground cannot also be in the background (names must be unique)".into(),
                ));
            }
            let mut seen = std::collections::BTreeSet::new();
            if !b.programs.iter().all(|p| seen.insert(p)) {
                return Err((
                    format!("backgrounds[{i}].programs"),
                    "a program appears twice; define it twice under two names".into(),
                ));
            }
        }
        Ok(())
    }

    fn fg_core(&self) -> u32 {
        self.backgrounds[0].programs.len() as u32
    }

    fn section(&self, core: u32) -> String {
        color_range(core * self.colors_per_app, self.colors_per_app)
    }

    /// Runs per foreground: S, F, then X+P and X for every set X.
    fn per_foreground(&self) -> usize {
        2 + 2 * self.backgrounds.len()
    }

    pub(super) fn runs(&self) -> Vec<Run> {
        let mut runs = Vec::new();
        let core = self.fg_core();
        for g in &self.foregrounds {
            let fg = |colored: bool| {
                let a = RunApp::of(g).set("core", i64::from(core));
                if colored {
                    a.set("colors", self.section(core))
                } else {
                    a
                }
            };
            let mut s = Run::new(format!("{g}/S"), vec![fg(true)]);
            s.stop = Stop::AppDone(0);
            runs.push(s);
            let mut f = Run::new(format!("{g}/F"), vec![fg(false)]);
            f.stop = Stop::AppDone(0);
            runs.push(f);
            for b in &self.backgrounds {
                for colored in [true, false] {
                    let mut apps = vec![fg(colored)];
                    for (c, p) in b.programs.iter().enumerate() {
                        let mut a = RunApp::of(p)
                            .set("core", c as i64)
                            .set("instructions", self.background_instructions as i64);
                        if colored {
                            a = a.set("colors", self.section(c as u32));
                        }
                        apps.push(a);
                    }
                    let label = format!("{g}/{}{}", b.label, if colored { "+P" } else { "" });
                    let mut r = Run::new(label, apps);
                    r.stop = Stop::AppDone(0);
                    runs.push(r);
                }
            }
        }
        runs
    }

    pub(super) fn analyse(&self, _runs: &[Run], results: &[RunResult]) -> Analysis {
        let k = self.per_foreground();
        let mut table = Table::new(&[
            "foreground",
            "run",
            "coloring",
            "cycles",
            "time / control",
            "variation",
            "LLC miss rate",
            "LLC MPKI",
            "IPC",
        ]);
        let mut metrics = BTreeMap::new();
        let mut series = Vec::new();
        let mut observations = Vec::new();
        let mut ticks = vec!["alone".to_string()];
        ticks.extend(self.backgrounds.iter().rev().map(|b| b.label.clone()));
        for (gi, g) in self.foregrounds.iter().enumerate() {
            let rs = &results[gi * k..(gi + 1) * k];
            let t = |r: &RunResult| r.totals[0].cycles;
            let (ts, tf) = (t(&rs[0]), t(&rs[1]));
            metrics.insert(format!("time:{g}:S"), ts);
            metrics.insert(format!("time:{g}:F"), tf);
            metrics.insert(format!("miss:{g}:S"), miss_rate(&rs[0].totals[0]));
            metrics.insert(format!("miss:{g}:F"), miss_rate(&rs[1].totals[0]));
            let mut row = |run: &str, col: &str, r: &RunResult, control: f64| {
                let x = &r.totals[0];
                table.push(vec![
                    g.clone(),
                    run.into(),
                    col.into(),
                    format!("{:.0}", x.cycles),
                    num(x.cycles / control, 4),
                    format!("{:+.1}%", (x.cycles / control - 1.0) * 100.0),
                    num(miss_rate(x), 3),
                    num(x.llc_mpki(), 2),
                    num(x.ipc, 3),
                ]);
            };
            row("S (alone)", "yes", &rs[0], ts);
            row("F (alone)", "no", &rs[1], tf);
            let (mut max_p, mut max_n) = (0.0f64, 0.0f64);
            let mut pts_p = vec![(0.0, 1.0)];
            let mut pts_n = vec![(0.0, 1.0)];
            let nb = self.backgrounds.len();
            for (bi, b) in self.backgrounds.iter().enumerate() {
                let (rp, rn) = (&rs[2 + 2 * bi], &rs[3 + 2 * bi]);
                let x = &b.label;
                let vp = t(rp) / ts - 1.0;
                let vn = t(rn) / tf - 1.0;
                max_p = max_p.max(vp.abs());
                max_n = max_n.max(vn.abs());
                metrics.insert(format!("time:{g}:{x}+P"), t(rp));
                metrics.insert(format!("time:{g}:{x}"), t(rn));
                metrics.insert(format!("var:{g}:{x}+P"), vp);
                metrics.insert(format!("var:{g}:{x}"), vn);
                metrics.insert(format!("gain:{g}:{x}"), t(rn) / t(rp) - 1.0);
                metrics.insert(format!("miss:{g}:{x}+P"), miss_rate(&rp.totals[0]));
                metrics.insert(format!("miss:{g}:{x}"), miss_rate(&rn.totals[0]));
                row(&format!("{x}+P"), "yes", rp, ts);
                row(x, "no", rn, tf);
                // Light to heavy from left to right.
                let pos = (nb - bi) as f64;
                pts_p.push((pos, 1.0 + vp));
                pts_n.push((pos, 1.0 + vn));
            }
            pts_p.sort_by(|a, b| a.0.total_cmp(&b.0));
            pts_n.sort_by(|a, b| a.0.total_cmp(&b.0));
            metrics.insert(format!("max-var-p:{g}"), max_p);
            metrics.insert(format!("max-var:{g}"), max_n);
            let reduction = if max_n > 0.0 {
                1.0 - max_p / max_n
            } else {
                0.0
            };
            metrics.insert(format!("reduction:{g}"), reduction);
            let heavy = &self.backgrounds[0].label;
            observations.push(format!(
                "**{g}**: largest variation {:.1}% with coloring (vs S), {:.1}% without (vs F): {:.0}% less variation; against {heavy} coloring saves {:+.1}% of its run time; alone with its {} colors it takes {:.2}x the time it takes with the whole cache.",
                max_p * 100.0,
                max_n * 100.0,
                reduction * 100.0,
                metrics[&format!("gain:{g}:{heavy}")] * 100.0,
                self.colors_per_app,
                ts / tf
            ));
            series.push(Series {
                name: format!("{g} + P (vs S)"),
                points: pts_p,
                dashed: false,
            });
            series.push(Series {
                name: format!("{g} (vs F)"),
                points: pts_n,
                dashed: true,
            });
        }
        Analysis {
            table,
            chart: Chart {
                title: "Foreground run time against its control run alone".into(),
                x_label: "background".into(),
                y_label: "run time / alone (S with coloring, F without)".into(),
                series,
                x_ticks: Some(ticks),
                reference: Some(1.0),
                legend_left: true,
            },
            metrics,
            observations,
        }
    }
}
