//! `cachepart daemon CONFIG.toml`: glue over `cachepart::daemon`. It
//! registers the signals before anything else (SIGHUP would otherwise end
//! the process) and runs the loop (its log on stderr, or appended to
//! `--log FILE`) until SIGINT or SIGTERM, after which the groups are gone
//! and the command exits 0.

use anyhow::{Context, Result};
use cachepart::daemon::{run_daemon, DaemonOptions, Requests};
use cachepart::linux::doctor::Roots;
use cachepart::linux::resctrl::{mount, DEFAULT_MOUNT};
use clap::Args;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::path::PathBuf;
use std::sync::Arc;

/// `cachepart daemon`
#[derive(Args)]
pub struct DaemonArgs {
    /// The configuration (TOML: policy, interval, metrics, [[target]] name
    /// with pid, comm or cgroup, and profile). SIGHUP re-reads it.
    config: PathBuf,
    /// Append the log (one JSON object per line) to this file instead of
    /// stderr.
    #[arg(long)]
    log: Option<PathBuf>,
    /// The resctrl mount (default: the one in /proc/mounts, else /sys/fs/resctrl).
    #[arg(long)]
    resctrl: Option<PathBuf>,
    /// The resctrl mount is a plain directory tree laid out like one (tests).
    #[arg(long)]
    resctrl_plain: bool,
    /// The cgroup v2 root that targets' cgroup paths start from.
    #[arg(long, default_value = "/sys/fs/cgroup")]
    cgroup_root: PathBuf,
    /// Where /proc is.
    #[arg(long, default_value = "/proc")]
    proc_root: PathBuf,
    /// Where /sys is.
    #[arg(long, default_value = "/sys")]
    sys_root: PathBuf,
    /// Where /dev is.
    #[arg(long, default_value = "/dev")]
    dev_root: PathBuf,
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
    let resctrl = match args.resctrl {
        Some(p) => p,
        None => mount::find(&args.proc_root)
            .ok()
            .flatten()
            .map_or(PathBuf::from(DEFAULT_MOUNT), |m| m.path),
    };
    let opts = DaemonOptions {
        config: args.config,
        roots: Roots {
            proc_root: args.proc_root,
            sys: args.sys_root,
            dev: args.dev_root,
            boot: "/boot".into(),
            resctrl,
        },
        plain_resctrl: args.resctrl_plain,
        cgroup_root: args.cgroup_root,
        log: args.log,
    };
    run_daemon(&opts, &requests)?;
    Ok(())
}
