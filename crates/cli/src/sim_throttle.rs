//! `cachepart sim throttle SCENARIO`: Zhang et al.'s best-fairness search
//! over duty cycles (and, with `--prefetchers`, prefetcher settings) on
//! the simulator, with the paper's comparisons on request (`--quantum`:
//! scheduling-quantum adjustment with an idle process; `--coloring`: the
//! ideal static page-coloring partition); prints the default, the
//! fairest setting of each method, and every candidate.

use std::path::PathBuf;

use anyhow::Result;
use cachepart::output;
use cachepart::run::throttle::search::{search_with, SearchOptions};
use cachepart::spec::scenario::{Overrides, Scenario};
use clap::Args;

use crate::common_args::{Format, FormatArg, OutputArg, QuietArg};

/// Arguments of `cachepart sim throttle`.
#[derive(Args)]
pub struct ThrottleArgs {
    /// The scenario file: a platform with [clock-modulation] and at least
    /// two apps with no duty or prefetchers of their own; `-` reads TOML
    /// from standard input.
    pub scenario: PathBuf,
    /// Also tune per-app prefetchers from the default and the best duty
    /// settings (Zhang et al.'s hybrid method; the scenario needs
    /// prefetchers on).
    #[arg(long)]
    pub prefetchers: bool,
    /// Duty settings, besides the default, whose prefetchers are tuned.
    #[arg(long, default_value_t = 3)]
    pub keep: usize,
    /// Refuse a search of more runs than this.
    #[arg(long, default_value_t = 512)]
    pub max_runs: usize,
    /// Also try scheduling-quantum adjustment: one app at a time gets an
    /// idle process of 5%, 10%, ..., 100% of its run length.
    #[arg(long)]
    pub quantum: bool,
    /// The app's run length per turn under --quantum, cycles (the paper's
    /// 100 ms turn, scaled to a simulated run).
    #[arg(long, default_value_t = cachepart::run::throttle::quantum::DEFAULT_RUN_CYCLES)]
    pub quantum_run_cycles: u64,
    /// Also try every static split of the platform's page colors (the
    /// ideal page-coloring partition; needs allocator = "tam").
    #[arg(long)]
    pub coloring: bool,
    #[command(flatten)]
    pub format: FormatArg,
    #[command(flatten)]
    pub output: OutputArg,
    /// Override the scenario's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub quiet: QuietArg,
}

/// Runs `cachepart sim throttle`.
pub fn run(a: ThrottleArgs) -> Result<()> {
    let output = a.output.resolve()?;
    output.check_not_input([a.scenario.as_path()])?;
    let scenario = Scenario::load_with(
        &a.scenario,
        &Overrides {
            seed: a.seed,
            ..Overrides::default()
        },
    )?;
    output.check_not_input(scenario.inputs.iter().map(std::path::PathBuf::as_path))?;
    let opts = SearchOptions {
        prefetchers: a.prefetchers,
        keep: a.keep,
        max_runs: a.max_runs,
        quantum: a.quantum,
        quantum_run_cycles: a.quantum_run_cycles,
        coloring: a.coloring,
    };
    let report = a.quiet.with_runs_bar("runs", |progress| {
        search_with(&scenario, &opts, Some(progress))
    });
    let report = report?;
    let text = match a.format.format {
        Format::Table => output::throttle_search::to_table(&report),
        Format::Csv => output::throttle_search::to_csv(&report),
        Format::Json => output::throttle_search::to_json(&report),
    };
    output.write_bytes(text.as_bytes())
}
