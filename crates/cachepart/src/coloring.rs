//! Page-color policies on the simulated machine (scenario section
//! `[coloring]`): COLORIS's static sections and dynamic monitor (Ye et
//! al., PACT'14) and Tam et al.'s static sizing (WIOSCA'07), driven by the
//! controller loop of [`crate::sim_run`].
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
//! Each policy is a controller of `cachepart-policy` run on the loop of
//! [`crate::sim_run`] ([`ColorController`]):
//!
//! * **coloris-static**: the colors are cut into per-core sections of
//!   contiguous colors; each app, in scenario order, gets the whole section
//!   of its core (an app without `core` is placed on the least loaded
//!   core). See [`cachepart_policy::coloris_control`].
//! * **coloris-dynamic**: the same start; at the end of every
//!   `period-intervals` intervals the monitor judges the app running on
//!   each core (core by core, starting one core further each period) on
//!   its LLC references and misses over the period, and each change is a
//!   recoloring of the simulator (shrink: lazy recoloring; expand:
//!   `expand`). An app whose colors run out gets `unit` more by
//!   ALLOC_COLORS and retries; an app that finishes releases its colors.
//! * **tam-static**: every app runs alone with `k` colors for the color
//!   counts of the sweep (the machine's alone curves over colors); its
//!   curve (misses per kilo-instruction, or memory-stall cycles per billion
//!   cycles) is interpolated linearly between measured counts, and
//!   Tam's sizing splits the colors; apps get contiguous ranges in
//!   scenario order. The sweep costs `apps x colors / sweep-step` alone
//!   runs (in parallel). See [`cachepart_policy::tam_control`].
//!
//! Every decision that changed colors is reported as a [`RecolorEvent`].

use cachepart_policy::{
    ColorDecision, ColorisConfig, ColorisControl, ColorisSetup, Controller, DecisionReason,
    TamCurve, TamStatic, Thresholds,
};
use cachepart_sim::memory::{AllocatorKind, ExpandPolicy, RecolorConfig};
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

/// One change of an app's colors, as reported.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct RecolorEvent {
    /// The interval it was taken in (exhaustion, finish) or after
    /// (monitor), from 0.
    pub interval: u64,
    /// The app's index.
    pub app: usize,
    /// The app's name.
    pub name: String,
    /// `monitor` (Algorithm 1), `exhausted` (its colors ran out) or
    /// `finished` (it released its colors).
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
    pub decisions: Vec<ColorDecision>,
}

/// The controller of a [`Coloring`], run on the loop by
/// [`crate::sim_run`].
pub enum ColorController {
    /// coloris-static or coloris-dynamic.
    Coloris(Box<ColorisControl>),
    /// tam-static.
    Tam(TamStatic),
}

impl ColorController {
    /// The controller for `cfg` over `apps` apps; `pinned[i]` is app
    /// `i`'s core if the scenario gives one (else COLORIS places it).
    pub fn new(cfg: &Coloring, pinned: &[Option<u32>]) -> Result<ColorController, Error> {
        let bad = |e: cachepart_policy::PolicyError| Error::Input(format!("coloring: {e}"));
        Ok(match cfg.policy {
            ColorPolicy::ColorisStatic | ColorPolicy::ColorisDynamic => {
                let apps = pinned
                    .iter()
                    .enumerate()
                    .map(|(i, &core)| (core, cfg.app_thresholds.get(i).copied().flatten()))
                    .collect();
                ColorController::Coloris(Box::new(
                    ColorisControl::new(ColorisSetup {
                        config: ColorisConfig {
                            colors: cfg.colors,
                            cores: cfg.cores,
                            unit: cfg.unit,
                            thresholds: cfg.thresholds,
                            min_references: cfg.min_references,
                        },
                        apps,
                        dynamic: cfg.policy == ColorPolicy::ColorisDynamic,
                        period_intervals: cfg.period_intervals,
                    })
                    .map_err(bad)?,
                ))
            }
            ColorPolicy::TamStatic => ColorController::Tam(
                TamStatic::new(cfg.curve, cfg.colors, pinned.len(), cfg.sweep_step).map_err(bad)?,
            ),
        })
    }

    /// The controller, for the loop.
    pub fn as_controller(&mut self) -> &mut dyn Controller {
        match self {
            ColorController::Coloris(c) => c.as_mut(),
            ColorController::Tam(c) => c,
        }
    }

    /// The report of what it did; `names` are the apps' names.
    pub fn report(&self, names: &[String]) -> ColoringReport {
        let name = |a: usize| names.get(a).cloned().unwrap_or_default();
        match self {
            ColorController::Coloris(c) => ColoringReport {
                policy: c.name().into(),
                initial: c.initial().iter().map(ToString::to_string).collect(),
                curves: Vec::new(),
                events: c
                    .decisions()
                    .iter()
                    .filter(|d| d.changed())
                    .map(|d| RecolorEvent {
                        interval: d.interval,
                        app: d.app,
                        name: name(d.app),
                        reason: match d.reason {
                            DecisionReason::Monitor => "monitor",
                            DecisionReason::Exhausted => "exhausted",
                            DecisionReason::Finished => "finished",
                        }
                        .into(),
                        references: d.references,
                        misses: d.misses,
                        added: d.added.to_string(),
                        removed: d.removed.to_string(),
                        colors: d.colors.to_string(),
                        pages_moved: d.pages_moved,
                        pages_marked: d.pages_marked,
                    })
                    .collect(),
                decisions: c.decisions().to_vec(),
            },
            ColorController::Tam(c) => ColoringReport {
                policy: c.name().into(),
                initial: c.initial().iter().map(ToString::to_string).collect(),
                curves: c.curves().to_vec(),
                events: Vec::new(),
                decisions: Vec::new(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_units::IdSet;

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
        let mut m = cachepart_policy::ColorManager::new(ColorisConfig {
            colors: 8,
            cores: 2,
            unit: 1,
            thresholds: c.thresholds,
            min_references: 0,
        })
        .unwrap();
        for (i, a) in r.apps.iter().enumerate() {
            m.add_app(Some(a.core), c.app_thresholds[i]).unwrap();
        }
        let mut events = rep.events.iter();
        let mut monitored = 0;
        for d in &rep.decisions {
            let (added, removed) = match d.reason {
                DecisionReason::Monitor => {
                    monitored += 1;
                    // The inputs are the period's samples, and the app ran
                    // in its last interval (it was running on its core).
                    let (mut refs, mut misses, mut ran) = (0.0, 0.0, false);
                    for row in &r.samples {
                        if row.app == d.app
                            && row.interval + c.period_intervals > d.interval
                            && row.interval <= d.interval
                        {
                            refs += row.sample.llc_references;
                            misses += row.sample.llc_misses;
                            ran |= row.interval == d.interval && row.sample.ran;
                        }
                    }
                    assert_eq!((d.references, d.misses), (refs as u64, misses as u64));
                    assert!(ran, "{d:?} judged an app that did not run");
                    let ch = m.monitor(d.app, d.references, d.misses).unwrap();
                    (ch.added, ch.removed)
                }
                DecisionReason::Exhausted => (m.alloc_colors(d.app, 1).unwrap(), IdSet::new()),
                DecisionReason::Finished => (IdSet::new(), m.remove_app(d.app).unwrap()),
            };
            assert_eq!((&added, &removed), (&d.added, &d.removed), "{d:?}");
            if added.is_empty() && removed.is_empty() {
                continue;
            }
            let e = events.next().expect("an event per change");
            assert_eq!(
                (e.app, e.added.clone(), e.removed.clone(), e.colors.clone()),
                (
                    d.app,
                    added.to_string(),
                    removed.to_string(),
                    if m.is_removed(d.app) {
                        String::new()
                    } else {
                        m.colors_of(d.app).to_string()
                    }
                )
            );
        }
        assert!(events.next().is_none());
        assert!(monitored > 0);
        // Every app finished and released its colors.
        assert!((0..r.apps.len()).all(|i| m.is_removed(i)));
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
            cachepart_policy::size_partitions(&rep.curves, 8, 1).unwrap(),
            "{:?}",
            rep.curves
        );
    }
}
