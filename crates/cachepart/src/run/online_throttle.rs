//! `throttle-online` as a scenario's policy or a Linux run's
//! (`policy = "throttle-online"`, `cachepart run --policy throttle-online
//! --allow-msr`): its `[throttle-online]` section, and its setup from what
//! the machine can throttle (the duty-cycle steps, the prefetchers).
//!
//! On the simulator the steps and prefetchers are the platform's
//! (`[clock-modulation]`, `[prefetchers]`); a platform without
//! `[clock-modulation]` is refused. On Linux the duty cycle is in eighths,
//! which every Intel part with clock modulation has, and the hybrid mode
//! is refused: the run does not know the prefetcher word the cores start
//! with.

use cachepart_units::Kind as _;
use serde::{Deserialize, Serialize};

use cachepart_machine::Duty;
use cachepart_policy::{PolicyError, PrefetchKnobs, ThrottleOnline, ThrottleOnlineParams};

use crate::error::Error;
use crate::run::online::OnlineSetup;
use crate::spec::scenario::Scenario;

/// The `[throttle-online]` section.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ThrottleOnlineFile {
    /// The unfairness factor at or below which nothing changes (default
    /// 0.05); above 0.
    #[serde(default)]
    pub target: Option<f64>,
    /// Intervals after a change before the next decision (default 1).
    #[serde(default)]
    pub decision_intervals: Option<u32>,
    /// Most intervals since the last change a decision looks back on
    /// (default 10).
    #[serde(default)]
    pub max_window_intervals: Option<u32>,
    /// Decisions for which a setting's measured unfairness factor is
    /// remembered, so that the rule does not go back to it unless it was
    /// fairer (default 20).
    #[serde(default)]
    pub hysteresis_windows: Option<u32>,
    /// The lowest duty cycle given (default the platform's lowest, 1/8 or
    /// 1/16), in the platform's steps.
    #[serde(default)]
    pub min_duty: Option<Duty>,
    /// The hybrid mode: once the duty cycles settle, turn the most
    /// favoured app's prefetchers off one at a time, keeping what lowers
    /// the unfairness factor (default false).
    #[serde(default)]
    pub prefetchers: Option<bool>,
}

/// What a machine lets `throttle-online` act on: its duty-cycle steps and
/// its prefetchers, or why it has none.
#[derive(Clone, Debug, PartialEq)]
pub struct ThrottleKnobs {
    /// The duty-cycle steps (8 or 16), or why the machine cannot modulate.
    pub steps: Result<u32, String>,
    /// The prefetchers and the run's word, or why the hybrid mode cannot
    /// run.
    pub prefetchers: Result<PrefetchKnobs, String>,
}

impl ThrottleKnobs {
    /// A Linux machine's: eighths; no hybrid mode.
    pub fn linux() -> ThrottleKnobs {
        ThrottleKnobs {
            steps: Ok(8),
            prefetchers: Err("the hybrid mode needs the prefetcher word the cores start with, which a Linux run does not know; use it on the simulator".into()),
        }
    }

    /// A scenario's: its platform's `[clock-modulation]` steps, its
    /// platform's prefetchers with the run's word.
    pub fn of_scenario(scenario: &Scenario) -> ThrottleKnobs {
        let p = &scenario.platform;
        ThrottleKnobs {
            steps: p.clock_modulation.map(|m| m.steps).ok_or_else(|| {
                format!(
                    "platform {} has no duty-cycle modulation (no [clock-modulation] section)",
                    p.name
                )
            }),
            prefetchers: p
                .prefetchers
                .run_word
                .map(|word| PrefetchKnobs {
                    word,
                    bits: p
                        .prefetchers
                        .kinds()
                        .iter()
                        .map(|k| (k.name().to_string(), k.bit()))
                        .collect(),
                })
                .ok_or_else(|| {
                    "the hybrid mode turns prefetchers off, but the scenario runs without them (set prefetchers = \"platform\")".into()
                }),
        }
    }
}

/// `throttle-online` from its section (`None`: the defaults) on a machine
/// with `knobs`;
/// `alone_ipc` is each app's IPC alone when the caller measured it
/// (`None`: the machine's alone curves at the whole LLC).
pub fn throttle_online(
    section: Option<&ThrottleOnlineFile>,
    setup: &OnlineSetup,
    knobs: ThrottleKnobs,
    alone_ipc: Option<Vec<f64>>,
) -> Result<ThrottleOnline, Error> {
    let f = section.cloned().unwrap_or_default();
    let field = |name: &str| format!("throttle-online.{name}");
    let steps = knobs
        .steps
        .map_err(|why| Error::config(&setup.whence, "policy", format!("throttle-online: {why}")))?;
    let prefetchers = match f.prefetchers {
        Some(true) => Some(
            knobs
                .prefetchers
                .map_err(|why| Error::config(&setup.whence, field("prefetchers"), why))?,
        ),
        _ => None,
    };
    let d = ThrottleOnlineParams::default();
    let lowest = Duty::new(1, steps).map_err(|e| Error::config(&setup.whence, "policy", e))?;
    let params = ThrottleOnlineParams {
        target: f.target.unwrap_or(d.target),
        decision_intervals: f.decision_intervals.unwrap_or(d.decision_intervals),
        max_window_intervals: f.max_window_intervals.unwrap_or(d.max_window_intervals),
        hysteresis_windows: f.hysteresis_windows.unwrap_or(d.hysteresis_windows),
        steps,
        min_duty: f.min_duty.unwrap_or(lowest),
        prefetchers,
        alone_ipc,
    };
    ThrottleOnline::new(params, setup.apps).map_err(|e| match e {
        PolicyError::BadParameter {
            name,
            value,
            expected,
            ..
        } => Error::config(&setup.whence, field(&name), format!("{value}: {expected}")),
        e => Error::config(&setup.whence, "throttle-online", e),
    })
}

/// `throttle-online` for `scenario`, normalising by `alone_ipc` (each app
/// alone under the run method, as the report does; `None`: the
/// machine's alone curves at the whole LLC, one pass of each trace).
/// Refused when an app sets its own duty cycle or prefetcher word (the
/// controller sets them, and normalises by each app alone at full speed
/// with the run's word).
pub fn throttle_online_for(
    scenario: &Scenario,
    alone_ipc: Option<Vec<f64>>,
) -> Result<ThrottleOnline, Error> {
    let setup = OnlineSetup::of_scenario(scenario);
    for (i, a) in scenario.file.apps.iter().enumerate() {
        let own = [
            ("duty", a.duty.is_some()),
            ("prefetchers", a.prefetchers.is_some()),
        ];
        if let Some((key, _)) = own.iter().find(|(_, set)| *set) {
            return Err(Error::config(
                &setup.whence,
                format!("app[{i}] ({}).{key}", a.name),
                "throttle-online sets each app's duty cycle and prefetchers itself; remove the app's own",
            ));
        }
    }
    throttle_online(
        scenario.file.throttle_online.as_ref(),
        &setup,
        ThrottleKnobs::of_scenario(scenario),
        alone_ipc,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> OnlineSetup {
        OnlineSetup {
            apps: 2,
            freq_ghz: 2.0,
            interval_cycles: 1_000_000,
            way_bytes: None,
            whence: "mix.toml".into(),
        }
    }

    fn on_linux(text: &str) -> Result<ThrottleOnline, String> {
        let f: ThrottleOnlineFile = toml::from_str(text).map_err(|e| e.to_string())?;
        throttle_online(Some(&f), &setup(), ThrottleKnobs::linux(), None).map_err(|e| e.to_string())
    }

    #[test]
    fn a_linux_section_is_checked_naming_the_field() {
        assert!(on_linux("target = 0.1\nmin-duty = \"2/8\"").is_ok());
        let e = on_linux("tagret = 0.1").err().unwrap();
        assert!(
            e.contains("unknown field `tagret`") && e.contains("target"),
            "{e}"
        );
        let e = on_linux("prefetchers = true").err().unwrap();
        assert!(
            e.starts_with("mix.toml: throttle-online.prefetchers: the hybrid mode needs"),
            "{e}"
        );
        let e = on_linux("min-duty = \"5/16\"").err().unwrap();
        assert!(
            e.starts_with(
                "mix.toml: throttle-online.min-duty: 5/16: a duty cycle the platform has"
            ),
            "{e}"
        );
        let e = on_linux("target = -0.5").err().unwrap();
        assert!(
            e.starts_with("mix.toml: throttle-online.target: -0.5"),
            "{e}"
        );
        let e = on_linux("max-window-intervals = 2\ndecision-intervals = 3")
            .err()
            .unwrap();
        assert!(
            e.contains("throttle-online.max-window-intervals: 2: at least decision-intervals (3)"),
            "{e}"
        );
    }

    #[test]
    fn a_machine_that_cannot_modulate_is_refused() {
        let knobs = ThrottleKnobs {
            steps: Err("platform p has no duty-cycle modulation".into()),
            prefetchers: Err("none".into()),
        };
        let e = throttle_online(None, &setup(), knobs, None)
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            e,
            "mix.toml: policy: throttle-online: platform p has no duty-cycle modulation"
        );
    }
}
