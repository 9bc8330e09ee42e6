//! `cachepart doctor`: what this machine supports for cache management
//! and, for each thing it lacks, the fix.
//!
//! Exit status: 0 when everything resctrl management needs is there, 2
//! when something it needs is missing (a `MISSING` line). Absent optional
//! features (monitoring, MBA, perf counters, the MSR device) are listed
//! but do not change the status.

use anyhow::Result;
use cachepart::linux::doctor::{diagnose, Roots};
use clap::Args;
use std::path::PathBuf;

/// Exit status when something needed is missing.
pub const EXIT_MISSING: i32 = 2;

/// `cachepart doctor`
#[derive(Args)]
pub struct DoctorArgs {
    /// Where /proc is (for tests and containers).
    #[arg(long, default_value = "/proc")]
    proc_root: PathBuf,
    /// Where /sys is.
    #[arg(long, default_value = "/sys")]
    sys_root: PathBuf,
    /// Where /dev is.
    #[arg(long, default_value = "/dev")]
    dev_root: PathBuf,
    /// Where the kernel configs (config-RELEASE) are.
    #[arg(long, default_value = "/boot")]
    boot_root: PathBuf,
    /// The resctrl mount to read when /proc/mounts names none.
    #[arg(long, default_value = "/sys/fs/resctrl")]
    resctrl: PathBuf,
}

/// Runs `doctor`: prints one line per check; exits with
/// [`EXIT_MISSING`] when something needed is missing.
pub fn run(args: DoctorArgs) -> Result<()> {
    let roots = Roots {
        proc_root: args.proc_root,
        sys: args.sys_root,
        dev: args.dev_root,
        boot: args.boot_root,
        resctrl: args.resctrl,
    };
    let report = diagnose(&roots);
    for c in &report.checks {
        println!("{c}");
    }
    if report.ready() {
        println!("ready: resctrl cache management can run here");
        Ok(())
    } else {
        println!("not ready: cachepart cannot manage this machine's cache (MISSING lines above)");
        std::process::exit(EXIT_MISSING);
    }
}
