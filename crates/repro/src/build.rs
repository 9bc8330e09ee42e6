//! One run of an experiment as a scenario: the base `[scenario]` table,
//! the run's scenario overrides, and its apps (each a program's table plus
//! the run's per-app overrides and a name), merged key by key and checked
//! by [`Scenario::from_file`] like a scenario file.

use std::path::Path;

use serde::Deserialize;

use cachepart::spec::scenario::{Scenario, ScenarioFile};
use cachepart::Error;

/// One app of a run: a program, its name in the run and overrides
/// (`colors`, `core`, `instructions`, ...).
#[derive(Clone, Debug, PartialEq)]
pub struct RunApp {
    /// The program (a key of `[program]`).
    pub program: String,
    /// Its name in the run (default: the program's).
    pub name: String,
    /// `[[app]]` keys set by the design.
    pub overrides: toml::Table,
}

impl RunApp {
    /// `program` under its own name, no overrides.
    pub fn of(program: &str) -> RunApp {
        RunApp {
            program: program.into(),
            name: program.into(),
            overrides: toml::Table::new(),
        }
    }

    /// Sets an `[[app]]` key.
    pub fn set(mut self, key: &str, value: impl Into<toml::Value>) -> RunApp {
        self.overrides.insert(key.into(), value.into());
        self
    }
}

/// One run of an experiment.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// Its label in the table (unique within the experiment).
    pub label: String,
    /// Scenario keys set by the design (over `[scenario]`).
    pub scenario: toml::Table,
    /// Its apps, in order.
    pub apps: Vec<RunApp>,
    /// When the run ends.
    pub stop: Stop,
}

/// When a run ends (checked at interval ends).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stop {
    /// When every app has finished.
    #[default]
    AllDone,
    /// When this app has finished (the others run until then).
    AppDone(usize),
    /// When any app has finished (all are measured while running together).
    AnyDone,
    /// When every app's measurement window has closed
    /// ([`Window`](super::window::Window)): measured after every app has
    /// retired `warmup` instructions, each for `measure` instructions.
    Window {
        /// Instructions every app retires before measurement starts.
        warmup: u64,
        /// Instructions each app is measured for.
        measure: u64,
    },
}

impl Run {
    /// A run of `apps` with no scenario overrides, to the end.
    pub fn new(label: impl Into<String>, apps: Vec<RunApp>) -> Run {
        Run {
            label: label.into(),
            scenario: toml::Table::new(),
            apps,
            stop: Stop::AllDone,
        }
    }
}

/// Merges `over` into `base`: tables key by key, anything else replaced.
pub fn merge(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The scenario of `run`: `[scenario]`, then the run's overrides, then
/// its apps; relative paths are taken from `dir`. Errors name the
/// experiment file, the run and the field.
pub fn scenario_of(
    base: &toml::Table,
    programs: &std::collections::BTreeMap<String, toml::Table>,
    run: &Run,
    dir: Option<&Path>,
    whence: &Path,
) -> Result<Scenario, Error> {
    let mut t = base.clone();
    merge(&mut t, &run.scenario);
    let mut apps = Vec::with_capacity(run.apps.len());
    for a in &run.apps {
        let mut app = programs.get(&a.program).cloned().ok_or_else(|| {
            Error::config(
                whence.display(),
                format!("run {}", run.label),
                format!("no program {:?}", a.program),
            )
        })?;
        merge(&mut app, &a.overrides);
        app.insert("name".into(), toml::Value::String(a.name.clone()));
        apps.push(toml::Value::Table(app));
    }
    t.insert("app".into(), toml::Value::Array(apps));
    let file = ScenarioFile::deserialize(toml::Value::Table(t)).map_err(|e| {
        Error::config(
            whence.display(),
            format!("run {}: scenario", run.label),
            e.to_string().trim(),
        )
    })?;
    let whence_run = std::path::PathBuf::from(format!("{} (run {})", whence.display(), run.label));
    Scenario::from_file(file, run.label.clone(), dir, Some(&whence_run))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_is_deep_and_overrides_win() {
        let mut a: toml::Table = toml::from_str("x = 1\n[t]\na = 1\nb = 2\n").unwrap();
        let b: toml::Table = toml::from_str("y = 2\n[t]\nb = 3\n").unwrap();
        merge(&mut a, &b);
        assert_eq!(a["x"].as_integer(), Some(1));
        assert_eq!(a["y"].as_integer(), Some(2));
        assert_eq!(a["t"]["a"].as_integer(), Some(1));
        assert_eq!(a["t"]["b"].as_integer(), Some(3));
    }

    #[test]
    fn a_run_becomes_a_checked_scenario() {
        let base: toml::Table =
            toml::from_str("platform = \"power5\"\nallocator = \"tam\"\ninstructions = 1000\n")
                .unwrap();
        let mut programs = std::collections::BTreeMap::new();
        programs.insert(
            "p".to_string(),
            toml::from_str::<toml::Table>(
                "synth = { seed = 1, accesses = 100, pattern = { class = \"light\" } }\n",
            )
            .unwrap(),
        );
        let run = Run::new("r", vec![RunApp::of("p").set("colors", "0-3")]);
        let s = scenario_of(&base, &programs, &run, None, Path::new("e.toml")).unwrap();
        assert_eq!(s.apps[0].name, "p");
        assert_eq!(s.colors[0].as_ref().map(|c| c.len()), Some(4));
        let bad = Run::new("bad", vec![RunApp::of("p").set("colors", "0-16")]);
        let e = scenario_of(&base, &programs, &bad, None, Path::new("e.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("e.toml") && e.contains("run bad") && e.contains("colors"),
            "{e}"
        );
    }
}
