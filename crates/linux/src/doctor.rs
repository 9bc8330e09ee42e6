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

fn cpu_flags(roots: &Roots, out: &mut Vec<Check>) {
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
            return;
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
}

/// The kernel's config: `/proc/config.gz`, else `/boot/config-RELEASE`.
fn kernel_config_text(roots: &Roots) -> std::result::Result<(PathBuf, String), String> {
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

fn kernel_config(roots: &Roots, out: &mut Vec<Check>) {
    let name = "kernel CONFIG_X86_CPU_RESCTRL";
    match kernel_config_text(roots) {
        Ok((path, t)) if t.lines().any(|l| l.trim() == "CONFIG_X86_CPU_RESCTRL=y") => out.push(
            check(name, Status::Ok, format!("=y in {}", path.display()), ""),
        ),
        Ok((path, _)) => out.push(check(
            name,
            Status::Missing,
            format!("not set in {}", path.display()),
            "build the kernel with CONFIG_X86_CPU_RESCTRL=y",
        )),
        Err(why) => out.push(check(
            name,
            Status::Unknown,
            why,
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
            "mount -t resctrl resctrl /sys/fs/resctrl",
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

fn pmu(roots: &Roots, out: &mut Vec<Check>) {
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
        "a host CPU with its PMU exposed (virtual CPUs often have none); perf counters are needed for IPC and misses",
    ));
}

fn msr(roots: &Roots, out: &mut Vec<Check>) {
    let p = roots.dev.join("cpu/0/msr");
    let here = p.exists();
    out.push(check(
        "msr device",
        if here { Status::Ok } else { Status::Optional },
        if here {
            p.display().to_string()
        } else {
            format!("no {}", p.display())
        },
        "modprobe msr (needed only for duty-cycle and prefetcher throttling)",
    ));
}

/// Runs every check.
pub fn diagnose(roots: &Roots) -> Report {
    let mut checks = Vec::new();
    cpu_flags(roots, &mut checks);
    kernel_config(roots, &mut checks);
    resctrl(roots, &mut checks);
    pmu(roots, &mut checks);
    msr(roots, &mut checks);
    Report { checks }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake;

    fn roots(t: &Path) -> Roots {
        Roots {
            proc_root: t.join("proc"),
            sys: t.join("sys"),
            dev: t.join("dev"),
            boot: t.join("boot"),
            resctrl: t.join("resctrl"),
        }
    }

    fn line<'a>(r: &'a Report, name: &str) -> &'a Check {
        r.checks.iter().find(|c| c.name == name).unwrap()
    }

    #[test]
    fn unsupported_machine_says_what_is_missing() {
        let t = tempfile::tempdir().unwrap();
        let r = roots(t.path());
        fake::proc_tree(&r.proc_root, false, &r.resctrl).unwrap();
        let rep = diagnose(&r);
        assert!(!rep.ready());
        let cat = line(&rep, "cpu flag cat_l3");
        assert_eq!(cat.status, Status::Missing);
        assert!(cat.fix.contains("virtual CPU"), "{cat}");
        assert_eq!(line(&rep, "resctrl mount").status, Status::Missing);
        assert_eq!(line(&rep, "resctrl filesystem").status, Status::Missing);
        let pmu = line(&rep, "perf PMU");
        assert_eq!(pmu.status, Status::Optional);
        assert!(pmu.detail.contains("no hardware counters"), "{pmu}");
        assert_eq!(line(&rep, "msr device").status, Status::Optional);
        assert_eq!(
            line(&rep, "kernel CONFIG_X86_CPU_RESCTRL").status,
            Status::Unknown
        );
    }

    #[test]
    fn supported_machine_is_ready() {
        let t = tempfile::tempdir().unwrap();
        let r = roots(t.path());
        fake::proc_tree(&r.proc_root, true, &r.resctrl).unwrap();
        fake::resctrl(&r.resctrl, fake::Preset::Skylake).unwrap();
        std::fs::create_dir_all(r.sys.join("bus/event_source/devices/cpu")).unwrap();
        std::fs::create_dir_all(r.dev.join("cpu/0")).unwrap();
        std::fs::write(r.dev.join("cpu/0/msr"), "").unwrap();
        std::fs::create_dir_all(&r.boot).unwrap();
        std::fs::write(
            r.boot.join("config-6.1.0-fake"),
            "CONFIG_X86_CPU_RESCTRL=y\n",
        )
        .unwrap();
        let rep = diagnose(&r);
        assert!(rep.ready(), "{:#?}", rep);
        assert!(
            rep.checks.iter().all(|c| c.status == Status::Ok),
            "{:#?}",
            rep
        );
        assert_eq!(
            line(&rep, "resctrl info/").detail,
            "L3, MB, L3_MON; 16 CLOSIDs"
        );
        assert!(line(&rep, "resctrl monitoring")
            .detail
            .starts_with("224 RMIDs"));
    }
}
