//! The controllers of a checked `[coloring]` section
//! ([`ColorController`]: COLORIS's manager or Tam's static sizing, run on
//! the loop by [`crate::run::sim`]) and the report of what they did
//! ([`ColoringReport`], one [`RecolorEvent`] per change of colors).

use cachepart_policy::{ColorDecision, ColorisControl, ColorisSetup, Controller, TamStatic};
use cachepart_units::Kind as _;
use serde::Serialize;

use super::config::Coloring;
use super::policy::ColorPolicy;
use crate::error::Error;

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
/// [`crate::run::sim`].
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
        let bad = |e: cachepart_policy::PolicyError| Error::config("", "coloring", e);
        Ok(match cfg.policy {
            ColorPolicy::ColorisStatic | ColorPolicy::ColorisDynamic => {
                let apps = pinned
                    .iter()
                    .enumerate()
                    .map(|(i, &core)| (core, cfg.app_thresholds.get(i).copied().flatten()))
                    .collect();
                ColorController::Coloris(Box::new(
                    ColorisControl::new(ColorisSetup {
                        config: cfg.coloris_config(),
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
                        reason: d.reason.name().into(),
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
    use cachepart_policy::{ColorisConfig, DecisionReason};
    use cachepart_sim::memory::AllocatorKind;
    use cachepart_units::IdSet;

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

    fn scenario(coloring: &str, thresholds: &str) -> crate::spec::scenario::Scenario {
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

        crate::spec::scenario::Scenario::load(&p).unwrap()
    }

    #[test]
    fn dynamic_coloris_decisions_replay_through_the_monitor() {
        let s = scenario(
            "[coloring]\npolicy = \"coloris-dynamic\"\nlow = 0.1\nhigh = 0.5\nperiod-intervals = 2\n",
            "thresholds = { low = 0.2, high = 0.9 }",
        );
        let c = s.coloring.clone().unwrap();
        assert_eq!(s.platform.memory.allocator, AllocatorKind::Coloris);
        let r = crate::run::sim::run_scenario(&s, None).unwrap();
        let rep = r.coloring.as_ref().unwrap();
        assert_eq!(rep.initial, vec!["0-3", "4-7", "0-3"]);
        assert!(!rep.events.is_empty(), "no decision: {:?}", rep.decisions);
        eprintln!("{}", crate::output::sim::to_table(&r));
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
        let r = crate::run::sim::run_scenario(&s, None).unwrap();
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
        let r = crate::run::sim::run_scenario(&s, None).unwrap();
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
