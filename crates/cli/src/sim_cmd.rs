//! `cachepart sim run SCENARIO`: runs a scenario file on the trace-driven
//! simulator and prints per-app results and the mix metrics; samples go
//! to a CSV or Parquet file. `cachepart sim cachegrind` is in
//! `sim_cachegrind.rs`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use cachepart::output;
use cachepart::output::samples::SampleFormat;
use cachepart::run::sim::{self, SimReport};
use cachepart::spec::key_set::KeySet;
use cachepart::spec::scenario::{Overrides, Scenario};
use clap::{Args, Subcommand};

use crate::common_args::{Format, FormatArg, OutputArg, QuietArg};
use crate::output::{check_distinct, Output};

/// `cachepart sim ...`
#[derive(Subcommand)]
pub enum SimCommand {
    /// Run a scenario file (platform, apps, interval, policy).
    Run(RunArgs),
    /// Search the fairest duty cycles (and prefetchers) for a scenario's
    /// apps, as Zhang et al. do (execution throttling).
    Throttle(crate::sim_throttle::ThrottleArgs),
    /// cachegrind's cache simulation (I1, D1, LL) of a trace or of a
    /// program (`-- CMD ARGS`, captured in one pass), with cachegrind's
    /// options and summary.
    Cachegrind(crate::sim_cachegrind::CachegrindArgs),
}

/// Arguments of `cachepart sim run`.
#[derive(Args)]
pub struct RunArgs {
    /// The scenario file (TOML, or JSON with a .json name); `-` reads TOML
    /// from standard input, with relative paths taken from the current
    /// directory.
    pub scenario: PathBuf,
    /// Output format of the per-app results.
    #[command(flatten)]
    pub format: FormatArg,
    #[command(flatten)]
    pub output: OutputArg,
    /// Write every per-app, per-interval sample here (.csv or .parquet;
    /// `-` for CSV on stdout).
    #[arg(long)]
    pub samples: Option<PathBuf>,
    /// Override the scenario's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Override the scenario's policy (stock, ucp, kpart, lfoc, dunn, ...).
    #[arg(long)]
    pub policy: Option<String>,
    /// Skip the alone runs (no slowdowns, no mix metrics).
    #[arg(long)]
    pub no_alone: bool,
    /// Set a key of the scenario as if the file had it (repeatable): a
    /// dotted key and a TOML value, `--set platform=xeon-5160`,
    /// `--set interval-cycles=2000000`, `--set app.1.mlp=2`.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = KeySet::parse)]
    pub set: Vec<KeySet>,
    #[command(flatten)]
    pub quiet: QuietArg,
}

/// Runs a `sim` subcommand.
pub fn run(cmd: SimCommand) -> Result<()> {
    match cmd {
        SimCommand::Run(a) => run_scenario(a),
        SimCommand::Throttle(a) => crate::sim_throttle::run(a),
        SimCommand::Cachegrind(a) => crate::sim_cachegrind::run(a),
    }
}

fn run_scenario(a: RunArgs) -> Result<()> {
    // Check the output names before spending time on the run.
    let samples_format = a
        .samples
        .as_deref()
        .map(|p| {
            if p.as_os_str() == "-" {
                Ok(SampleFormat::Csv)
            } else {
                SampleFormat::from_path(p)
            }
        })
        .transpose()?;
    let output = a.output.resolve()?;
    let samples = a
        .samples
        .as_deref()
        .map(|p| Output::new("--samples", p))
        .transpose()?;
    let mut outputs = vec![&output];
    outputs.extend(samples.as_ref());
    check_distinct(&outputs)?;
    for o in &outputs {
        o.check_not_input([a.scenario.as_path()])?;
    }
    // an unknown --policy is the command line's error, not the scenario's
    if let Some(p) = &a.policy {
        p.parse::<cachepart::Algorithm>()
            .with_context(|| format!("--policy {p:?}"))?;
    }
    let scenario = Scenario::load_with(
        &a.scenario,
        &Overrides {
            set: a.set,
            seed: a.seed,
            policy: a.policy,
            no_alone: a.no_alone,
        },
    )?;
    // and every file the scenario reads (platform, generators, traces)
    for o in &outputs {
        o.check_not_input(scenario.inputs.iter().map(PathBuf::as_path))?;
    }
    let bar = a.quiet.bar(
        Some(1),
        "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} Minstr ({eta})",
    );
    if let Some(pb) = &bar {
        pb.set_prefix(scenario.name.clone());
    }
    let progress = |_: u64, _: u64, done: u64, total: Option<u64>| {
        if let Some(pb) = &bar {
            if let Some(t) = total {
                pb.set_length(t / 1_000_000);
            }
            pb.set_position(done / 1_000_000);
        }
    };
    let report = sim::run_scenario(&scenario, Some(&progress));
    if let Some(pb) = &bar {
        pb.finish_and_clear();
    }
    let report: SimReport = report?;
    if let (Some(out), Some(fmt)) = (&samples, samples_format) {
        out.write_bytes(&fmt.encode(&report.samples)?)?;
    }
    let text = match a.format.format {
        Format::Table => output::sim::to_table(&report),
        Format::Csv => output::sim::to_csv(&report),
        Format::Json => output::sim::to_json(&report),
    };
    output.write_bytes(text.as_bytes())
}
