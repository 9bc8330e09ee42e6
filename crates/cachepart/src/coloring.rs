//! Page-color policies on the simulated machine (scenario section
//! `[coloring]`): COLORIS's static sections and dynamic monitor (Ye et
//! al., PACT'14) and Tam et al.'s static sizing (WIOSCA'07), driven by the
//! interval loop of [`crate::sim_run`].
//!
//! ```toml
//! [coloring]
//! policy = "coloris-dynamic"   # or "coloris-static", "tam-static"
//! unit = 1                     # colors per decision (UNIT)
//! period-intervals = 2         # PERIOD, in sampling intervals
//! low = 0.05                   # global Low / High miss-rate thresholds
//! high = 0.30
//! min-references = 0           # fewer LLC references in a period: miss rate 0
//! expand = "selective-moving"  # or "redistribution"
//! win-us = 3000                # Redistribution's window WIN
//! # tam-static only:
//! curve = "miss-rate"          # or "stall-rate"
//! sweep-step = 1               # measure every sweep-step-th color count
//!
//! [[app]]
//! thresholds = { low = 0.01, high = 0.2 }   # this app's QoS (coloris-dynamic)
//! ```
//!
//! * **coloris-static**: the colors are cut into per-core sections of
//!   contiguous colors; each app, in scenario order, gets the whole section
//!   of its core (an app without `core` is placed on the least loaded core,
//!   [`ColorManager::add_app`]).
//! * **coloris-dynamic**: the same start; after every `period-intervals`
//!   intervals each live app's LLC references and misses over the period go
//!   to [`ColorManager::monitor`], and each change is carried out by
//!   [`System::recolor`] (shrink: lazy recoloring; expand: `expand`). An app
//!   whose colors run out gets `unit` more by ALLOC_COLORS and retries.
//! * **tam-static**: every app runs alone with `k` colors for the color
//!   counts of the sweep; its curve (misses per kilo-instruction, or
//!   memory-stall cycles per billion cycles) is interpolated linearly
//!   between measured counts, and [`size_partitions`] splits the colors;
//!   apps get contiguous ranges in scenario order. The sweep costs
//!   `apps x colors / sweep-step` alone runs (in parallel).
//!
//! Every decision is recorded as a [`RecolorEvent`].

use std::sync::{Arc, Mutex};

use cachepart_machine::Sample;
use cachepart_policy::{size_partitions, ColorManager, ColorisConfig, Thresholds};
use cachepart_sim::memory::{AllocatorKind, ExpandPolicy, RecolorConfig};
use cachepart_sim::system::{AppSpec, PlatformConfig, System};
use cachepart_units::IdSet;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::Error;

/// The `[coloring]` section as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ColoringFile {
    /// `coloris-static`, `coloris-dynamic` or `tam-static`.
    pub policy: String,
    /// Colors added or taken per decision (UNIT; default 1).
    #[serde(default)]
    pub unit: Option<u32>,
    /// Sampling intervals per monitor period (PERIOD; default 1).
    #[serde(default)]
    pub period_intervals: Option<u64>,
    /// Global Low miss-rate threshold (coloris-dynamic).
    #[serde(default)]
    pub low: Option<f64>,
    /// Global High miss-rate threshold (coloris-dynamic).
    #[serde(default)]
    pub high: Option<f64>,
    /// Below this many LLC references in a period the miss rate is 0.
    #[serde(default)]
    pub min_references: Option<u64>,
    /// Expansion: `selective-moving` (default) or `redistribution`.
    #[serde(default)]
    pub expand: Option<String>,
    /// Redistribution's window in microseconds (default 3000).
    #[serde(default)]
    pub win_us: Option<f64>,
    /// tam-static's curve: `miss-rate` (default) or `stall-rate`.
    #[serde(default)]
    pub curve: Option<String>,
    /// tam-static: measure every `sweep-step`-th color count (default 1).
    #[serde(default)]
    pub sweep_step: Option<u32>,
}

/// The color policies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ColorPolicy {
    /// COLORIS's per-core sections, fixed.
    ColorisStatic,
    /// COLORIS's sections and Cache Utilization Monitor (Algorithm 1).
    ColorisDynamic,
    /// Tam et al.'s sizing from alone curves.
    TamStatic,
}

impl ColorPolicy {
    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            ColorPolicy::ColorisStatic => "coloris-static",
            ColorPolicy::ColorisDynamic => "coloris-dynamic",
            ColorPolicy::TamStatic => "tam-static",
        }
    }

    /// The allocator the policy uses by default.
    pub fn allocator(self) -> AllocatorKind {
        match self {
            ColorPolicy::TamStatic => AllocatorKind::Tam,
            _ => AllocatorKind::Coloris,
        }
    }
}

/// tam-static's curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TamCurve {
    /// LLC misses per kilo-instruction.
    MissRate,
    /// Memory-stall cycles per billion cycles.
    StallRate,
}

/// A checked `[coloring]` section.
#[derive(Clone, Debug, PartialEq)]
pub struct Coloring {
    /// The policy.
    pub policy: ColorPolicy,
    /// UNIT.
    pub unit: u32,
    /// PERIOD in intervals.
    pub period_intervals: u64,
    /// Global thresholds (coloris-dynamic).
    pub thresholds: Thresholds,
    /// Per-app thresholds.
    pub app_thresholds: Vec<Option<Thresholds>>,
    /// Minimum references for a non-zero miss rate.
    pub min_references: u64,
    /// The recoloring engine's configuration.
    pub recolor: RecolorConfig,
    /// tam-static's curve.
    pub curve: TamCurve,
    /// tam-static's sweep step.
    pub sweep_step: u32,
    /// Colors of the LLC.
    pub colors: u32,
    /// Cores.
    pub cores: u32,
}

impl ColoringFile {
    /// Checks the section; `err(field, what)` builds an error naming the
    /// file and field. `app_thresholds` are the apps' own pairs with their
    /// field names.
    pub fn check(
        &self,
        colors: u32,
        cores: u32,
        app_thresholds: &[(String, Option<Thresholds>)],
        err: &dyn Fn(String, String) -> Error,
    ) -> Result<Coloring, Error> {
        let policy = match self.policy.as_str() {
            "coloris-static" => ColorPolicy::ColorisStatic,
            "coloris-dynamic" => ColorPolicy::ColorisDynamic,
            "tam-static" => ColorPolicy::TamStatic,
            p => {
                return Err(err(
                    "coloring.policy".into(),
                    format!(
                        "unknown color policy {p:?}: expected coloris-static, coloris-dynamic or tam-static"
                    ),
                ))
            }
        };
        let dynamic = policy == ColorPolicy::ColorisDynamic;
        let only = |field: &str, set: bool, who: &str| -> Result<(), Error> {
            if set {
                return Err(err(
                    format!("coloring.{field}"),
                    format!("only {who} uses it (policy is {})", policy.name()),
                ));
            }
            Ok(())
        };
        only("low", !dynamic && self.low.is_some(), "coloris-dynamic")?;
        only("high", !dynamic && self.high.is_some(), "coloris-dynamic")?;
        only(
            "period-intervals",
            !dynamic && self.period_intervals.is_some(),
            "coloris-dynamic",
        )?;
        only(
            "expand",
            !dynamic && self.expand.is_some(),
            "coloris-dynamic",
        )?;
        only(
            "win-us",
            !dynamic && self.win_us.is_some(),
            "coloris-dynamic",
        )?;
        let tam = policy == ColorPolicy::TamStatic;
        only("curve", !tam && self.curve.is_some(), "tam-static")?;
        only(
            "sweep-step",
            !tam && self.sweep_step.is_some(),
            "tam-static",
        )?;
        let thresholds = if dynamic {
            let low = self
                .low
                .ok_or_else(|| err("coloring.low".into(), "coloris-dynamic needs low".into()))?;
            let high = self
                .high
                .ok_or_else(|| err("coloring.high".into(), "coloris-dynamic needs high".into()))?;
            Thresholds { low, high }
        } else {
            Thresholds {
                low: 0.0,
                high: 1.0,
            }
        };
        if self.period_intervals == Some(0) {
            return Err(err(
                "coloring.period-intervals".into(),
                "must be at least 1".into(),
            ));
        }
        let unit = self.unit.unwrap_or(1);
        // The manager checks unit, colors and cores and the thresholds.
        let cfg = ColorisConfig {
            colors,
            cores,
            unit,
            thresholds,
            min_references: self.min_references.unwrap_or(0),
        };
        cfg.check().map_err(|e| {
            let field = match &e {
                cachepart_policy::PolicyError::BadParameter { name, .. } => {
                    format!("coloring.{name}")
                }
                _ => "coloring".into(),
            };
            err(field.replace("thresholds.", ""), e.to_string())
        })?;
        let mut per_app = Vec::with_capacity(app_thresholds.len());
        for (field, t) in app_thresholds {
            if let Some(t) = t {
                if !dynamic {
                    return Err(err(
                        field.clone(),
                        format!(
                            "per-app thresholds need policy coloris-dynamic (policy is {})",
                            policy.name()
                        ),
                    ));
                }
                t.check("thresholds")
                    .map_err(|e| err(field.clone(), e.to_string()))?;
            }
            per_app.push(*t);
        }
        if tam && app_thresholds.len() as u32 > colors {
            return Err(err(
                "coloring.policy".into(),
                format!(
                    "tam-static needs a color per app: {} apps, {colors} colors",
                    app_thresholds.len()
                ),
            ));
        }
        let expand = match self.expand.as_deref() {
            None | Some("selective-moving") => ExpandPolicy::SelectiveMoving,
            Some("redistribution") => ExpandPolicy::Redistribution,
            Some(x) => {
                return Err(err(
                    "coloring.expand".into(),
                    format!("unknown expansion {x:?}: expected selective-moving or redistribution"),
                ))
            }
        };
        let win_us = self.win_us.unwrap_or(RecolorConfig::default().win_us);
        if !(win_us.is_finite() && win_us >= 0.0) {
            return Err(err(
                "coloring.win-us".into(),
                format!("{win_us} is not a finite number of microseconds >= 0"),
            ));
        }
        let curve = match self.curve.as_deref() {
            None | Some("miss-rate") => TamCurve::MissRate,
            Some("stall-rate") => TamCurve::StallRate,
            Some(x) => {
                return Err(err(
                    "coloring.curve".into(),
                    format!("unknown curve {x:?}: expected miss-rate or stall-rate"),
                ))
            }
        };
        let sweep_step = self.sweep_step.unwrap_or(1);
        if sweep_step == 0 || sweep_step > colors {
            return Err(err(
                "coloring.sweep-step".into(),
                format!("{sweep_step}: expected 1..={colors}"),
            ));
        }
        Ok(Coloring {
            policy,
            unit,
            period_intervals: self.period_intervals.unwrap_or(1),
            thresholds,
            app_thresholds: per_app,
            min_references: cfg.min_references,
            recolor: RecolorConfig { expand, win_us },
            curve,
            sweep_step,
            colors,
            cores,
        })
    }
}

/// One recoloring decision.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct RecolorEvent {
    /// The interval after which it was taken (0-based).
    pub interval: u64,
    /// The app's index.
    pub app: usize,
    /// The app's name.
    pub name: String,
    /// `monitor` (Algorithm 1) or `exhausted` (its colors ran out).
    pub reason: String,
    /// LLC references of the period (monitor).
    pub references: u64,
    /// LLC misses of the period (monitor).
    pub misses: u64,
    /// Colors added.
    pub added: String,
    /// Colors removed.
    pub removed: String,
    /// Its colors afterwards.
    pub colors: String,
    /// Pages moved at once.
    pub pages_moved: u64,
    /// Pages marked for lazy moves.
    pub pages_marked: u64,
}

/// One call of the monitor (kept for checks; not in reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MonitorCall {
    /// Interval after which it was called.
    pub interval: u64,
    /// The app.
    pub app: usize,
    /// LLC references of the period.
    pub references: u64,
    /// LLC misses of the period.
    pub misses: u64,
}

/// A decision in order: a monitor call or an ALLOC_COLORS on exhaustion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// [`ColorManager::monitor`] with these inputs.
    Monitor(MonitorCall),
    /// [`ColorManager::alloc_colors`] of UNIT for this app.
    Exhausted(usize),
}

/// What the coloring did in a run (`SimReport.coloring`).
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct ColoringReport {
    /// The policy.
    pub policy: String,
    /// Each app's colors at the start.
    pub initial: Vec<String>,
    /// tam-static's curves (per app, one value per color count), if any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub curves: Vec<Vec<f64>>,
    /// Every decision that changed colors, in order.
    pub events: Vec<RecolorEvent>,
    /// Every decision taken, in order (not serialised).
    #[serde(skip)]
    pub decisions: Vec<Decision>,
}

struct Shared {
    manager: Option<ColorManager>,
    interval: u64,
    names: Vec<String>,
    unit: u32,
    events: Vec<RecolorEvent>,
    decisions: Vec<Decision>,
}

/// Runs a [`Coloring`] on a [`System`]: initial colors, the exhaustion
/// hook and the periodic monitor.
pub struct ColorDriver {
    cfg: Coloring,
    shared: Arc<Mutex<Shared>>,
    initial: Vec<IdSet>,
    curves: Vec<Vec<f64>>,
    acc: Vec<(u64, u64)>,
    in_period: u64,
}

fn lock(s: &Arc<Mutex<Shared>>) -> std::sync::MutexGuard<'_, Shared> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

impl ColorDriver {
    /// Decides the initial colors (and, for COLORIS, the cores of apps
    /// placed by it: `pinned[i]` false lets the manager choose), running
    /// tam-static's alone sweep if needed. `apps` get their cores updated.
    pub fn new(
        cfg: &Coloring,
        platform: &PlatformConfig,
        apps: &mut [AppSpec],
        pinned: &[bool],
        seed: u64,
    ) -> Result<ColorDriver, Error> {
        let names: Vec<String> = apps.iter().map(|a| a.name.clone()).collect();
        let mut initial = Vec::with_capacity(apps.len());
        let mut curves = Vec::new();
        let manager = match cfg.policy {
            ColorPolicy::ColorisStatic | ColorPolicy::ColorisDynamic => {
                let mut m = ColorManager::new(ColorisConfig {
                    colors: cfg.colors,
                    cores: cfg.cores,
                    unit: cfg.unit,
                    thresholds: cfg.thresholds,
                    min_references: cfg.min_references,
                })
                .map_err(|e| Error::Input(format!("coloring: {e}")))?;
                for (i, a) in apps.iter_mut().enumerate() {
                    let core = pinned.get(i).copied().unwrap_or(true).then_some(a.core);
                    let t = cfg.app_thresholds.get(i).copied().flatten();
                    let (core, colors) = m
                        .add_app(core, t)
                        .map_err(|e| Error::Input(format!("coloring: app {}: {e}", a.name)))?;
                    a.core = core;
                    initial.push(colors);
                }
                Some(m)
            }
            ColorPolicy::TamStatic => {
                curves = tam_curves(cfg, platform, apps, seed)?;
                let sizes = size_partitions(&curves, cfg.colors, 1)
                    .map_err(|e| Error::Input(format!("coloring: tam-static: {e}")))?;
                let mut next = 0u32;
                for s in sizes {
                    initial.push((next..next + s).collect());
                    next += s;
                }
                None
            }
        };
        Ok(ColorDriver {
            cfg: cfg.clone(),
            shared: Arc::new(Mutex::new(Shared {
                manager,
                interval: 0,
                names,
                unit: cfg.unit,
                events: Vec::new(),
                decisions: Vec::new(),
            })),
            initial,
            curves,
            acc: vec![(0, 0); apps.len()],
            in_period: 0,
        })
    }

    /// Each app's colors at the start.
    pub fn initial(&self) -> &[IdSet] {
        &self.initial
    }

    /// Gives the apps their initial colors and, for COLORIS, the hook that
    /// gives an app whose colors ran out UNIT more.
    pub fn install(&self, sys: &mut System) -> Result<(), Error> {
        for (i, c) in self.initial.iter().enumerate() {
            sys.set_app_colors(i, c)
                .map_err(|e| Error::Input(format!("coloring: {e}")))?;
        }
        if lock(&self.shared).manager.is_some() {
            let shared = Arc::clone(&self.shared);
            sys.set_exhausted_hook(Box::new(move |app| {
                let mut s = lock(&shared);
                let unit = s.unit;
                let interval = s.interval;
                let m = s.manager.as_mut()?;
                let added = m.alloc_colors(app, unit).ok()?;
                let colors = m.colors_of(app);
                s.decisions.push(Decision::Exhausted(app));
                if added.is_empty() {
                    return None;
                }
                let name = s.names[app].clone();
                s.events.push(RecolorEvent {
                    interval,
                    app,
                    name,
                    reason: "exhausted".into(),
                    references: 0,
                    misses: 0,
                    added: added.to_string(),
                    removed: String::new(),
                    colors: colors.to_string(),
                    pages_moved: 0,
                    pages_marked: 0,
                });
                Some(colors)
            }));
        }
        Ok(())
    }

    /// The policy hook of the interval loop: called after interval
    /// `interval` with its samples. COLORIS dynamic monitors every live app
    /// at the end of each period and recolors.
    pub fn after_interval(
        &mut self,
        interval: u64,
        sys: &mut System,
        samples: &[Sample],
    ) -> Result<(), Error> {
        lock(&self.shared).interval = interval + 1;
        if self.cfg.policy != ColorPolicy::ColorisDynamic {
            return Ok(());
        }
        for s in samples {
            if let Some(a) = self.acc.get_mut(s.app) {
                a.0 += s.llc_references.round() as u64;
                a.1 += s.llc_misses.round() as u64;
            }
        }
        self.in_period += 1;
        if self.in_period < self.cfg.period_intervals {
            return Ok(());
        }
        self.in_period = 0;
        let totals = sys.totals();
        let acc = std::mem::replace(&mut self.acc, vec![(0, 0); samples.len().max(totals.len())]);
        for (app, &(references, misses)) in acc.iter().enumerate() {
            if totals.get(app).is_none_or(|t| t.done) {
                continue;
            }
            let mut s = lock(&self.shared);
            let Some(m) = s.manager.as_mut() else {
                return Ok(());
            };
            let change = m
                .monitor(app, references, misses)
                .map_err(|e| Error::Input(format!("coloring: {e}")))?;
            let colors = m.colors_of(app);
            s.decisions.push(Decision::Monitor(MonitorCall {
                interval,
                app,
                references,
                misses,
            }));
            if change.is_empty() {
                continue;
            }
            let name = s.names[app].clone();
            drop(s);
            let sum = sys
                .recolor(app, &colors, &self.cfg.recolor)
                .map_err(|e| Error::Input(format!("coloring: {e}")))?;
            lock(&self.shared).events.push(RecolorEvent {
                interval,
                app,
                name,
                reason: "monitor".into(),
                references,
                misses,
                added: change.added.to_string(),
                removed: change.removed.to_string(),
                colors: colors.to_string(),
                pages_moved: sum.moved,
                pages_marked: sum.marked,
            });
        }
        Ok(())
    }

    /// The report of what happened.
    pub fn report(&self) -> ColoringReport {
        let s = lock(&self.shared);
        ColoringReport {
            policy: self.cfg.policy.name().into(),
            initial: self.initial.iter().map(|c| c.to_string()).collect(),
            curves: self.curves.clone(),
            events: s.events.clone(),
            decisions: s.decisions.clone(),
        }
    }
}

/// The color counts tam-static measures: every `step`-th from 1, and the
/// largest.
pub fn sweep_sizes(max: u32, step: u32) -> Vec<u32> {
    let mut v: Vec<u32> = (1..=max).step_by(step.max(1) as usize).collect();
    if v.last() != Some(&max) {
        v.push(max);
    }
    v
}

/// Each app's curve over color counts `1..=colors - (apps-1)`, measured
/// alone at the sweep's counts (colors `0..k`) and interpolated linearly
/// in between.
fn tam_curves(
    cfg: &Coloring,
    platform: &PlatformConfig,
    apps: &[AppSpec],
    seed: u64,
) -> Result<Vec<Vec<f64>>, Error> {
    let max = cfg.colors - (apps.len() as u32).saturating_sub(1);
    let sizes = sweep_sizes(max, cfg.sweep_step);
    let jobs: Vec<(usize, u32)> = (0..apps.len())
        .flat_map(|a| sizes.iter().map(move |&k| (a, k)))
        .collect();
    let values: Vec<f64> = jobs
        .par_iter()
        .map(|&(a, k)| {
            let mut spec = apps[a].clone();
            spec.core = 0;
            let fail = |e: cachepart_sim::system::SystemError| {
                Error::Input(format!(
                    "coloring: tam-static alone run of {} with {k} colors: {e}",
                    spec.name
                ))
            };
            let mut sys = System::new(platform, vec![spec.clone()], seed).map_err(fail)?;
            sys.set_app_colors(0, &(0..k).collect()).map_err(fail)?;
            sys.run_to_end(1 << 40, |_| {}).map_err(fail)?;
            let t = &sys.totals()[0];
            Ok(match cfg.curve {
                TamCurve::MissRate => t.llc_mpki(),
                TamCurve::StallRate => {
                    if t.cycles > 0.0 {
                        t.memory_stall_cycles / t.cycles * 1e9
                    } else {
                        0.0
                    }
                }
            })
        })
        .collect::<Result<_, Error>>()?;
    Ok((0..apps.len())
        .map(|a| {
            let pts = &values[a * sizes.len()..(a + 1) * sizes.len()];
            interpolate(&sizes, pts, max)
        })
        .collect())
}

/// Values at `1..=max` from values `pts` at `sizes` (increasing, first 1,
/// last `max`), linear in between.
pub fn interpolate(sizes: &[u32], pts: &[f64], max: u32) -> Vec<f64> {
    (1..=max)
        .map(|k| {
            let j = sizes.partition_point(|&s| s < k);
            match (sizes.get(j), j.checked_sub(1)) {
                (Some(&s), _) if s == k => pts[j],
                (Some(&s1), Some(i)) => {
                    let s0 = sizes[i];
                    let f = f64::from(k - s0) / f64::from(s1 - s0);
                    pts[i] + f * (pts[j] - pts[i])
                }
                _ => pts.last().copied().unwrap_or(0.0),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_and_interpolation() {
        assert_eq!(sweep_sizes(10, 4), vec![1, 5, 9, 10]);
        assert_eq!(sweep_sizes(3, 1), vec![1, 2, 3]);
        let v = interpolate(&[1, 5, 9, 10], &[10.0, 6.0, 2.0, 1.0], 10);
        assert_eq!(v, vec![10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]);
    }

    fn check(text: &str, apps: &[(String, Option<Thresholds>)]) -> Result<Coloring, String> {
        let f: ColoringFile = toml::from_str(text).map_err(|e| e.to_string())?;
        f.check(16, 2, apps, &|field, what| {
            Error::Input(format!("s.toml: {field}: {what}"))
        })
        .map_err(|e| e.to_string())
    }

    #[test]
    fn checks_name_the_field() {
        let none = vec![("app[0] (a).thresholds".to_string(), None)];
        let c = check("policy = \"coloris-dynamic\"\nlow = 0.1\nhigh = 0.5\nexpand = \"redistribution\"\nwin-us = 100\n", &none).unwrap();
        assert_eq!(c.recolor.expand, ExpandPolicy::Redistribution);
        assert_eq!(c.recolor.win_us, 100.0);
        let cases = [
            ("policy = \"nope\"", "coloring.policy"),
            (
                "policy = \"coloris-dynamic\"\nlow = 0.6\nhigh = 0.5",
                "coloring.low",
            ),
            ("policy = \"coloris-dynamic\"\nhigh = 0.5", "coloring.low"),
            (
                "policy = \"coloris-dynamic\"\nlow = 0.1\nhigh = 0.5\nunit = 17",
                "coloring.unit",
            ),
            (
                "policy = \"coloris-dynamic\"\nlow = 0.1\nhigh = 0.5\nexpand = \"x\"",
                "coloring.expand",
            ),
            (
                "policy = \"coloris-dynamic\"\nlow = 0.1\nhigh = 0.5\nperiod-intervals = 0",
                "coloring.period-intervals",
            ),
            ("policy = \"coloris-static\"\nlow = 0.1", "coloring.low"),
            ("policy = \"tam-static\"\ncurve = \"x\"", "coloring.curve"),
            (
                "policy = \"tam-static\"\nsweep-step = 0",
                "coloring.sweep-step",
            ),
        ];
        for (text, want) in cases {
            let e = check(text, &none).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
        let bad = vec![(
            "app[0] (a).thresholds".to_string(),
            Some(Thresholds {
                low: 0.5,
                high: 0.1,
            }),
        )];
        let e = check("policy = \"coloris-dynamic\"\nlow = 0.1\nhigh = 0.5", &bad).unwrap_err();
        assert!(
            e.contains("app[0] (a).thresholds") && e.contains("low"),
            "{e}"
        );
    }

    const PLATFORM: &str = r#"name = "tiny"
cores = 2
[core.l1i]
size-bytes = 8192
ways = 4
line-bytes = 64
[core.l1d]
size-bytes = 8192
ways = 4
line-bytes = 64
[core.l2]
size-bytes = 32768
ways = 4
line-bytes = 64
[llc]
size-bytes = 262144
ways = 8
line-bytes = 64
[memory]
size-bytes = 67108864
coloris = { pool-bytes = 33554432 }
[timing]
quantum-cycles = 100000
"#;

    fn scenario(coloring: &str, thresholds: &str) -> crate::scenario::Scenario {
        let dir = crate::test_traces::Scratch::new("coloring");
        let d = dir.path();
        std::fs::write(d.join("tiny.toml"), PLATFORM).unwrap();
        let text = format!(
            r#"platform = "tiny.toml"
interval-cycles = 200000
instructions = 600000
alone = false
{coloring}
[[app]]
name = "hungry"
synth = {{ seed = 1, accesses = 100000, pattern = {{ class = "cache-sensitive", working-set-bytes = 196608, distribution = "zipf" }} }}
[[app]]
name = "light"
synth = {{ seed = 2, accesses = 100000, pattern = {{ class = "light" }} }}
{thresholds}
[[app]]
name = "stream"
synth = {{ seed = 3, accesses = 100000, pattern = {{ class = "streaming", array-bytes = 4194304 }} }}
"#
        );
        let p = d.join("s.toml");
        std::fs::write(&p, text).unwrap();

        crate::scenario::Scenario::load(&p).unwrap()
    }

    #[test]
    fn dynamic_coloris_decisions_replay_through_the_monitor() {
        let s = scenario(
            "[coloring]\npolicy = \"coloris-dynamic\"\nlow = 0.1\nhigh = 0.5\nperiod-intervals = 2\n",
            "thresholds = { low = 0.2, high = 0.9 }",
        );
        let c = s.coloring.clone().unwrap();
        assert_eq!(s.platform.memory.allocator, AllocatorKind::Coloris);
        let r = crate::sim_run::run_scenario(&s, None).unwrap();
        let rep = r.coloring.as_ref().unwrap();
        assert_eq!(rep.initial, vec!["0-3", "4-7", "0-3"]);
        assert!(!rep.events.is_empty(), "no decision: {:?}", rep.decisions);
        eprintln!("{}", crate::sim_run::to_table(&r));
        // Replay every decision through a fresh manager.
        let mut m = ColorManager::new(ColorisConfig {
            colors: 8,
            cores: 2,
            unit: 1,
            thresholds: c.thresholds,
            min_references: 0,
        })
        .unwrap();
        for (i, a) in s.apps.iter().enumerate() {
            m.add_app(Some(a.core), c.app_thresholds[i]).unwrap();
        }
        let mut events = rep.events.iter();
        for d in &rep.decisions {
            let (app, change) = match *d {
                Decision::Monitor(call) => {
                    // The inputs are the period's samples.
                    let (mut refs, mut misses) = (0.0, 0.0);
                    for row in &r.samples {
                        if row.app == call.app
                            && row.interval + c.period_intervals > call.interval
                            && row.interval <= call.interval
                        {
                            refs += row.sample.llc_references;
                            misses += row.sample.llc_misses;
                        }
                    }
                    assert_eq!((call.references, call.misses), (refs as u64, misses as u64));
                    (
                        call.app,
                        m.monitor(call.app, call.references, call.misses).unwrap(),
                    )
                }
                Decision::Exhausted(app) => (
                    app,
                    cachepart_policy::ColorChange {
                        added: m.alloc_colors(app, 1).unwrap(),
                        removed: IdSet::new(),
                    },
                ),
            };
            if change.is_empty() {
                continue;
            }
            let e = events.next().expect("an event per change");
            assert_eq!(
                (e.app, e.added.clone(), e.removed.clone(), e.colors.clone()),
                (
                    app,
                    change.added.to_string(),
                    change.removed.to_string(),
                    m.colors_of(app).to_string()
                )
            );
        }
        assert!(events.next().is_none());
        // Final colors are the manager's; pages moved are counted.
        for (i, a) in r.apps.iter().enumerate() {
            assert_eq!(a.colors, m.colors_of(i).to_string());
        }
        let moved: u64 = r.apps.iter().map(|a| a.totals.pages_recolored).sum();
        let sampled: f64 = r.samples.iter().map(|x| x.sample.pages_recolored).sum();
        assert_eq!(moved, sampled as u64);
    }

    #[test]
    fn static_policies_assign_sections_and_sizes() {
        let s = scenario("[coloring]\npolicy = \"coloris-static\"\n", "");
        let r = crate::sim_run::run_scenario(&s, None).unwrap();
        let colors: Vec<&str> = r.apps.iter().map(|a| a.colors.as_str()).collect();
        assert_eq!(colors, vec!["0-3", "4-7", "0-3"]);
        assert!(r.coloring.unwrap().events.is_empty());
        // Tam: curves from alone runs, a split of all 8 colors in
        // contiguous ranges, the hungry app no smaller than the light one.
        let s = scenario(
            "[coloring]\npolicy = \"tam-static\"\ncurve = \"stall-rate\"\nsweep-step = 2\n",
            "",
        );
        assert_eq!(s.platform.memory.allocator, AllocatorKind::Tam);
        let r = crate::sim_run::run_scenario(&s, None).unwrap();
        let rep = r.coloring.unwrap();
        assert_eq!(rep.curves.len(), 3);
        assert!(rep.curves.iter().all(|c| c.len() == 6));
        let sizes: Vec<u32> = rep
            .initial
            .iter()
            .map(|c| c.parse::<IdSet>().unwrap().len() as u32)
            .collect();
        assert_eq!(sizes.iter().sum::<u32>(), 8);
        assert_eq!(
            sizes,
            size_partitions(&rep.curves, 8, 1).unwrap(),
            "{:?}",
            rep.curves
        );
    }
}
