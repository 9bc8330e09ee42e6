//! Running an experiment: its design makes the runs, every run is built
//! into a scenario and checked before anything runs, the runs go in
//! parallel (rayon; each is its own simulation, so the results do not
//! depend on the order or the number of threads), and the design
//! analyses them into a table, a chart and named metrics, which
//! [`output_files`] gives as `NAME.csv`, `NAME.png` and `NAME.md` (the CLI
//! writes them all or nothing, with its output rules).

use std::collections::BTreeMap;
use std::path::Path;

use cachepart_machine::EventKind;
use cachepart_policy::{self as policy, drive, Fixed, Flow};
use cachepart_sim::system::AppTotals;
use rayon::prelude::*;

use super::build::{scenario_of, Run, Stop};
use super::file::Experiment;
use super::plot::Chart;
use super::table::Table;
use super::window::Window;
use super::writeup;
use cachepart::run::sim::{run_scenario, SimReport};
use cachepart::spec::scenario::Scenario;
use cachepart::Error;

/// What one run gave.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// The run's label.
    pub label: String,
    /// Per-app totals (at the end, or when the watched app finished).
    pub totals: Vec<AppTotals>,
    /// Per-app frames handed out of the app's colors (MaxTry fallbacks).
    pub fallbacks: Vec<u64>,
    /// Simulated cycles of the run.
    pub cycles: u64,
    /// The full report, for runs made by [`run_scenario`].
    pub report: Option<SimReport>,
}

/// A design's reading of its runs.
#[derive(Clone, Debug, Default)]
pub struct Analysis {
    /// The result table.
    pub table: Table,
    /// The figure.
    pub chart: Chart,
    /// Named numbers the claims refer to.
    pub metrics: BTreeMap<String, f64>,
    /// Observations computed from the runs (markdown lines).
    pub observations: Vec<String>,
}

/// Everything an experiment produced.
#[derive(Clone, Debug)]
pub struct ExperimentOutput {
    /// The experiment.
    pub experiment: Experiment,
    /// Every run's result, in design order.
    pub results: Vec<RunResult>,
    /// The analysis.
    pub analysis: Analysis,
}

fn sim_err(label: &str, e: impl Into<cachepart::error::Source>) -> Error {
    Error::simulation(format!("run {label}"), e)
}

/// Runs one scenario on the controller loop, with its fixed colors and no
/// policy, until `stop` says so (checked after every interval, on the
/// apps that finished).
pub fn simulate(scenario: &Scenario, stop: Stop) -> Result<RunResult, Error> {
    let label = scenario.name.clone();
    let mut machine = scenario.machine().map_err(|e| sim_err(&label, e))?;
    let mut fixed = match scenario.fixed_colors() {
        None => Fixed::none(),
        Some(plan) => Fixed::new(plan),
    };
    let mut finished = vec![false; scenario.apps.len()];
    let mut window = match stop {
        Stop::Window { warmup, measure } => Some(Window::new(warmup, measure, scenario.apps.len())),
        _ => None,
    };
    let log = drive(
        &mut machine,
        &mut fixed,
        policy::Stop::WhenDone,
        &mut |iv| {
            for e in &iv.events {
                if e.kind == EventKind::Finished {
                    finished[e.app] = true;
                }
            }
            if let Some(w) = &mut window {
                w.observe(iv);
            }
            let done = match stop {
                Stop::AppDone(i) => finished.get(i).is_none_or(|&d| d),
                Stop::AnyDone => finished.iter().any(|&d| d),
                Stop::AllDone => false,
                Stop::Window { .. } => window.as_ref().is_some_and(Window::done),
            };
            if done {
                Flow::Stop
            } else {
                Flow::Continue
            }
        },
    )
    .map_err(|e| sim_err(&label, e))?;
    let mut totals = machine.totals();
    if let Some(w) = &window {
        w.apply(&mut totals).map_err(|e| sim_err(&label, e))?;
    }
    let fallbacks = totals.iter().map(|t| t.fallbacks).collect();
    Ok(RunResult {
        label,
        totals,
        fallbacks,
        cycles: log.intervals * scenario.file.interval_cycles,
        report: None,
    })
}

/// Runs one scenario through [`run_scenario`] (policies, the
/// report with its samples), keeping the totals.
pub fn simulate_report(scenario: &Scenario) -> Result<RunResult, Error> {
    let report = run_scenario(scenario, None)?;
    Ok(RunResult {
        label: scenario.name.clone(),
        totals: report.apps.iter().map(|a| a.totals.clone()).collect(),
        fallbacks: vec![0; report.apps.len()],
        cycles: report.simulated_cycles,
        report: Some(report),
    })
}

/// Builds and checks every run of `exp` (nothing runs yet).
pub fn scenarios(exp: &Experiment) -> Result<Vec<(Run, Scenario)>, Error> {
    let runs = exp.file.design.runs(&exp.file);
    let mut seen = std::collections::BTreeSet::new();
    runs.into_iter()
        .map(|r| {
            if !seen.insert(r.label.clone()) {
                return Err(Error::config_file(
                    &exp.path,
                    format_args!("the design makes two runs labelled {:?}", r.label),
                ));
            }
            let s = scenario_of(
                &exp.file.scenario,
                &exp.file.program,
                &r,
                exp.base_dir(),
                &exp.path,
            )?;
            Ok((r, s))
        })
        .collect()
}

/// Runs every run of the experiment at `path` in parallel and analyses
/// them. `progress` is called with each finished run's label.
pub fn run_experiment(
    path: &Path,
    progress: Option<&(dyn Fn(&str) + Sync)>,
) -> Result<ExperimentOutput, Error> {
    run_loaded_experiment(Experiment::load(path)?, progress)
}

/// [`run_experiment`] of an experiment already loaded (one read from
/// standard input can be read only once).
pub fn run_loaded_experiment(
    experiment: Experiment,
    progress: Option<&(dyn Fn(&str) + Sync)>,
) -> Result<ExperimentOutput, Error> {
    let planned = scenarios(&experiment)?;
    let full = experiment.file.design.wants_reports();
    let results: Vec<RunResult> = planned
        .par_iter()
        .map(|(run, s)| {
            let r = if full {
                simulate_report(s)
            } else {
                simulate(s, run.stop)
            };
            if let (Ok(_), Some(p)) = (&r, progress) {
                p(&run.label);
            }
            r
        })
        .collect::<Result<_, _>>()?;
    let runs: Vec<Run> = planned.into_iter().map(|(r, _)| r).collect();
    let analysis = experiment.file.design.analyse(&runs, &results);
    Ok(ExperimentOutput {
        experiment,
        results,
        analysis,
    })
}

/// One of an experiment's output files, rendered but not yet written.
#[derive(Clone, Debug)]
pub struct OutputFile {
    /// Its file name in the output directory (`NAME.csv`, `NAME.png`,
    /// `NAME.md`).
    pub name: String,
    content: Content,
}

#[derive(Clone, Debug)]
enum Content {
    Text(String),
    Png(Chart),
}

impl OutputFile {
    /// Writes it to `path`. A figure is drawn as PNG, which the drawing
    /// library picks from the extension: `path` must end in `.png`.
    pub fn write_to(&self, path: &Path) -> Result<(), Error> {
        match &self.content {
            Content::Text(t) => std::fs::write(path, t).map_err(|source| Error::Io {
                path: path.to_path_buf(),
                source,
            }),
            Content::Png(chart) => chart.write_png(path),
        }
    }
}

/// The file names an experiment named `name` writes in the output
/// directory: `NAME.csv`, `NAME.png` and `NAME.md`, in that order (known
/// before it runs, so that a caller can refuse two experiments, or an
/// output and an input, on one file first).
pub fn output_names(name: &str) -> [String; 3] {
    [
        format!("{name}.csv"),
        format!("{name}.png"),
        format!("{name}.md"),
    ]
}

/// The experiment's output files, named by [`output_names`], in that
/// order, ready to write.
pub fn output_files(out: &ExperimentOutput) -> Vec<OutputFile> {
    let [csv, png, md] = output_names(&out.experiment.name);
    // The figure carries the experiment's own title (the design's title is
    // generic: "Run time alone against the number of colors").
    let mut chart = out.analysis.chart.clone();
    chart.title = out.experiment.file.title.clone();
    let writeup = writeup::markdown(out, &png, &csv);
    vec![
        OutputFile {
            name: csv,
            content: Content::Text(out.analysis.table.to_csv()),
        },
        OutputFile {
            name: png,
            content: Content::Png(chart),
        },
        OutputFile {
            name: md,
            content: Content::Text(writeup),
        },
    ]
}
