//! The `cachepart` binary: parses arguments and calls the facade.
#![deny(missing_docs)]

mod capture_cmd;
mod common_args;
mod curves_cmd;
mod daemon_cmd;
mod doctor_cmd;
mod experiment_cmd;
mod interrupt;
mod kind_arg;
mod output;
mod platform_cmd;
mod profile_cmd;
mod profile_compare;
mod profile_measure;
mod rdt_cmd;
mod rdt_emulate;
mod rdt_manage;
mod report;
mod run_cmd;
mod sim_cachegrind;
mod sim_cmd;
mod sim_throttle;
mod sweep_cmd;
mod trace_cmd;

use clap::{Parser, Subcommand};

/// Compare and enforce last-level-cache partitioning policies.
#[derive(Parser)]
#[command(
    name = "cachepart",
    version,
    about,
    long_about = None,
    after_help = "Exit status: 0 on success; 1 on any error (a bad file, trace or option, a failed simulation or run), its message on stderr; 2 for arguments the parser refuses; 130/143 after SIGINT/SIGTERM. `doctor` and `sim cachegrind` document their own."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The table-driven machine: evaluate policies on measured per-app tables.
    #[command(subcommand)]
    Profile(profile_cmd::ProfileCommand),
    /// Miss-rate curves of a trace: exact LRU (every size, every way count,
    /// every color count) or SHARDS-sampled.
    Curves(curves_cmd::CurvesArgs),
    /// Memory traces: inspect, convert, generate.
    #[command(subcommand)]
    Trace(trace_cmd::TraceCommand),
    /// The trace-driven simulator: run scenario files, or cachegrind's
    /// cache simulation of a trace or program.
    #[command(subcommand)]
    Sim(sim_cmd::SimCommand),
    /// Simulator platforms: list, show, page colors.
    #[command(subcommand)]
    Platform(platform_cmd::PlatformCommand),
    /// Experiments: sweeps of simulator scenarios reproducing the papers.
    #[command(subcommand)]
    Experiment(experiment_cmd::ExperimentCommand),
    /// Intel RDT / AMD PQoS through resctrl: show the mount.
    #[command(subcommand)]
    Rdt(rdt_cmd::RdtCommand),
    /// What this machine supports for cache management, each lack with its fix.
    Doctor(doctor_cmd::DoctorArgs),
    /// Run a mix of programs on this Linux machine under a policy (the launcher).
    Run(run_cmd::RunArgs),
    /// Manage running processes (by pid, command name or cgroup) under a
    /// policy; SIGHUP reloads the configuration.
    Daemon(daemon_cmd::DaemonArgs),
    /// Sweeps on Dask distributed: plan, run (resumable) and report grids of
    /// mixes, algorithms, tables, scenarios and seeds (runs `python -m
    /// cachepart.sweep`; see docs/sweeps.md).
    Sweep(sweep_cmd::SweepArgs),
    /// List every algorithm name.
    Algorithms,
}

fn main() {
    // Like any Unix filter, stop quietly when the reader of our output
    // goes away (`cachepart experiment plan X | head`): Rust ignores
    // SIGPIPE, which turns the closed pipe into a panic in `println!`.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to the default, before any
    // thread is started; no handler runs Rust code.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    // Every command but the captures (`trace capture`, `sim cachegrind --
    // CMD`: they stop the traced program first) and `rdt emulate` (it
    // unmounts first) cleans its temporaries and exits 130/143 on
    // SIGINT/SIGTERM.
    let capture = match &cli.command {
        Command::Trace(trace_cmd::TraceCommand::Capture { .. }) => true,
        Command::Sim(sim_cmd::SimCommand::Cachegrind(a)) => a.captures(),
        Command::Rdt(rdt_cmd::RdtCommand::Emulate { .. }) => true,
        // The Linux machine handles SIGINT/SIGTERM: it stops the apps and
        // removes its groups before the command ends.
        Command::Run(_) => true,
        // The daemon removes its groups on SIGINT/SIGTERM and reloads on
        // SIGHUP.
        Command::Daemon(_) => true,
        // `profile measure` stops its program and removes its group.
        Command::Profile(profile_cmd::ProfileCommand::Measure(_)) => true,
        // `sweep` becomes the Python command, which handles Ctrl-C itself.
        Command::Sweep(_) => true,
        _ => false,
    };
    if !capture {
        if let Err(e) = interrupt::install() {
            eprintln!("error: {}", report::render(&e));
            std::process::exit(1);
        }
    }
    let result = match cli.command {
        Command::Profile(cmd) => profile_cmd::run(cmd),
        Command::Trace(cmd) => trace_cmd::run(cmd),
        Command::Curves(args) => curves_cmd::run(args),
        Command::Sim(cmd) => sim_cmd::run(cmd),
        Command::Platform(cmd) => platform_cmd::run(cmd),
        Command::Experiment(cmd) => experiment_cmd::run(cmd),
        Command::Rdt(cmd) => rdt_cmd::run(cmd),
        Command::Doctor(args) => doctor_cmd::run(args),
        Command::Run(args) => run_cmd::run(args),
        Command::Daemon(args) => daemon_cmd::run(args),
        Command::Sweep(args) => sweep_cmd::run(args),
        Command::Algorithms => {
            for a in cachepart::Algorithm::all_names() {
                println!("{a}");
            }
            Ok(())
        }
    };
    if let Err(e) = result {
        eprintln!("error: {}", report::render(&e));
        std::process::exit(1);
    }
}
