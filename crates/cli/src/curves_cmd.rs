//! `cachepart curves TRACE`: miss-rate curves of a binary trace, exact or
//! sampled, or its stall-rate curve on a simulated platform
//! (`--kind stall-rate --platform NAME`), printed as a table, CSV or JSON.

use crate::common_args::{Format, FormatArg, OutputArg, QuietArg};
use crate::kind_arg::{kind_parser, kind_values};
use crate::output::Output;
use anyhow::{bail, Result};
use cachepart::curves::Curve;
use cachepart::output::CsvOptions;
use cachepart::run::alone::{
    stall_curve_csv, stall_rate_curve_with, AppTiming, Axis, ProfileOptions, StallCurve, TraceApp,
};
use cachepart::Kind as _;
use cachepart::{compute_curve_with, CurveCounts, CurveKind as Kind, CurveRequest, ReadHook};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

/// Arguments of `cachepart curves`.
#[derive(Args)]
pub struct CurvesArgs {
    /// The trace file (.cpt), or `-` to read it from standard input (a
    /// pipe is fine, except for stall-rate curves, which replay it).
    pub trace: PathBuf,
    /// Which curve.
    #[arg(long, value_parser = curve_parser(), default_value = "fully-associative")]
    pub kind: CurveArg,
    /// Cache line size in bytes.
    #[arg(long, default_value_t = 64)]
    pub line: u64,
    /// Count instruction fetches as references too (data only by default).
    #[arg(long)]
    pub ifetch: bool,
    /// Smallest size of the fully associative and SHARDS curves, in bytes
    /// (at least one line) [default: 1024, or one line if larger]
    #[arg(long)]
    pub min_size: Option<u64>,
    /// Largest size of the fully associative and SHARDS curves, in bytes.
    #[arg(long, default_value_t = 64 << 20)]
    pub max_size: u64,
    /// Sizes per doubling between the smallest and largest size (1 to
    /// 1024); every size is rounded down to whole lines.
    #[arg(long, default_value_t = 1)]
    pub per_octave: u32,
    /// Sets of the cache (set-associative and colored curves).
    #[arg(long, default_value_t = 2048)]
    pub sets: u64,
    /// Ways: the curves cover 1..=WAYS (set-associative and colored).
    #[arg(long, default_value_t = 16)]
    pub ways: u32,
    /// Page size in bytes (colored curves).
    #[arg(long, default_value_t = 4096)]
    pub page: u64,
    /// SHARDS sampling rate (fixed rate), or the initial rate with
    /// `--max-lines` [default: 0.01].
    #[arg(long)]
    pub rate: Option<f64>,
    /// SHARDS fixed size: track at most this many sampled lines.
    #[arg(long)]
    pub max_lines: Option<usize>,
    /// SHARDS: divide by the sampled weight instead of the true reference
    /// count (no SHARDS_adj). Only with --max-lines from --rate 1 (plain
    /// SHARDS); refused where the reference sample makes it cancel.
    #[arg(long)]
    pub no_adjust: bool,
    /// Stall-rate curves: the simulated platform (a built-in name or a
    /// platform file).
    #[arg(long, short = 'p')]
    pub platform: Option<String>,
    /// Stall-rate curves: sweep CAT way counts 1..=W or page colors 1..=C.
    #[arg(long, value_parser = kind_parser::<Axis>(), default_value = "ways")]
    pub axis: Axis,
    /// Stall-rate curves: cycles per instruction when every access hits the L1.
    #[arg(long, default_value_t = 1.0)]
    pub base_cpi: f64,
    /// Stall-rate curves: memory-level parallelism (>= 1).
    #[arg(long, default_value_t = 1.0)]
    pub mlp: f64,
    /// Stall-rate curves: run this many instructions (at most 10^12),
    /// replaying the trace if shorter (default: the whole trace once).
    #[arg(long)]
    pub instructions: Option<u64>,
    /// Stall-rate curves: seed of the simulation.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// SHARDS: make a pass over the trace even when its sample index
    /// (`TRACE.shards`, from `cachepart trace shards-index`) serves the
    /// request.
    #[arg(long)]
    pub no_index: bool,
    #[command(flatten)]
    pub format: FormatArg,
    #[command(flatten)]
    pub output: OutputArg,
    #[command(flatten)]
    pub quiet: QuietArg,
}

/// The curves `cachepart curves` can make: one of the trace's own
/// ([`Kind`]), or the stall-rate curve from alone runs.
#[derive(Clone, Copy)]
pub enum CurveArg {
    /// A miss-rate curve of the trace.
    Trace(Kind),
    /// Memory-stall cycles per 10^9 cycles at every way or color count
    /// (Tam et al.), from alone runs on the simulator.
    StallRate,
}

/// `--kind`: the library's curve kinds, then `stall-rate`.
fn curve_parser() -> impl TypedValueParser<Value = CurveArg> {
    let mut values = kind_values(Kind::all());
    values.push(PossibleValue::new("stall-rate").help(
        "Memory-stall cycles per 10^9 cycles at every way or color count (Tam et al.), \
         from alone runs on the simulator (needs --platform)",
    ));
    PossibleValuesParser::new(values)
        .map(|name: String| Kind::from_name(&name).map_or(CurveArg::StallRate, CurveArg::Trace))
}

/// Runs `cachepart curves`.
pub fn run(args: CurvesArgs) -> Result<()> {
    let output = args.output.resolve()?;
    output.check_not_input([args.trace.as_path()])?;
    let kind = match args.kind {
        CurveArg::Trace(kind) => kind,
        CurveArg::StallRate => return stall_rate(&args, &output),
    };
    if args.platform.is_some() {
        bail!(
            "--platform is for --kind stall-rate; the miss-rate curves take --sets/--ways/--line"
        );
    }
    let req = CurveRequest {
        kind,
        line_bytes: args.line,
        include_ifetch: args.ifetch,
        min_size: args.min_size,
        max_size: args.max_size,
        per_octave: args.per_octave,
        sets: args.sets,
        ways: args.ways,
        page_bytes: args.page,
        rate: args.rate,
        max_lines: args.max_lines,
        adjust: !args.no_adjust,
        use_index: !args.no_index,
    };
    // A bar of the trace's bytes read, when the curve comes from a pass
    // over its records.
    let size = std::fs::metadata(&args.trace).ok().map(|m| m.len());
    let bar = args.quiet.read_bar(size);
    let hook = bar
        .clone()
        .map(|pb| -> ReadHook { Box::new(move |f| Box::new(pb.wrap_read(f))) });
    let out = compute_curve_with(&args.trace, &req, hook);
    if let Some(pb) = &bar {
        pb.finish_and_clear();
    }
    let out = out?;
    if let Some(s) = out.sampling {
        let source = match (&s.index, &s.index_skipped) {
            (Some(p), _) => format!("from the sample index {}", p.display()),
            (None, Some(why)) => format!("from a pass over the trace ({why})"),
            (None, None) => "from a pass over the trace".to_string(),
        };
        eprintln!(
            "SHARDS: {} sampled references, {} lines tracked, final rate {}, {source}",
            s.sampled_refs, s.sampled_lines, s.final_rate
        );
        if let Some(why) = &s.warning {
            eprintln!("warning: {why}");
        }
    }
    output.write_bytes(render(&out.curve, out.counts.as_ref(), args.format.format)?.as_bytes())
}

/// One line of a curve's CSV; set-associative and color curves lead with
/// their `ways` or `colors` column.
#[derive(Default, Serialize)]
struct CurveCsvRow {
    #[serde(skip_serializing_if = "Option::is_none")]
    ways: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    colors: Option<u64>,
    size_bytes: u64,
    misses: u64,
    #[serde(serialize_with = "cachepart::output::fixed::<6, _>")]
    miss_ratio: f64,
    #[serde(serialize_with = "cachepart::output::fixed_opt::<4, _>")]
    mpki: Option<f64>,
}

/// The curve in `format`; set-associative and color curves lead with their
/// `ways` or `colors` column (a `ways`/`colors` array in JSON).
fn render(curve: &Curve, counts: Option<&CurveCounts>, format: Format) -> Result<String> {
    let mpki = |i: usize| curve.mpki(i).map_or(String::new(), |m| format!("{m:.4}"));
    let count = |i: usize| counts.map(|c| c.values[i]);
    Ok(match format {
        Format::Json => {
            let mut v = serde_json::to_value(curve)?;
            if let (Some(c), Some(obj)) = (counts, v.as_object_mut()) {
                obj.insert(c.axis.into(), serde_json::to_value(&c.values)?);
            }
            serde_json::to_string_pretty(&v)? + "\n"
        }
        Format::Csv => {
            let rows: Vec<CurveCsvRow> = (0..curve.len())
                .map(|i| CurveCsvRow {
                    ways: counts.filter(|c| c.axis == "ways").map(|c| c.values[i]),
                    colors: counts.filter(|c| c.axis == "colors").map(|c| c.values[i]),
                    size_bytes: curve.sizes_bytes[i],
                    misses: curve.misses[i],
                    miss_ratio: curve.miss_ratio(i),
                    mpki: curve.mpki(i),
                })
                .collect();
            cachepart::output::to_csv(&rows, CsvOptions::default())
        }
        Format::Table => {
            let mut s = format!(
                "references {}  instructions {}\n",
                curve.accesses, curve.instructions
            );
            if let Some(c) = counts {
                s += &format!("{:>6}  ", c.axis);
            }
            s += &format!(
                "{:>14}  {:>12}  {:>10}  {:>10}\n",
                "size", "misses", "miss ratio", "MPKI"
            );
            for i in 0..curve.len() {
                if let Some(n) = count(i) {
                    s += &format!("{n:>6}  ");
                }
                s += &format!(
                    "{:>14}  {:>12}  {:>10.4}  {:>10}\n",
                    human(curve.sizes_bytes[i]),
                    curve.misses[i],
                    curve.miss_ratio(i),
                    mpki(i)
                );
            }
            s
        }
    })
}

/// Bytes in KiB/MiB/GiB when whole, else in bytes.
fn human(bytes: u64) -> String {
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes >= 1 << shift && bytes & ((1 << shift) - 1) == 0 {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} B")
}

fn stall_rate(args: &CurvesArgs, output: &Output) -> Result<()> {
    let Some(platform) = &args.platform else {
        bail!("--kind stall-rate needs --platform NAME|FILE (see `cachepart platform list`)");
    };
    let opts = ProfileOptions {
        platform: cachepart::spec::platforms::resolve(platform, None)?,
        timing: AppTiming::new(args.base_cpi, args.mlp),
        instructions: args.instructions,
        warmup: 0,
        seed: args.seed,
    };
    let axis = args.axis;
    let app = TraceApp::from_path(&args.trace)?;
    let curve = args.quiet.with_runs_bar("alone runs", |progress| {
        stall_rate_curve_with(&app, axis, &opts, Some(progress))
    });
    let curve = curve?;
    output.write_bytes(render_stall(&curve, args.format.format)?.as_bytes())
}

fn render_stall(c: &StallCurve, format: Format) -> Result<String> {
    Ok(match format {
        Format::Json => serde_json::to_string_pretty(c)? + "\n",
        Format::Csv => stall_curve_csv(c),
        Format::Table => {
            let mut s = format!(
                "{} on {}: memory-stall cycles per 10^9 cycles\n{:>6}  {:>10}  {:>14}  {:>8}  {:>10}\n",
                c.app,
                c.platform,
                c.axis.name(),
                "size",
                "stall rate",
                "IPC",
                "LLC MPKI"
            );
            for p in &c.points {
                s += &format!(
                    "{:>6}  {:>10}  {:>14.0}  {:>8.4}  {:>10.4}\n",
                    p.size,
                    human(p.size_bytes),
                    p.stall_rate,
                    p.ipc,
                    p.llc_mpki
                );
            }
            s
        }
    })
}
