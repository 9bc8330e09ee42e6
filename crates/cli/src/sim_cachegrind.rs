//! `cachepart sim cachegrind`: the simulator's cachegrind-compatible mode
//! with cachegrind's options (`--I1/--D1/--LL SIZE,WAYS,LINE`, refused in
//! cachegrind's words), on a binary trace or on a program captured and
//! simulated in one pass (`-- CMD ARGS`, under valgrind lackey or
//! cachepart's own valgrind tool cpgrind, no trace file written); prints
//! cachegrind's summary or its nine totals as JSON.
//!
//! The one-pass route owns its interruption like `trace capture`: SIGINT
//! and SIGTERM raise the capture's cancellation flag, the capture library
//! kills and reaps valgrind and removes its FIFO directory, and cachepart
//! exits with 128 + the signal.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::{bail, Result};
use cachepart::run::cachegrind;
use cachepart_capture::{stream_cpgrind, stream_lackey, CaptureError, CaptureOptions};
use cachepart_sim::{parse_cache_opt, CacheConfig, CachegrindSim};
use clap::{Args, ValueEnum};

use crate::capture_cmd::Interrupt;
use crate::common_args::{Format, FormatArg, OutputArg};

/// Arguments of `cachepart sim cachegrind`.
#[derive(Args)]
pub struct CachegrindArgs {
    /// The binary trace (.cpt) to simulate (`-`: standard input, a pipe is
    /// fine). Give none and put a command after `--` to capture it under
    /// valgrind (`--tool`) and simulate it in one pass.
    pub trace: Option<PathBuf>,
    /// The valgrind tool that captures a command given after `--`:
    /// `lackey`, or `cpgrind` (cachepart's own valgrind tool, built with gcc
    /// on first use: the same records, many times faster).
    #[arg(long, value_enum, default_value_t = OnePassTool::Lackey)]
    pub tool: OnePassTool,
    /// The I1 cache, as cachegrind's option: size in bytes, ways, line
    /// size in bytes (default: the platform's L1I, else 65536,2,64).
    #[arg(long = "I1", value_name = "SIZE,WAYS,LINE", value_parser = cache_opt)]
    pub i1: Option<CacheConfig>,
    /// The D1 cache (default: the platform's L1D, else 65536,2,64).
    #[arg(long = "D1", value_name = "SIZE,WAYS,LINE", value_parser = cache_opt)]
    pub d1: Option<CacheConfig>,
    /// The last-level cache (default: the platform's LLC, else
    /// 262144,8,64).
    #[arg(long = "LL", value_name = "SIZE,WAYS,LINE", value_parser = cache_opt)]
    pub ll: Option<CacheConfig>,
    /// Take the caches not given by --I1/--D1/--LL from this platform (a
    /// built-in name or a platform file): its L1I, L1D and LLC.
    #[arg(long)]
    pub platform: Option<String>,
    /// Simulate a trace on N threads (a power of two): each thread takes
    /// the lines whose address bits just above the largest line size have
    /// its number, bits that lie in the set index of I1, D1 and LL alike,
    /// so the threads share no set. The totals are the same for any N; N
    /// is refused when the levels' set indexes share fewer than log2(N)
    /// bits. A trace file is also decoded on up to 2N more threads (see
    /// --decoders). A command captured after `--` is simulated on one
    /// thread.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub threads: usize,
    /// Decode a trace file on D threads, frames in parallel (default:
    /// twice --threads where the machine has the CPUs for them beside the
    /// simulating threads, fewer where it has fewer, never fewer than
    /// --threads; so 1 on a 2-CPU machine at --threads 1): more help
    /// where decoding, not simulating, bounds the speed and cores are
    /// free. The totals are the same for any D.
    /// Standard input is decoded on one thread.
    #[arg(long, value_name = "D")]
    pub decoders: Option<usize>,
    /// Output format: cachegrind's summary (`table`), or its nine totals
    /// `Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw` (one CSV row, one JSON
    /// object).
    #[command(flatten)]
    pub format: FormatArg,
    #[command(flatten)]
    pub output: OutputArg,
    /// The program and its arguments, after `--` (instead of a trace).
    #[arg(last = true)]
    pub command: Vec<OsString>,
}

/// Capture routes of the one-pass `sim cachegrind -- CMD`: both run the
/// program under valgrind and record one instruction fetch per
/// instruction, as cachegrind counts them.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnePassTool {
    /// valgrind lackey (Debian's `valgrind`).
    Lackey,
    /// cachepart's own valgrind tool, cpgrind (Debian's `valgrind` and
    /// `gcc`); no dependency hints (cachegrind's counts have no use for
    /// them).
    Cpgrind,
}

impl OnePassTool {
    fn name(self) -> &'static str {
        match self {
            OnePassTool::Lackey => "lackey",
            OnePassTool::Cpgrind => "cpgrind",
        }
    }
}

impl CachegrindArgs {
    /// Whether this run captures a program (and so handles its own
    /// interruption).
    pub fn captures(&self) -> bool {
        !self.command.is_empty()
    }
}

/// A note when `--threads N` and `--decoders D` on a trace file ask for
/// more busy threads (D decoding, N simulating) than the machine has CPUs:
/// the simulating threads wait for each other at every chunk, so a
/// descheduled one holds the others up and the run can be slower than on
/// one thread.
fn oversubscribed(threads: usize, decoders: usize) -> Option<String> {
    let cpus = cachegrind::cpus();
    (threads + decoders > 2 && threads + decoders > cpus).then(|| {
        format!(
            "note: --threads {threads} keeps {} threads busy ({decoders} decoding, {threads} \
             simulating) and this machine has {cpus} CPUs; with fewer free CPUs than \
             that it can run slower than --threads 1 (the totals are the same)",
            threads + decoders
        )
    })
}

/// clap's parser of `--I1`, `--D1`, `--LL`: cachegrind's syntax and checks.
fn cache_opt(value: &str) -> Result<CacheConfig, cachepart_sim::CacheOptError> {
    parse_cache_opt(value)
}

/// Runs `sim cachegrind`.
pub fn run(a: CachegrindArgs) -> Result<()> {
    let output = a.output.resolve()?;
    let cfg = cachegrind::config(a.platform.as_deref(), a.i1, a.d1, a.ll)?;
    cachegrind::check_threads(&cfg, a.threads)
        .map_err(|e| anyhow::anyhow!("--threads {}: {e}", a.threads))?;
    let decoders = a
        .decoders
        .unwrap_or_else(|| cachegrind::default_decoders(a.threads, cachegrind::cpus()));
    cachegrind::check_decoders(decoders)
        .map_err(|e| anyhow::anyhow!("--decoders {decoders}: {e}"))?;
    let (summary, status) = match (&a.trace, a.command.is_empty()) {
        (Some(_), false) => bail!("give a trace or a command after `--`, not both"),
        (None, true) => {
            bail!("give a trace (.cpt) to simulate, or a command after `--` to capture")
        }
        (Some(trace), true) => {
            if a.tool != OnePassTool::Lackey {
                bail!(
                    "--tool {}: the capture tool is for a command after `--`, not a trace file",
                    a.tool.name()
                );
            }
            output.check_not_input([trace.as_path()])?;
            let mut on = match a.threads {
                1 => String::new(),
                n => format!(" on {n} threads"),
            };
            if decoders != a.threads {
                on += &format!(", decoding on {decoders}");
            }
            eprintln!(
                "simulating {} with {}{on}",
                trace.display(),
                cachegrind::describe(&cfg)
            );
            if let Some(note) = oversubscribed(a.threads, decoders) {
                eprintln!("{note}");
            }
            (
                cachegrind::simulate_trace(trace, &cfg, a.threads, Some(decoders))?,
                None,
            )
        }
        (None, false) => {
            if a.threads > 1 || a.decoders.is_some() {
                eprintln!(
                    "note: --threads and --decoders apply to a trace file; a captured \
                     command is simulated on one thread, as fast as {} records it",
                    a.tool.name()
                );
            }
            eprintln!(
                "capturing ({}) and simulating {} with {}",
                a.tool.name(),
                a.command[0].to_string_lossy(),
                cachegrind::describe(&cfg)
            );
            let (s, status) = capture_and_simulate(&a.command, &cfg, a.tool)?;
            (s, Some(status))
        }
    };
    let text = match a.format.format {
        Format::Table => cachegrind::to_table(&summary),
        Format::Csv => cachegrind::to_csv(&summary),
        Format::Json => cachegrind::to_json(&summary),
    };
    output.write_bytes(text.as_bytes())?;
    if let Some(status) = status.filter(|s| !s.success()) {
        use std::os::unix::process::ExitStatusExt;
        eprintln!(
            "warning: {} exited with {status}; the summary covers its run up to then",
            a.command[0].to_string_lossy()
        );
        std::process::exit(
            status
                .code()
                .or_else(|| status.signal().map(|n| 128 + n))
                .unwrap_or(1),
        );
    }
    Ok(())
}

/// Runs `command` under `tool` and simulates its records as they come.
fn capture_and_simulate(
    command: &[OsString],
    cfg: &cachepart_sim::CachegrindConfig,
    tool: OnePassTool,
) -> Result<(cachepart_sim::CachegrindSummary, std::process::ExitStatus)> {
    let interrupt = Interrupt::register()?;
    let opts = CaptureOptions {
        cancel: Some(interrupt.cancel()),
        // cpgrind: one fetch per instruction, as lackey's trace and
        // cachegrind's I refs; no hints.
        ifetch: true,
        dep_window: 0,
        ..CaptureOptions::default()
    };
    let mut sim = CachegrindSim::new(cfg)?;
    let streamed = match tool {
        OnePassTool::Lackey => stream_lackey(command, &opts, &mut |r| sim.access(r)),
        OnePassTool::Cpgrind => stream_cpgrind(command, &opts, &mut |r| sim.access(r)),
    };
    match streamed {
        Err(e @ CaptureError::Interrupted { .. }) => {
            eprintln!("error: {e}");
            std::process::exit(interrupt.exit_code());
        }
        r => {
            let s = r?;
            Ok((sim.summary(), s.status))
        }
    }
}
