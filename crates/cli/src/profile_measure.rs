//! `cachepart profile measure`: glue over `cachepart::linux::measure`. It
//! reads the apps (`--app NAME=COMMAND`, or a mix file), checks the
//! machine and that the output can be written before anything starts,
//! runs the CAT sweep with a progress bar (runs done), and writes the
//! PBBCache metrics CSV atomically: on any failure, no file. SIGINT and
//! SIGTERM raise one flag that every run's machine polls: the program
//! running is stopped, its group removed, and the command fails.

use crate::common_args::{HostArgs, OutputArg, QuietArg};
use crate::output::TempFile;
use anyhow::{bail, Context, Result};
use cachepart::linux::counters::CounterChoice;
use cachepart::linux::measure::{apps_of_mix, measure, parse_app, MeasureOptions};
use cachepart::linux::mix::parse_interval;
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Arguments of `profile measure`.
#[derive(Args)]
pub struct MeasureArgs {
    /// A mix file whose apps to measure (each `profile`, else `name`,
    /// names its rows); or give them with --app.
    #[arg(conflicts_with = "app", required_unless_present = "app")]
    mix: Option<PathBuf>,
    /// A program to measure: NAME=COMMAND (the command runs through
    /// `sh -c`; NAME names its rows). Repeat for several.
    #[arg(long, value_name = "NAME=COMMAND", value_parser = parse_app)]
    app: Vec<cachepart::linux::mix::MixApp>,
    /// Measure each run's first N instructions (whole intervals) instead
    /// of its whole run.
    #[arg(long, value_name = "N")]
    instructions: Option<f64>,
    /// Measure each run's first S seconds (whole intervals) instead of its
    /// whole run (or give --instructions; not both).
    #[arg(long, value_name = "S", conflicts_with = "instructions")]
    seconds: Option<f64>,
    /// Runs per program and way count; each column is their median.
    #[arg(long, default_value_t = 1, value_name = "R")]
    repeat: u32,
    /// How often the counters are read (`100ms`, `1s`).
    #[arg(long, default_value = "100ms", value_parser = parse_interval)]
    interval: std::time::Duration,
    #[command(flatten)]
    host: HostArgs,
    /// Scripted counters in place of perf (machines without a PMU, tests).
    #[arg(long)]
    fake_counters: bool,
    /// Counters from this profile table (PBBCache metrics CSV) in place of
    /// perf: each app at its program's row for the ways it has.
    #[arg(long, value_name = "TABLE")]
    fake_counters_from: Option<PathBuf>,
    #[command(flatten)]
    output: OutputArg,
    #[command(flatten)]
    quiet: QuietArg,
}

/// Runs `profile measure`.
pub fn run(a: MeasureArgs) -> Result<()> {
    let output = a.output.resolve()?;
    let inputs: Vec<&Path> = a
        .mix
        .iter()
        .chain(a.fake_counters_from.iter())
        .map(PathBuf::as_path)
        .collect();
    output.check_not_input(inputs)?;
    // Nothing runs unless the result can be written.
    if let Some(p) = output.file_path() {
        drop(TempFile::beside(p)?);
    }
    let apps = match &a.mix {
        Some(m) => apps_of_mix(m)?,
        None => a.app.clone(),
    };
    if apps.is_empty() {
        bail!("no program to measure: give --app NAME=COMMAND or a mix file");
    }
    let interrupt = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&interrupt))
            .context("registering the SIGINT/SIGTERM handler")?;
    }
    let opts = MeasureOptions {
        roots: a.host.roots(),
        plain_resctrl: a.host.resctrl_plain,
        counters: CounterChoice::from_flags(a.fake_counters, a.fake_counters_from.as_deref()),
        interval: a.interval,
        instructions: a.instructions,
        seconds: a.seconds,
        repeat: a.repeat,
        interrupt: Some(interrupt),
    };
    let rows = a.quiet.with_runs_bar("alone runs", |progress| {
        measure(&apps, &opts, Some(progress))
    });
    let rows = rows?;
    if opts.counters.is_fake() {
        eprintln!("note: fake counters: the counts are scripted, not measured");
    }
    output.write_bytes(cachepart::run::from_trace::to_csv(&rows).as_bytes())
}
