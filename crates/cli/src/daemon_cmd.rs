//! `cachepart daemon CONFIG.toml`: glue over `cachepart::linux::daemon`. It
//! registers the signals before anything else (SIGHUP would otherwise end
//! the process) and runs the loop (its log on stderr, or appended to
//! `--log FILE`) until SIGINT or SIGTERM, after which the groups are gone
//! and the command exits 0.

use crate::common_args::HostArgs;
use anyhow::{Context, Result};
use cachepart::linux::daemon::{run_daemon, DaemonOptions, Requests};
use clap::Args;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::path::PathBuf;
use std::sync::Arc;

/// `cachepart daemon`
#[derive(Args)]
pub struct DaemonArgs {
    /// The configuration (TOML: policy, interval, metrics, [[target]] name
    /// with pid, comm or cgroup, and profile; an online controller's
    /// section). SIGHUP re-reads it.
    config: PathBuf,
    /// Append the log (one JSON object per line) to this file instead of
    /// stderr.
    #[arg(long)]
    log: Option<PathBuf>,
    #[command(flatten)]
    host: HostArgs,
    /// The cgroup v2 root that targets' cgroup paths start from.
    #[arg(long, default_value = "/sys/fs/cgroup")]
    cgroup_root: PathBuf,
    /// An online controller's counters scripted in place of perf
    /// (machines without a PMU, tests).
    #[arg(long)]
    fake_counters: bool,
    /// An online controller's counters from this profile table (PBBCache
    /// metrics CSV) in place of perf: each process at its target's
    /// profile row for the ways its plan gives it.
    #[arg(long, value_name = "TABLE")]
    fake_counters_from: Option<PathBuf>,
}

/// Runs `cachepart daemon`.
pub fn run(args: DaemonArgs) -> Result<()> {
    let requests = Arc::new(Requests::default());
    for sig in [SIGINT, SIGTERM] {
        let r = Arc::clone(&requests);
        // SAFETY: the handler only stores into an atomic.
        unsafe {
            signal_hook::low_level::register(sig, move || {
                r.stop.store(sig, std::sync::atomic::Ordering::Relaxed)
            })
        }
        .context("installing the SIGINT/SIGTERM handler")?;
    }
    let r = Arc::clone(&requests);
    // SAFETY: as above.
    unsafe {
        signal_hook::low_level::register(SIGHUP, move || {
            r.reload.store(true, std::sync::atomic::Ordering::Relaxed)
        })
    }
    .context("installing the SIGHUP handler")?;
    let opts = DaemonOptions {
        config: args.config,
        roots: args.host.roots(),
        plain_resctrl: args.host.resctrl_plain,
        cgroup_root: args.cgroup_root,
        log: args.log,
        fake_counters: args.fake_counters,
        fake_table: args.fake_counters_from,
    };
    run_daemon(&opts, &requests)?;
    Ok(())
}
