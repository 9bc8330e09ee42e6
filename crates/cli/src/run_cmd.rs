//! `cachepart run MIX.toml --policy NAME`: the launcher. Glue over
//! `cachepart::linux::run`: it checks the machine, starts the mix pinned to
//! its cores, drives the policy on the Linux machine, prints one line per
//! app and the mix metrics, and with `-o DIR` writes `DIR/results.json`
//! and `DIR/samples.csv`.
//!
//! SIGINT and SIGTERM raise the machine's interrupt flag: the run stops
//! at the next check (10 ms), the apps are stopped, the groups removed
//! and the MSRs restored; nothing is written, and the command exits with
//! 128 + the signal (130, 143) like every other command.
//!
//! Options no run takes (a policy Linux cannot run; one that plans from
//! the apps' alone curves without `-m/--metrics`) are refused before `-o`
//! makes anything; a directory `-o` made is removed again when the run
//! fails or is interrupted before writing into it.

use crate::common_args::HostArgs;
use anyhow::{Context, Result};
use cachepart::linux::mix::parse_interval;
use cachepart::linux::run::{run_mix, LinuxRunOptions};
use cachepart::Algorithm;
use clap::Args;
use signal_hook::consts::{SIGINT, SIGTERM};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::output::{Output, OutputDir};

/// `cachepart run`
#[derive(Args)]
pub struct RunArgs {
    /// The mix file (TOML: [[app]] name, argv, core, restart, profile;
    /// `-`: standard input).
    mix: PathBuf,
    /// The policy: a static one (stock, equal-part, ucp, kpart, dunn,
    /// lfoc, ...) or an online controller (lfoc-online, dunn-dynamic,
    /// kpart-dynaway).
    #[arg(long)]
    policy: String,
    /// The interval (`500ms`, `1s`; default: the mix file's, else 500ms).
    #[arg(long, value_parser = parse_interval)]
    interval: Option<std::time::Duration>,
    /// The profile table (PBBCache metrics CSV) with the apps' alone curves:
    /// needed by every static policy but stock, equal-part and the
    /// whirlpools, and by throttle-online (such a policy is refused up
    /// front without it).
    #[arg(short = 'm', long)]
    metrics: Option<PathBuf>,
    #[command(flatten)]
    host: HostArgs,
    /// Scripted counters in place of perf (machines without a PMU, tests).
    #[arg(long)]
    fake_counters: bool,
    /// Counters from this profile table (PBBCache metrics CSV) in place of
    /// perf: each app at its program's row for the ways its plan gives it.
    #[arg(long, value_name = "TABLE")]
    fake_counters_from: Option<PathBuf>,
    /// Allow MSR writes (duty cycle, prefetchers) on the apps' cores.
    #[arg(long)]
    allow_msr: bool,
    /// Write results.json and samples.csv into this directory (made if
    /// missing; removed again if the run fails before writing into it).
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
}

/// The interrupt flag the machine polls, and which signal raised it.
fn interrupt_flag() -> Result<(Arc<AtomicBool>, Arc<AtomicUsize>)> {
    let flag = Arc::new(AtomicBool::new(false));
    let which = Arc::new(AtomicUsize::new(0));
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register_usize(sig, Arc::clone(&which), sig as usize)
            .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&flag)))
            .context("installing the SIGINT/SIGTERM handler")?;
    }
    Ok((flag, which))
}

/// Runs `cachepart run`.
pub fn run(args: RunArgs) -> Result<()> {
    let (flag, which) = interrupt_flag()?;
    let policy: Algorithm = args.policy.parse()?;
    let opts = LinuxRunOptions {
        policy,
        interval: args.interval,
        roots: args.host.roots(),
        plain_resctrl: args.host.resctrl_plain,
        fake_counters: args.fake_counters,
        fake_table: args.fake_counters_from,
        allow_msr: args.allow_msr,
        metrics: args.metrics,
        interrupt: Some(flag),
    };
    // Options no run takes (a policy Linux cannot run, one that needs the
    // alone curves without -m) are refused before -o makes anything.
    opts.check()?;
    // A directory made here is removed again when the run fails or is
    // interrupted before its outputs are written.
    let outputs = match &args.output {
        Some(dir) => {
            let made = OutputDir::create("-o", dir)?;
            let results = Output::new("-o", &dir.join("results.json"))?;
            let samples = Output::new("-o", &dir.join("samples.csv"))?;
            for o in [&results, &samples] {
                o.check_not_input([args.mix.as_path()])?;
            }
            Some((made, results, samples))
        }
        None => None,
    };
    let report = run_mix(&args.mix, &opts);
    // The machine is gone (apps stopped, groups removed, MSRs restored)
    // whether the run failed on the flag or ended as the signal came.
    let sig = which.load(Ordering::Relaxed) as i32;
    if sig != 0 {
        let name = if sig == SIGINT { "SIGINT" } else { "SIGTERM" };
        // exit runs no destructor: the directory goes first
        drop(outputs);
        eprintln!(
            "interrupted by {name}: apps stopped, groups removed, MSRs restored; no output written"
        );
        std::process::exit(128 + sig);
    }
    let report = report?;
    if report.fake_counters {
        eprintln!("note: fake counters: the counts are scripted, not measured");
    }
    println!(
        "{:<16} {:>4} {:>6} {:>10} {:>5} {:>7} {:>9}",
        "app", "core", "mask", "first run", "runs", "ipc", "slowdown"
    );
    for a in &report.apps {
        println!(
            "{:<16} {:>4} {:>6} {:>9.3}s {:>5} {:>7.3} {:>9}",
            a.name,
            a.core.map_or("-".into(), |c| c.to_string()),
            a.mask.as_deref().unwrap_or("-"),
            a.first_run_s,
            a.runs,
            a.ipc,
            a.slowdown.map_or("-".into(), |s| format!("{s:.3}")),
        );
    }
    if let Some(m) = &report.metrics {
        println!(
            "STP {:.3}  ANTT {:.3}  unfairness {:.3}",
            m.stp, m.antt, m.unfairness
        );
    }
    if let Some((made, results, samples)) = outputs {
        // Both rendered before either is written.
        let json = serde_json::to_string_pretty(&report)?;
        let csv = cachepart::output::samples::to_csv(&report.samples);
        crate::output::write_all_bytes(&[(&results, json.as_bytes()), (&samples, csv.as_bytes())])?;
        made.keep();
    }
    Ok(())
}
