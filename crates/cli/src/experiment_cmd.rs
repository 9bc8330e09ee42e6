//! `cachepart experiment run FILE... [--out DIR]`: runs experiment files
//! (sweeps of simulator scenarios) and writes each one's CSV table, PNG
//! figure and markdown write-up.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Result;
use cachepart::experiments::{run_experiment, runner, write_outputs, ExperimentFile};
use clap::{Args, Subcommand};

/// `cachepart experiment ...`
#[derive(Subcommand)]
pub enum ExperimentCommand {
    /// Run experiment files and write their table, figure and write-up.
    Run(RunArgs),
    /// Check experiment files and list their runs, without running them.
    Plan(PlanArgs),
}

/// Arguments of `cachepart experiment run`.
#[derive(Args)]
pub struct RunArgs {
    /// The experiment files (TOML).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Directory of the outputs (NAME.csv, NAME.png, NAME.md).
    #[arg(long, default_value = "docs/experiments")]
    pub out: PathBuf,
    /// No progress lines on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Arguments of `cachepart experiment plan`.
#[derive(Args)]
pub struct PlanArgs {
    /// The experiment files (TOML).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// Runs an `experiment` subcommand.
pub fn run(cmd: ExperimentCommand) -> Result<()> {
    match cmd {
        ExperimentCommand::Run(a) => {
            for f in &a.files {
                let start = std::time::Instant::now();
                let n =
                    runner::scenarios(&cachepart::experiments::file::Experiment::load(f)?)?.len();
                let done = AtomicUsize::new(0);
                let progress = |label: &str| {
                    let k = done.fetch_add(1, Ordering::Relaxed) + 1;
                    eprintln!("[{k}/{n}] {label}");
                };
                let quiet_progress = |_: &str| {};
                let p: &(dyn Fn(&str) + Sync) = if a.quiet { &quiet_progress } else { &progress };
                let out = run_experiment(f, Some(p))?;
                let written = write_outputs(&out, &a.out)?;
                for w in written {
                    println!("{}", w.display());
                }
                if !a.quiet {
                    eprintln!(
                        "{}: {} runs in {:.1} s",
                        f.display(),
                        n,
                        start.elapsed().as_secs_f64()
                    );
                }
            }
            Ok(())
        }
        ExperimentCommand::Plan(a) => {
            for f in &a.files {
                let e = cachepart::experiments::file::Experiment::load(f)?;
                let runs = runner::scenarios(&e)?;
                let file: &ExperimentFile = &e.file;
                println!("{} ({}): {} runs", e.name, file.paper, runs.len());
                for (r, s) in runs {
                    let apps: Vec<String> = s
                        .apps
                        .iter()
                        .zip(&s.colors)
                        .map(|(a, c)| match c {
                            Some(c) => format!("{}@core{} colors {}", a.name, a.core, c),
                            None => format!("{}@core{}", a.name, a.core),
                        })
                        .collect();
                    println!("  {}: {}", r.label, apps.join(", "));
                }
            }
            Ok(())
        }
    }
}
