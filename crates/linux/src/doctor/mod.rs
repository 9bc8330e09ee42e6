//! `cachepart doctor`: what this machine supports for cache and bandwidth
//! management and, for each thing it lacks, the fix.
//!
//! Every check reads under a root ([`Roots`]) so tests point it at fake
//! trees. A check is [`Status::Ok`], [`Status::Missing`] (cachepart's
//! resctrl features cannot work without it), or [`Status::Optional`]
//! (a feature that needs it is unavailable: monitoring, MBA, perf counters,
//! MSR throttling).

use crate::resctrl::{mount, Capabilities};
use std::fmt;
use std::path::{Path, PathBuf};

/// Where the kernel interfaces are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Roots {
    /// `/proc`.
    pub proc_root: PathBuf,
    /// `/sys`.
    pub sys: PathBuf,
    /// `/dev`.
    pub dev: PathBuf,
    /// `/boot` (kernel configs).
    pub boot: PathBuf,
    /// Where to look for resctrl when `/proc/mounts` lists none mounted.
    pub resctrl: PathBuf,
}

impl Default for Roots {
    fn default() -> Self {
        Roots {
            proc_root: "/proc".into(),
            sys: "/sys".into(),
            dev: "/dev".into(),
            boot: "/boot".into(),
            resctrl: crate::resctrl::DEFAULT_MOUNT.into(),
        }
    }
}

/// The outcome of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Present.
    Ok,
    /// Absent, and resctrl management needs it.
    Missing,
    /// Absent; only an optional feature needs it.
    Optional,
    /// Could not be determined.
    Unknown,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Status::Ok => "ok",
            Status::Missing => "MISSING",
            Status::Optional => "absent",
            Status::Unknown => "unknown",
        })
    }
}

/// One line of the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// What was checked (`cpu flag cat_l3`).
    pub name: String,
    /// The outcome.
    pub status: Status,
    /// What was found.
    pub detail: String,
    /// What to do about it (empty when ok).
    pub fix: String,
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:<8} {:<26} {}", self.status, self.name, self.detail)?;
        if !self.fix.is_empty() {
            write!(f, " -> fix: {}", self.fix)?;
        }
        Ok(())
    }
}

/// The whole report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The checks, in order.
    pub checks: Vec<Check>,
}

impl Report {
    /// True when nothing needed is missing.
    pub fn ready(&self) -> bool {
        self.checks.iter().all(|c| c.status != Status::Missing)
    }
}

/// The CPU flags checked, whether resctrl management needs each, and what it gives.
const FLAGS: [(&str, bool, &str); 8] = [
    ("rdt_a", true, "RDT allocation"),
    ("cat_l3", true, "L3 cache allocation (CAT)"),
    ("cdp_l3", false, "L3 code/data prioritization"),
    ("mba", false, "memory bandwidth allocation"),
    ("cqm_llc", false, "LLC monitoring"),
    ("cqm_occup_llc", false, "LLC occupancy"),
    ("cqm_mbm_total", false, "total memory bandwidth monitoring"),
    ("cqm_mbm_local", false, "local memory bandwidth monitoring"),
];

fn check(name: &str, status: Status, detail: impl Into<String>, fix: impl Into<String>) -> Check {
    Check {
        name: name.into(),
        status,
        detail: detail.into(),
        fix: if status == Status::Ok {
            String::new()
        } else {
            fix.into()
        },
    }
}

/// The CPU flag checks; whether the CPU is virtual (the `hypervisor` flag).
fn cpu_flags(roots: &Roots, out: &mut Vec<Check>) -> bool {
    let path = roots.proc_root.join("cpuinfo");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            out.push(check(
                "cpu flags",
                Status::Unknown,
                format!("{}: {e}", path.display()),
                "run on Linux with /proc mounted",
            ));
            return false;
        }
    };
    let flags: Vec<&str> = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("flags")
                .and_then(|r| r.split_once(':'))
                .map(|(_, f)| f)
        })
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let virt = flags.contains(&"hypervisor");
    for (flag, needed, what) in FLAGS {
        let here = flags.contains(&flag);
        let status = match (here, needed) {
            (true, _) => Status::Ok,
            (false, true) => Status::Missing,
            (false, false) => Status::Optional,
        };
        let fix = if virt {
            "this is a virtual CPU: use a host, or a hypervisor that passes RDT through"
        } else {
            "the CPU lacks it: use a part with Intel RDT or AMD PQoS"
        };
        out.push(check(
            &format!("cpu flag {flag}"),
            status,
            if here {
                what.to_string()
            } else {
                format!("no {what} in /proc/cpuinfo")
            },
            fix,
        ));
    }
    virt
}

/// The kernel's config: `/proc/config.gz`, else `/boot/config-RELEASE`.
fn kernel_config_text(roots: &Roots) -> KernelConfig {
    use std::io::Read;
    let gz = roots.proc_root.join("config.gz");
    if let Ok(f) = std::fs::File::open(&gz) {
        let mut text = String::new();
        if flate2::read::GzDecoder::new(f)
            .read_to_string(&mut text)
            .is_ok()
        {
            return Ok((gz, text));
        }
    }
    let release = std::fs::read_to_string(roots.proc_root.join("sys/kernel/osrelease"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let path = roots.boot.join(format!("config-{release}"));
    match std::fs::read_to_string(&path) {
        Ok(t) => Ok((path, t)),
        Err(_) => Err(format!(
            "neither {} nor {} readable",
            gz.display(),
            path.display()
        )),
    }
}

/// The kernel's config as read once for every check: its path and text,
/// or why neither was readable.
type KernelConfig = std::result::Result<(PathBuf, String), String>;

fn kernel_config(config: &KernelConfig, out: &mut Vec<Check>) {
    let name = "kernel CONFIG_X86_CPU_RESCTRL";
    match config {
        Ok((path, t)) if config_value(t, "CONFIG_X86_CPU_RESCTRL") == Some("y") => out.push(check(
            name,
            Status::Ok,
            format!("=y in {}", path.display()),
            "",
        )),
        Ok((path, _)) => out.push(check(
            name,
            Status::Missing,
            format!("not set in {}", path.display()),
            "build the kernel with CONFIG_X86_CPU_RESCTRL=y",
        )),
        Err(why) => out.push(check(
            name,
            Status::Unknown,
            why.as_str(),
            "check your distribution's kernel config (modprobe configs gives /proc/config.gz)",
        )),
    }
}

fn resctrl(roots: &Roots, out: &mut Vec<Check>) {
    let fs_known = std::fs::read_to_string(roots.proc_root.join("filesystems"))
        .map(|t| {
            t.lines()
                .any(|l| l.split_whitespace().last() == Some("resctrl"))
        })
        .unwrap_or(false);
    out.push(check(
        "resctrl filesystem",
        if fs_known {
            Status::Ok
        } else {
            Status::Missing
        },
        if fs_known {
            "listed in /proc/filesystems (mountable)"
        } else {
            "not in /proc/filesystems: the kernel cannot mount resctrl"
        },
        "a kernel with CONFIG_X86_CPU_RESCTRL on a CPU with RDT",
    ));
    let mounted = mount::find(&roots.proc_root).ok().flatten();
    let Some(m) = mounted else {
        out.push(check(
            "resctrl mount",
            Status::Missing,
            "not mounted (no resctrl in /proc/mounts)",
            if fs_known {
                "mount -t resctrl resctrl /sys/fs/resctrl"
            } else {
                // a mount would fail: the kernel is the fix (the line above)
                "none on this kernel (see resctrl filesystem); then mount -t resctrl resctrl /sys/fs/resctrl"
            },
        ));
        return;
    };
    out.push(check(
        "resctrl mount",
        Status::Ok,
        format!("{} ({})", m.path.display(), m.options.join(",")),
        "",
    ));
    // The mount point in /proc/mounts is absolute; tests put it under a
    // temporary directory, so it is used as listed.
    let path: &Path = if m.path.join("info").is_dir() {
        &m.path
    } else {
        &roots.resctrl
    };
    match Capabilities::read(path, m.has("mba_MBps")) {
        Ok(c) => {
            let closids = c.num_closids();
            out.push(check(
                "resctrl info/",
                Status::Ok,
                format!("{}; {closids} CLOSIDs", c.resource_names()),
                "",
            ));
            out.push(check(
                "resctrl monitoring",
                if c.mon.is_some() {
                    Status::Ok
                } else {
                    Status::Optional
                },
                match &c.mon {
                    Some(m) => format!("{} RMIDs: {}", m.num_rmids, m.mon_features.join(" ")),
                    None => "no info/L3_MON".into(),
                },
                "a CPU with CMT/MBM (cqm_* flags)",
            ));
        }
        Err(e) => out.push(check(
            "resctrl info/",
            Status::Missing,
            e.to_string(),
            "remount resctrl; check dmesg for resctrl errors",
        )),
    }
}

fn pmu(roots: &Roots, virt: bool, out: &mut Vec<Check>) {
    let base = roots.sys.join("bus/event_source/devices");
    let found = ["cpu", "cpu_core"]
        .into_iter()
        .find(|d| base.join(d).is_dir());
    out.push(check(
        "perf PMU",
        if found.is_some() { Status::Ok } else { Status::Optional },
        match found {
            Some(d) => format!("{}", base.join(d).display()),
            None => format!("no {}/cpu or cpu_core: no hardware counters", base.display()),
        },
        if virt {
            "this is a virtual CPU whose hypervisor exposes no PMU: use a host, or a hypervisor with a virtual PMU; perf counters are needed for IPC and misses"
        } else {
            "a host CPU with its PMU exposed (virtual CPUs often have none); perf counters are needed for IPC and misses"
        },
    ));
}

/// A kernel config option's value (`y`, `m`, a number or a string);
/// `None` when the config lists it as not set or not at all.
fn config_value<'a>(config: &'a str, option: &str) -> Option<&'a str> {
    config.lines().find_map(|l| {
        let (k, v) = l.trim().split_once('=')?;
        (k == option).then_some(v)
    })
}

fn msr(roots: &Roots, config: &KernelConfig, out: &mut Vec<Check>) {
    const WHY: &str = " (needed only for duty-cycle and prefetcher throttling)";
    let p = roots.dev.join("cpu/0/msr");
    if p.exists() {
        out.push(check("msr device", Status::Ok, p.display().to_string(), ""));
        return;
    }
    // The fix depends on how the kernel was built: `modprobe msr` only
    // helps where the driver is a module.
    let (detail, fix) = match config {
        Ok((path, t)) => match config_value(t, "CONFIG_X86_MSR") {
            Some("y") => (
                format!(
                    "no {}, though CONFIG_X86_MSR=y in {}",
                    p.display(),
                    path.display()
                ),
                "the driver is built in: mount devtmpfs on /dev",
            ),
            Some("m") => (
                format!(
                    "no {} (CONFIG_X86_MSR=m in {}: the module is not loaded)",
                    p.display(),
                    path.display()
                ),
                "modprobe msr",
            ),
            _ => (
                format!(
                    "no {}; CONFIG_X86_MSR not set in {}: this kernel has no msr driver",
                    p.display(),
                    path.display()
                ),
                "a kernel built with CONFIG_X86_MSR=y or =m",
            ),
        },
        Err(_) => (format!("no {}", p.display()), "modprobe msr"),
    };
    out.push(check(
        "msr device",
        Status::Optional,
        detail,
        format!("{fix}{WHY}"),
    ));
}

/// Runs every check.
pub fn diagnose(roots: &Roots) -> Report {
    let mut checks = Vec::new();
    let virt = cpu_flags(roots, &mut checks);
    let config = kernel_config_text(roots);
    kernel_config(&config, &mut checks);
    resctrl(roots, &mut checks);
    pmu(roots, virt, &mut checks);
    msr(roots, &config, &mut checks);
    Report { checks }
}

#[cfg(test)]
mod tests;
