//! `cachepart experiment run FILE... [--out DIR]`: runs experiment files
//! (sweeps of simulator scenarios) and writes each one's CSV table, PNG
//! figure and markdown write-up. Before anything runs it reads every file
//! and refuses two experiments that would write the same outputs, an
//! output that is one of the experiment files, and an `--out` that is not
//! a directory.

use std::path::{Path, PathBuf};

use anyhow::Result;
use cachepart_repro::file::Experiment;
use cachepart_repro::ExperimentOutput;
use cachepart_repro::{output_files, output_names, runner, ExperimentFile};
use clap::{Args, Subcommand};

use crate::common_args::QuietArg;
use crate::output::{check_output_dir, write_staged, Output, OutputDir};

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
    /// The experiment files (TOML; `-` reads one from standard input).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Directory of the outputs (NAME.csv, NAME.png, NAME.md).
    #[arg(long, default_value = "docs/experiments")]
    pub out: PathBuf,
    #[command(flatten)]
    pub quiet: QuietArg,
}

/// Arguments of `cachepart experiment plan`.
#[derive(Args)]
pub struct PlanArgs {
    /// The experiment files (TOML; `-` reads one from standard input).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// Runs an `experiment` subcommand.
pub fn run(cmd: ExperimentCommand) -> Result<()> {
    match cmd {
        ExperimentCommand::Run(a) => {
            stdin_at_most_once(&a.files)?;
            check_output_dir("--out", &a.out)?;
            // Every file is read and its outputs checked before any runs.
            let experiments = a
                .files
                .iter()
                .map(|f| cachepart_repro::file::Experiment::load(f))
                .collect::<Result<Vec<_>, _>>()?;
            check_outputs(&a.files, &experiments, &a.out)?;
            for (f, experiment) in a.files.iter().zip(experiments) {
                let start = std::time::Instant::now();
                let n = runner::scenarios(&experiment)?.len();
                let bar = a.quiet.bar(
                    Some(n as u64),
                    "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} runs ({eta}) {msg}",
                );
                if let Some(pb) = &bar {
                    pb.set_prefix(f.display().to_string());
                }
                let progress = |label: &str| {
                    if let Some(pb) = &bar {
                        pb.set_message(label.to_string());
                        pb.inc(1);
                    }
                };
                let out = runner::run_loaded_experiment(experiment, Some(&progress));
                if let Some(pb) = &bar {
                    pb.finish_and_clear();
                }
                for w in write_all(&out?, &a.out)? {
                    println!("{}", w.display());
                }
                if !a.quiet.quiet {
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
            stdin_at_most_once(&a.files)?;
            for f in &a.files {
                let e = cachepart_repro::file::Experiment::load(f)?;
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

/// Refuses, before anything runs, two experiments whose outputs in `dir`
/// would be the same files (one name: the `name` key, else the file's
/// stem), and an output that is one of the experiment files (`files`).
fn check_outputs(files: &[PathBuf], experiments: &[Experiment], dir: &Path) -> Result<()> {
    for (i, (f, e)) in files.iter().zip(experiments).enumerate() {
        if let Some((g, _)) = files[..i]
            .iter()
            .zip(experiments)
            .find(|(_, other)| other.name == e.name)
        {
            anyhow::bail!(
                "{} and {}: both are named {:?}, so both would write {}; give one a `name` key of its own or run them with different --out",
                g.display(),
                f.display(),
                e.name,
                output_names(&e.name)
                    .map(|n| dir.join(n).display().to_string())
                    .join(", ")
            );
        }
        // A directory not made yet holds no input.
        if dir.is_dir() {
            for n in output_names(&e.name) {
                Output::new("--out", &dir.join(n))?
                    .check_not_input(files.iter().map(PathBuf::as_path))?;
            }
        }
    }
    Ok(())
}

/// Writes the experiment's files under `dir` all or nothing: each to a
/// temporary beside its destination (registered, so that SIGINT and SIGTERM
/// remove it), renamed into place once all three are written. A directory
/// it makes is removed again if nothing could be written into it.
fn write_all(out: &ExperimentOutput, dir: &Path) -> Result<Vec<PathBuf>> {
    let made = OutputDir::create("--out", dir)?;
    let files = output_files(out);
    // Every destination is checked (a directory is refused, a symlink
    // followed) before anything is written.
    let mut dests = Vec::new();
    for f in &files {
        let given = dir.join(&f.name);
        let o = Output::new("--out", &given)?;
        let Some(dest) = o.file_path() else {
            anyhow::bail!(
                "--out {}: {} is a device or FIFO; an experiment writes regular files",
                dir.display(),
                given.display()
            );
        };
        dests.push(dest.to_path_buf());
    }
    write_staged(
        files.iter().zip(dests.iter().map(PathBuf::as_path)),
        |f, tmp| Ok(f.write_to(tmp.path())?),
        |_, _| format!("--out {}", dir.display()),
        |_, dest| format!("writing {}", dest.display()),
    )?;
    made.keep();
    Ok(dests)
}

/// Refuses `-` given twice: standard input can be read once.
fn stdin_at_most_once(files: &[PathBuf]) -> Result<()> {
    if files
        .iter()
        .filter(|f| cachepart::units::input::is_stdin(f))
        .count()
        > 1
    {
        anyhow::bail!("- given twice: standard input can be read once");
    }
    Ok(())
}
