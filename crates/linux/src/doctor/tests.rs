//! Tests of the doctor's checks on fake trees.

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
    let mount = line(&rep, "resctrl mount");
    assert_eq!(mount.status, Status::Missing);
    // the kernel cannot mount it: mounting is not the fix
    assert!(mount.fix.starts_with("none on this kernel"), "{mount}");
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
fn msr_fix_follows_the_kernel_config() {
    let t = tempfile::tempdir().unwrap();
    let r = roots(t.path());
    fake::proc_tree(&r.proc_root, false, &r.resctrl).unwrap();
    // no config readable: the usual fix
    let m = line(&diagnose(&r), "msr device").clone();
    assert_eq!(
        m.fix,
        "modprobe msr (needed only for duty-cycle and prefetcher throttling)"
    );
    std::fs::create_dir_all(&r.boot).unwrap();
    let cfg = r.boot.join("config-6.1.0-fake");
    for (config, detail, fix) in [
        (
            "CONFIG_X86_MSR=m\n",
            "CONFIG_X86_MSR=m in",
            "modprobe msr (",
        ),
        (
            "# CONFIG_X86_MSR is not set\n",
            "this kernel has no msr driver",
            "a kernel built with CONFIG_X86_MSR=y or =m (",
        ),
        (
            "CONFIG_X86_MSR=y\n",
            "though CONFIG_X86_MSR=y",
            "the driver is built in",
        ),
        (
            "CONFIG_X86_MSRX=m\n",
            "this kernel has no msr driver",
            "a kernel built with",
        ),
    ] {
        std::fs::write(&cfg, config).unwrap();
        let m = line(&diagnose(&r), "msr device").clone();
        assert_eq!(m.status, Status::Optional);
        assert!(m.detail.contains(detail), "{config}: {m}");
        assert!(m.fix.starts_with(fix), "{config}: {m}");
        assert!(m.detail.contains("config-6.1.0-fake"), "{m}");
    }
}

#[test]
fn pmu_fix_names_a_virtual_cpu() {
    let t = tempfile::tempdir().unwrap();
    let r = roots(t.path());
    // the fake tree's CPU is virtual (the hypervisor flag)
    fake::proc_tree(&r.proc_root, false, &r.resctrl).unwrap();
    let p = line(&diagnose(&r), "perf PMU").clone();
    assert!(
        p.fix
            .starts_with("this is a virtual CPU whose hypervisor exposes no PMU"),
        "{p}"
    );
    // a host CPU without the PMU directory
    let info = r.proc_root.join("cpuinfo");
    let text = std::fs::read_to_string(&info)
        .unwrap()
        .replace(" hypervisor", "");
    std::fs::write(&info, text).unwrap();
    let p = line(&diagnose(&r), "perf PMU").clone();
    assert!(p.fix.starts_with("a host CPU with its PMU exposed"), "{p}");
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

#[test]
fn unmounted_resctrl_on_a_capable_kernel_is_fixed_by_mounting() {
    let t = tempfile::tempdir().unwrap();
    let r = roots(t.path());
    fake::proc_tree(&r.proc_root, true, &r.resctrl).unwrap();
    std::fs::write(r.proc_root.join("mounts"), "proc /proc proc rw 0 0\n").unwrap();
    let rep = diagnose(&r);
    assert_eq!(line(&rep, "resctrl filesystem").status, Status::Ok);
    let mount = line(&rep, "resctrl mount");
    assert_eq!(mount.status, Status::Missing);
    assert_eq!(mount.fix, "mount -t resctrl resctrl /sys/fs/resctrl");
}
