//! `cachepart profile ...`: the table-driven machine's commands.

use crate::common_args::{BuiltinSetArg, Format, FormatArg, OutputArg, QuietArg, ThreadsArg};
use crate::kind_arg::kind_parser;
use crate::output::{check_distinct, Output};
use anyhow::{bail, Context, Result};
use cachepart::output::report::{self, ReportOptions};
use cachepart::policy::LfocPreset;
use cachepart::profile::{BwModel, MetricsTable, ModelConfig, Workload};
use cachepart::run::alone::{AppTiming, ProfileOptions};
use cachepart::run::classify;
use cachepart::spec::data::MixData;
use cachepart::{Algorithm, RunOptions};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Subcommands of `cachepart profile`.
#[derive(Subcommand)]
pub enum ProfileCommand {
    /// Evaluate algorithms on workloads; print per-workload metrics and plans.
    Eval(EvalArgs),
    /// Print the LFOC class of each program with the numbers that decided it.
    Classify(ClassifyArgs),
    /// Make a metrics table (PBBCache CSV format) from traces: each trace
    /// runs alone on the simulator at every way count 1..=W.
    FromTrace(FromTraceArgs),
    /// Print a built-in metrics table (PBBCache CSV format) or its workloads.
    Builtin(BuiltinArgs),
    /// Put two metrics tables of the same programs side by side (e.g.
    /// measured on hardware against `from-trace` on the simulator): LLC
    /// MPKI and normalised IPC at every way count, and each one's LFOC class.
    Compare(crate::profile_compare::CompareArgs),
    /// Measure real programs on this machine: each runs alone at every way
    /// count 1..W (a CAT sweep), written in PBBCache's metrics format.
    Measure(crate::profile_measure::MeasureArgs),
}

/// Arguments of `profile builtin`.
#[derive(Args)]
pub struct BuiltinArgs {
    /// Print the workloads instead of the metrics.
    #[arg(long)]
    workloads: bool,
    #[command(flatten)]
    set: BuiltinSetArg,
    #[command(flatten)]
    output: OutputArg,
}

/// Where programs' tables and the mixes come from.
#[derive(Args)]
pub struct DataArgs {
    /// Metrics CSV (PBBCache format; `-` reads standard input); default: a
    /// built-in table (--builtin).
    #[arg(long, short = 'm', conflicts_with = "builtin")]
    metrics: Option<PathBuf>,
    /// The built-in data set used when no --metrics is given.
    #[command(flatten)]
    builtin: BuiltinSetArg,
    /// Workloads file (.csv/.txt lines, .toml or .json; `-` reads lines
    /// from standard input); default: built-in workloads when no --metrics
    /// is given.
    #[arg(long, short = 'w')]
    workloads: Option<PathBuf>,
    /// One mix given inline, comma-separated program names (instead of --workloads).
    #[arg(long, conflicts_with = "workloads")]
    apps: Option<String>,
}

/// Arguments of `profile eval`.
#[derive(Args)]
pub struct EvalArgs {
    #[command(flatten)]
    data: DataArgs,
    /// Algorithms, comma-separated (see `cachepart algorithms`).
    #[arg(long, short = 'a', default_value = Algorithm::DEFAULT_LIST)]
    algorithms: String,
    /// Use only the first N ways.
    #[arg(long)]
    ways: Option<usize>,
    /// Bandwidth model (needs --max-bw to have an effect).
    #[arg(long, value_parser = kind_parser::<BwModel>(), default_value = "simple")]
    bw_model: BwModel,
    /// Maximum memory bandwidth in MB/s (default: unlimited).
    #[arg(long)]
    max_bw: Option<f64>,
    #[command(flatten)]
    format: FormatArg,
    #[command(flatten)]
    output: OutputArg,
    /// Also draw the STP-versus-unfairness chart (normalised to stock) to
    /// this PNG (or .jpg, .jpeg, .bmp: the format follows the extension).
    #[arg(long)]
    chart: Option<PathBuf>,
    /// Plan of the `user` algorithm: MASK=APPS;... (e.g. 0x7fc=0,1;0x3=2-3).
    #[arg(long)]
    plan: Option<String>,
    /// Time limit of each exact solve in seconds; the best plan found is kept
    /// and marked as not proven optimal.
    #[arg(long)]
    time_limit: Option<f64>,
    /// Threads of the exact solvers.
    #[command(flatten)]
    threads: ThreadsArg,
    /// LFOC (and LFOC+): `paper` (Table 1 and Algorithm 1 as printed) or
    /// `pbbcache` (PBBCache's variant, exactly); see docs/policies/lfoc.md.
    #[arg(long, default_value = "paper", value_parser = parse_preset)]
    lfoc_preset: LfocPreset,
    /// LFOC: streaming apps per way of the streaming cluster (default: the
    /// preset's, 5).
    #[arg(long)]
    lfoc_max_streaming: Option<usize>,
    /// LFOC: light apps per free streaming slot (default: the preset's, 3
    /// under paper, 2 under pbbcache).
    #[arg(long)]
    lfoc_gaps_per_streaming: Option<usize>,
    /// Include decision wall times in CSV/JSON output.
    #[arg(long)]
    timings: bool,
    #[command(flatten)]
    quiet: QuietArg,
}

/// Arguments of `profile classify`.
#[derive(Args)]
pub struct ClassifyArgs {
    #[command(flatten)]
    data: DataArgs,
    /// The thresholds of this LFOC preset: `paper` (streaming from 10 LLC
    /// misses per kilo-cycle, Table 1) or `pbbcache` (from 14).
    #[arg(long, default_value = "paper", value_parser = parse_preset)]
    lfoc_preset: LfocPreset,
    #[command(flatten)]
    format: FormatArg,
    #[command(flatten)]
    output: OutputArg,
}

/// An LFOC preset name (the error lists the accepted ones).
pub(crate) fn parse_preset(s: &str) -> Result<LfocPreset, String> {
    s.parse()
        .map_err(|e: cachepart::policy::UnknownPreset| e.to_string())
}

/// Arguments of `profile from-trace`.
#[derive(Args)]
pub struct FromTraceArgs {
    /// The traces (.cpt); each program is named after its file stem.
    #[arg(required = true)]
    traces: Vec<PathBuf>,
    /// The simulated platform: a built-in name (`cachepart platform list`)
    /// or a platform file.
    #[arg(long, short = 'p')]
    platform: String,
    /// Program names, comma-separated, one per trace (default: file stems).
    #[arg(long, value_delimiter = ',')]
    name: Vec<String>,
    /// Cycles per instruction when every access hits the L1.
    #[arg(long, default_value_t = 1.0)]
    base_cpi: f64,
    /// Memory-level parallelism (>= 1): LLC and memory latencies are divided by it.
    #[arg(long, default_value_t = 1.0)]
    mlp: f64,
    /// Run each trace for this many instructions, replaying it if shorter
    /// (default: the whole trace once). Counted after the warm-up.
    #[arg(long)]
    instructions: Option<u64>,
    /// Run this many instructions before measuring, so that the cold
    /// misses of an empty cache are left out (the measurement starts at
    /// the first 1 M-cycle interval end after them).
    #[arg(long, default_value_t = 0)]
    warmup: u64,
    /// Hardware prefetchers during the runs: `off`, `platform` (the
    /// platform's default word) or an MSR 0x1A4 word such as `0x5`
    /// (docs/simulator-prefetchers.md).
    #[arg(long, default_value = "off")]
    prefetchers: String,
    /// Seed of the simulation.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    output: OutputArg,
    #[command(flatten)]
    quiet: QuietArg,
}

/// Runs a `profile` subcommand.
pub fn run(cmd: ProfileCommand) -> Result<()> {
    match cmd {
        ProfileCommand::Eval(a) => eval(a),
        ProfileCommand::Classify(a) => classify_cmd(a),
        ProfileCommand::FromTrace(a) => from_trace(a),
        ProfileCommand::Compare(a) => crate::profile_compare::run(a),
        ProfileCommand::Measure(a) => crate::profile_measure::run(a),
        ProfileCommand::Builtin(a) => {
            let output = a.output.resolve()?;
            let set = a.set.builtin;
            if a.workloads {
                output.write_bytes(set.workloads_text().as_bytes())
            } else {
                output.write_bytes(set.metrics_csv().as_bytes())
            }
        }
    }
}

fn load(data: &DataArgs, need_workloads: bool) -> Result<(MetricsTable, Vec<Workload>)> {
    let stdin = |p: &Option<PathBuf>| p.as_deref().is_some_and(cachepart::units::input::is_stdin);
    if stdin(&data.metrics) && stdin(&data.workloads) {
        bail!("--metrics - and --workloads -: standard input can be read once; give one of them as a file");
    }
    let mixes: Option<Vec<Vec<String>>> = data
        .apps
        .as_ref()
        .map(|apps| vec![apps.split(',').map(|a| a.trim().to_string()).collect()]);
    let sources = MixData {
        metrics: data.metrics.as_deref(),
        workloads: data.workloads.as_deref(),
        mixes: mixes.as_deref(),
        builtin: data.builtin.builtin,
    };
    Ok(sources.load(need_workloads)?)
}

impl DataArgs {
    /// The files this data is read from (for the output checks).
    fn inputs(&self) -> Vec<&Path> {
        self.metrics
            .iter()
            .chain(self.workloads.iter())
            .map(PathBuf::as_path)
            .collect()
    }
}

fn eval(a: EvalArgs) -> Result<()> {
    let output = a.output.resolve()?;
    if let Some(p) = &a.chart {
        cachepart::output::chart::check_chart_path(p)
            .with_context(|| format!("--chart {}", p.display()))?;
    }
    let chart = a
        .chart
        .as_deref()
        .map(|p| Output::new("--chart", p))
        .transpose()?;
    let mut outputs = vec![&output];
    outputs.extend(chart.as_ref());
    check_distinct(&outputs)?;
    for o in &outputs {
        o.check_not_input(a.data.inputs())?;
    }
    let (table, workloads) = load(&a.data, true)?;
    let mut algorithms = Algorithm::parse_list(&a.algorithms)?;
    if a.chart.is_some() && !algorithms.contains(&Algorithm::Stock) {
        algorithms.insert(0, Algorithm::Stock);
    }
    let mut opts = RunOptions {
        model: ModelConfig {
            bw_model: a.bw_model,
            max_bw_mbps: a.max_bw,
        },
        ways: a.ways,
        user_plan: a.plan.clone(),
        lfoc_preset: a.lfoc_preset,
        lfoc_max_streaming: a.lfoc_max_streaming,
        lfoc_gaps_per_streaming: a.lfoc_gaps_per_streaming,
        time_limit: a
            .time_limit
            .map(cachepart::time_limit_from_secs)
            .transpose()?,
        threads: a.threads.threads,
        progress: None,
    };
    if a.timings && a.format.format == Format::Table {
        bail!("--timings: the table output has no timings column; use --format csv or json");
    }
    for w in opts.check(&algorithms)? {
        eprintln!("warning: {w}");
    }
    let bar = if algorithms.iter().any(|x| x.is_optimal()) {
        a.quiet.bar(
            Some(1),
            "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} subproblems ({eta})",
        )
    } else {
        None
    }
    .map(|pb| Arc::new(Mutex::new(pb)));
    if let Some(pb) = &bar {
        let pb = pb.clone();
        opts.progress = Some(Arc::new(move |w: &str, alg: &str, p| {
            if let Ok(pb) = pb.lock() {
                pb.set_prefix(format!("{w} {alg}"));
                pb.set_length(p.total.max(1));
                pb.set_position(p.done);
            }
        }));
    }
    let outcomes = cachepart::run_profile(&table, &workloads, &algorithms, &opts);
    if let Some(pb) = &bar {
        if let Ok(pb) = pb.lock() {
            pb.finish_and_clear();
        }
    }
    let outcomes = outcomes?;
    let rows = report::rows_with(&outcomes, ReportOptions { timings: a.timings });
    let text = match a.format.format {
        Format::Table => report::to_table(&rows),
        Format::Csv => report::to_csv(&rows),
        Format::Json => report::to_json(&rows),
    };
    if let Some(chart) = &chart {
        chart
            .write_path_with(|p| {
                cachepart::output::chart::write_tradeoff_png(
                    &outcomes,
                    p,
                    "STP vs unfairness, normalised to stock",
                )
                .map_err(anyhow::Error::from)
            })
            .with_context(|| format!("drawing {}", chart.display()))?;
    }
    output.write_bytes(text.as_bytes())?;
    for o in &outcomes {
        if let Some(s) = o.solver {
            if !s.proven_optimal {
                eprintln!(
                    "warning: {} on {}: time limit reached; the plan is the best found, not proven optimal",
                    o.algorithm, o.workload
                );
            }
        }
    }
    Ok(())
}

fn classify_cmd(a: ClassifyArgs) -> Result<()> {
    let output = a.output.resolve()?;
    output.check_not_input(a.data.inputs())?;
    let (table, workloads) = load(&a.data, false)?;
    let rows = classify::classify_workloads(&table, &workloads, a.lfoc_preset)?;
    let text = match a.format.format {
        Format::Table => classify::to_table(&rows, a.lfoc_preset),
        Format::Csv => classify::to_csv(&rows),
        Format::Json => classify::to_json(&rows),
    };
    output.write_bytes(text.as_bytes())
}

fn from_trace(a: FromTraceArgs) -> Result<()> {
    let output = a.output.resolve()?;
    output.check_not_input(a.traces.iter().map(PathBuf::as_path))?;
    let mut platform = cachepart::spec::platforms::resolve(&a.platform, None)?;
    cachepart::spec::platforms::set_prefetchers(&mut platform, &a.prefetchers)?;
    let apps = cachepart::spec::options::trace_apps(&a.traces, &a.name)?;
    let opts = ProfileOptions {
        platform,
        timing: AppTiming::new(a.base_cpi, a.mlp),
        instructions: a.instructions,
        warmup: a.warmup,
        seed: a.seed,
    };
    let rows = a.quiet.with_runs_bar("alone runs", |progress| {
        cachepart::run::from_trace::metrics_rows_with(&apps, &opts, Some(progress))
    });
    let csv = cachepart::run::from_trace::to_csv(&rows?);
    output.write_bytes(csv.as_bytes())
}
