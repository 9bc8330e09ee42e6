//! Plain directory trees shaped like a resctrl mount, `/proc` and `/sys`,
//! for tests and development. The resctrl trees are those of the
//! [`Preset`]s (numbers in [`crate::preset`]): a Skylake server (11-way
//! L3, 16 CLOSIDs, MB in percent with granularity 10, 224 RMIDs), a
//! CDP-capable part (L3CODE/L3DATA) and an AMD part (16-way sparse masks,
//! absolute MB).
//!
//! A plain directory cannot refuse a write as the kernel does; these trees
//! check what cachepart writes and reads, not the kernel's write-time
//! behaviour.

use crate::emulate::controls::Controls;
use crate::preset::RdtPlatform;
use crate::resctrl::{Capabilities, Resource};
use cachepart_units::Kind as _;
use std::fs;
use std::io;
use std::path::Path;

pub use crate::preset::Preset;

fn w(path: &Path, text: &str) -> io::Result<()> {
    if let Some(p) = path.parent() {
        fs::create_dir_all(p)?;
    }
    fs::write(path, text)
}

/// Populates `mount` like a freshly mounted resctrl of `preset`: the
/// `info/` files, the default group's full masks and bandwidth, and empty
/// monitoring data for each domain.
pub fn resctrl(mount: &Path, preset: Preset) -> io::Result<()> {
    let platform = RdtPlatform::of(preset);
    let info = mount.join("info");
    for (path, text) in platform.info_files() {
        w(&info.join(path), &text)?;
    }
    w(&info.join("last_cmd_status"), "ok\n")?;
    w(
        &mount.join("schemata"),
        &Controls::default_for(&platform).show(&platform),
    )?;
    w(&mount.join("tasks"), "")?;
    w(&mount.join("cpus"), "ffff\n")?;
    w(&mount.join("mode"), "shareable\n")?;
    fs::create_dir_all(mount.join("mon_groups"))?;
    for d in &platform.domains {
        mon_domain(mount, *d)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn read(root: &Path, p: &str) -> String {
        fs::read_to_string(root.join(p)).unwrap()
    }

    /// The trees hold what the kernel shows on these parts, written out
    /// here by hand (the numbers themselves live in `crate::preset`).
    #[test]
    fn trees_hold_the_kernels_files() {
        let t = tempfile::tempdir().unwrap();
        let sky = t.path().join("sky");
        resctrl(&sky, Preset::Skylake).unwrap();
        assert_eq!(
            read(&sky, "schemata"),
            "    L3:0=7ff;1=7ff\n    MB:0=100;1=100\n"
        );
        assert_eq!(read(&sky, "info/L3/cbm_mask"), "7ff\n");
        assert_eq!(read(&sky, "info/L3/min_cbm_bits"), "1\n");
        assert_eq!(read(&sky, "info/MB/bandwidth_gran"), "10\n");
        assert_eq!(read(&sky, "info/L3_MON/num_rmids"), "224\n");
        assert_eq!(read(&sky, "mon_data/mon_L3_01/llc_occupancy"), "0\n");
        let cdp = t.path().join("cdp");
        resctrl(&cdp, Preset::Cdp).unwrap();
        assert_eq!(
            read(&cdp, "schemata"),
            "L3CODE:0=7ff;1=7ff\nL3DATA:0=7ff;1=7ff\n    MB:0=100;1=100\n"
        );
        assert_eq!(read(&cdp, "info/L3DATA/num_closids"), "8\n");
        assert!(!cdp.join("info/L3").exists());
        let amd = t.path().join("amd");
        resctrl(&amd, Preset::Amd).unwrap();
        assert_eq!(
            read(&amd, "schemata"),
            "    L3:0=ffff;1=ffff\n    MB:0=2048;1=2048\n"
        );
        assert_eq!(read(&amd, "info/L3/sparse_masks"), "1\n");
        assert_eq!(read(&amd, "info/L3/min_cbm_bits"), "0\n");
        assert_eq!(read(&amd, "info/MB/delay_linear"), "0\n");
        assert_eq!(read(&amd, "info/L3_MON/num_rmids"), "256\n");
    }
}
