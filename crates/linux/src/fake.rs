//! Plain directory trees shaped like a resctrl mount, `/proc` and `/sys`,
//! for tests and development: a Skylake server (11-way L3, 16 CLOSIDs, MB
//! in percent with granularity 10, 224 RMIDs), a CDP-capable part
//! (L3CODE/L3DATA) and an AMD part (16-way sparse masks, absolute MB).
//!
//! A plain directory cannot refuse a write as the kernel does; these trees
//! check what cachepart writes and reads, not the kernel's write-time
//! behaviour.

use crate::resctrl::{Capabilities, Resource};
use std::fs;
use std::io;
use std::path::Path;

/// A platform to model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// Intel Skylake server: 2 L3 domains, 11 ways (7ff), min 1 bit, 16
    /// CLOSIDs, MB gran 10 / min 10, L3_MON with 224 RMIDs.
    Skylake,
    /// Skylake with CDP on: L3CODE and L3DATA, 8 CLOSIDs.
    Cdp,
    /// AMD: 16 ways (ffff), sparse masks, min 0 bits, MB in 1/8 GB/s up to
    /// 2048, 16 CLOSIDs, 256 RMIDs.
    Amd,
}

impl Preset {
    /// Every preset with its name.
    pub const ALL: [(&'static str, Preset); 3] = [
        ("skylake", Preset::Skylake),
        ("cdp", Preset::Cdp),
        ("amd", Preset::Amd),
    ];
}

fn w(path: &Path, text: &str) -> io::Result<()> {
    if let Some(p) = path.parent() {
        fs::create_dir_all(p)?;
    }
    fs::write(path, text)
}

fn cache(
    info: &Path,
    name: &str,
    mask: &str,
    min: u32,
    closids: u32,
    sparse: bool,
) -> io::Result<()> {
    let d = info.join(name);
    w(&d.join("cbm_mask"), &format!("{mask}\n"))?;
    w(&d.join("min_cbm_bits"), &format!("{min}\n"))?;
    w(&d.join("num_closids"), &format!("{closids}\n"))?;
    w(&d.join("shareable_bits"), "0\n")?;
    w(&d.join("sparse_masks"), if sparse { "1\n" } else { "0\n" })
}

/// Populates `mount` like a freshly mounted resctrl of `preset`.
pub fn resctrl(mount: &Path, preset: Preset) -> io::Result<()> {
    let info = mount.join("info");
    let (schemata, rmids) = match preset {
        Preset::Skylake => {
            cache(&info, "L3", "7ff", 1, 16, false)?;
            ("    L3:0=7ff;1=7ff\n    MB:0=100;1=100\n", 224)
        }
        Preset::Cdp => {
            cache(&info, "L3CODE", "7ff", 1, 8, false)?;
            cache(&info, "L3DATA", "7ff", 1, 8, false)?;
            (
                "L3CODE:0=7ff;1=7ff\nL3DATA:0=7ff;1=7ff\n    MB:0=100;1=100\n",
                224,
            )
        }
        Preset::Amd => {
            cache(&info, "L3", "ffff", 0, 16, true)?;
            ("    L3:0=ffff;1=ffff\n    MB:0=2048;1=2048\n", 256)
        }
    };
    let (gran, min, linear, closids) = match preset {
        Preset::Amd => (1, 0, 0, 16),
        Preset::Cdp => (10, 10, 1, 8),
        Preset::Skylake => (10, 10, 1, 16),
    };
    let mb = info.join("MB");
    w(&mb.join("bandwidth_gran"), &format!("{gran}\n"))?;
    w(&mb.join("min_bandwidth"), &format!("{min}\n"))?;
    w(&mb.join("delay_linear"), &format!("{linear}\n"))?;
    w(&mb.join("num_closids"), &format!("{closids}\n"))?;
    let mon = info.join("L3_MON");
    w(&mon.join("num_rmids"), &format!("{rmids}\n"))?;
    w(
        &mon.join("mon_features"),
        "llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n",
    )?;
    w(&info.join("last_cmd_status"), "ok\n")?;
    w(&mount.join("schemata"), schemata)?;
    w(&mount.join("tasks"), "")?;
    w(&mount.join("cpus"), "ffff\n")?;
    w(&mount.join("mode"), "shareable\n")?;
    fs::create_dir_all(mount.join("mon_groups"))?;
    for d in 0..2 {
        mon_domain(mount, d)?;
    }
    Ok(())
}

fn mon_domain(group: &Path, id: u32) -> io::Result<()> {
    let d = group.join("mon_data").join(format!("mon_L3_{id:02}"));
    w(&d.join("llc_occupancy"), "0\n")?;
    w(&d.join("mbm_total_bytes"), "0\n")?;
    w(&d.join("mbm_local_bytes"), "0\n")
}

/// Creates the files the kernel gives a new group: `schemata` (the full
/// masks and bandwidth), `tasks`, `cpus`, `mode`, `mon_data/`, and for a
/// control group `mon_groups/`.
pub fn populate_group(dir: &Path, caps: &Capabilities, mon: bool) -> io::Result<()> {
    if !mon {
        let mut text = String::new();
        for (r, ids) in &caps.domains {
            let value = if r.is_cache() {
                caps.caches
                    .get(r)
                    .map(|c| c.cbm_mask.to_string())
                    .unwrap_or_default()
            } else {
                caps.mb
                    .as_ref()
                    .map(|m| m.max().to_string())
                    .unwrap_or_default()
            };
            let doms: Vec<String> = ids.iter().map(|i| format!("{i}={value}")).collect();
            text.push_str(&format!("{}:{}\n", r.name(), doms.join(";")));
        }
        w(&dir.join("schemata"), &text)?;
        w(&dir.join("mode"), "shareable\n")?;
        fs::create_dir_all(dir.join("mon_groups"))?;
    }
    w(&dir.join("tasks"), "")?;
    w(&dir.join("cpus"), "0\n")?;
    if caps.mon.is_some() {
        for id in caps
            .domains
            .get(&Resource::L3)
            .or(caps.domains.get(&Resource::L3Code))
            .into_iter()
            .flatten()
        {
            mon_domain(dir, *id)?;
        }
    }
    Ok(())
}

/// Adds process `pid` with threads `tids` and command name `comm` to a
/// fake `/proc`.
pub fn process(proc_root: &Path, pid: u32, comm: &str, tids: &[u32]) -> io::Result<()> {
    let p = proc_root.join(pid.to_string());
    w(&p.join("comm"), &format!("{comm}\n"))?;
    for t in tids {
        fs::create_dir_all(p.join("task").join(t.to_string()))?;
    }
    Ok(())
}

/// A fake `/proc` of a machine with (`supported`) or without RDT: the
/// `cpuinfo` flags, `mounts` (resctrl mounted at `resctrl_mount` when
/// supported), `filesystems` and `sys/kernel/osrelease`.
pub fn proc_tree(proc_root: &Path, supported: bool, resctrl_mount: &Path) -> io::Result<()> {
    let flags = if supported {
        "fpu sse2 rdt_a cat_l3 cdp_l3 mba cqm cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local"
    } else {
        "fpu sse2 hypervisor"
    };
    w(
        &proc_root.join("cpuinfo"),
        &format!("processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: {flags}\n\n"),
    )?;
    let mut mounts = "proc /proc proc rw 0 0\n".to_string();
    if supported {
        mounts.push_str(&format!(
            "resctrl {} resctrl rw,relatime 0 0\n",
            resctrl_mount.display()
        ));
    }
    w(&proc_root.join("mounts"), &mounts)?;
    let fss = if supported {
        "nodev\tproc\nnodev\tresctrl\n"
    } else {
        "nodev\tproc\n"
    };
    w(&proc_root.join("filesystems"), fss)?;
    w(&proc_root.join("sys/kernel/osrelease"), "6.1.0-fake\n")
}

/// A fake MSR device for `cpus` CPUs under `dev_root`: a sparse file
/// `cpu/N/msr` per CPU, read and written at MSR offsets like the kernel's,
/// holding `values` (MSR, value) and zero elsewhere.
pub fn msr_device(dev_root: &Path, cpus: u32, values: &[(u32, u64)]) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    for cpu in 0..cpus {
        let p = dev_root.join(format!("cpu/{cpu}/msr"));
        w(&p, "")?;
        let f = fs::OpenOptions::new().write(true).open(&p)?;
        f.set_len(0x1000)?;
        for (msr, v) in values {
            f.write_all_at(&v.to_le_bytes(), u64::from(*msr))?;
        }
    }
    Ok(())
}

/// A fake `/sys/devices/system/cpu` with `cpus` CPUs sharing one L3 of
/// `l3_bytes` bytes, `ways` ways and 64-byte lines (each CPU with its own
/// L1d and L2, as `cache/index0..3` lists them), and a perf PMU when `pmu`.
pub fn sys_tree(sys_root: &Path, cpus: u32, l3_bytes: u64, ways: u32, pmu: bool) -> io::Result<()> {
    for cpu in 0..cpus {
        let base = sys_root.join(format!("devices/system/cpu/cpu{cpu}/cache"));
        let levels = [
            (1, "Data", 32 * 1024, 8),
            (1, "Instruction", 32 * 1024, 8),
            (2, "Unified", 1024 * 1024, 16),
            (3, "Unified", l3_bytes, ways),
        ];
        for (i, (level, kind, size, w_)) in levels.into_iter().enumerate() {
            let d = base.join(format!("index{i}"));
            w(&d.join("level"), &format!("{level}\n"))?;
            w(&d.join("type"), &format!("{kind}\n"))?;
            w(&d.join("size"), &format!("{}K\n", size / 1024))?;
            w(&d.join("ways_of_associativity"), &format!("{w_}\n"))?;
            w(&d.join("coherency_line_size"), "64\n")?;
            let shared = if level == 3 {
                format!("0-{}\n", cpus - 1)
            } else {
                format!("{cpu}\n")
            };
            w(&d.join("shared_cpu_list"), &shared)?;
        }
    }
    if pmu {
        fs::create_dir_all(sys_root.join("bus/event_source/devices/cpu"))?;
    }
    Ok(())
}
