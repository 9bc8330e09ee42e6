//! `cachepart doctor` and `cachepart rdt show` against fake trees (plain
//! directories laid out like /proc, /sys and a resctrl mount).

use cachepart::linux::fake::{self, Preset};
use std::path::Path;
use std::process::{Command, Output};

fn cachepart(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(args)
        .output()
        .unwrap()
}

fn doctor(root: &Path) -> Output {
    let p = |s: &str| root.join(s).to_str().unwrap().to_string();
    let (proc_root, sys, dev, boot, rc) = (p("proc"), p("sys"), p("dev"), p("boot"), p("resctrl"));
    cachepart(&[
        "doctor",
        "--proc-root",
        &proc_root,
        "--sys-root",
        &sys,
        "--dev-root",
        &dev,
        "--boot-root",
        &boot,
        "--resctrl",
        &rc,
    ])
}

#[test]
fn doctor_on_an_unsupported_machine_says_so_and_exits_2() {
    let t = tempfile::tempdir().unwrap();
    fake::proc_tree(&t.path().join("proc"), false, &t.path().join("resctrl")).unwrap();
    let out = doctor(t.path());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("MISSING  cpu flag cat_l3"), "{text}");
    assert!(text.contains("MISSING  resctrl mount              not mounted (no resctrl in /proc/mounts) -> fix: none on this kernel (see resctrl filesystem); then mount -t resctrl resctrl /sys/fs/resctrl"), "{text}");
    assert!(text.contains("absent   perf PMU"), "{text}");
    assert!(text.contains("no hardware counters"), "{text}");
    assert!(text.contains("absent   msr device"), "{text}");
    assert!(text.contains("fix: modprobe msr"), "{text}");
    assert!(
        text.ends_with(
            "not ready: cachepart cannot manage this machine's cache (MISSING lines above)\n"
        ),
        "{text}"
    );
}

#[test]
fn doctor_on_a_supported_machine_is_ready() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    fake::proc_tree(&r.join("proc"), true, &r.join("resctrl")).unwrap();
    fake::resctrl(&r.join("resctrl"), Preset::Skylake).unwrap();
    std::fs::create_dir_all(r.join("sys/bus/event_source/devices/cpu_core")).unwrap();
    std::fs::create_dir_all(r.join("dev/cpu/0")).unwrap();
    std::fs::write(r.join("dev/cpu/0/msr"), "").unwrap();
    std::fs::create_dir_all(r.join("boot")).unwrap();
    std::fs::write(
        r.join("boot/config-6.1.0-fake"),
        "CONFIG_X86_CPU_RESCTRL=y\n",
    )
    .unwrap();
    let out = doctor(r);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        !text.contains("MISSING") && !text.contains("absent"),
        "{text}"
    );
    assert!(
        text.contains("ok       resctrl info/              L3, MB, L3_MON; 16 CLOSIDs"),
        "{text}"
    );
    assert!(
        text.ends_with("ready: resctrl cache management can run here\n"),
        "{text}"
    );
}

#[test]
fn rdt_show_lists_capabilities_groups_and_owners() {
    let t = tempfile::tempdir().unwrap();
    let mount = t.path().join("resctrl");
    let proc_root = t.path().join("proc");
    fake::resctrl(&mount, Preset::Amd).unwrap();
    fake::proc_tree(&proc_root, true, &mount).unwrap();
    fake::process(&proc_root, 50, "cachepart", &[50]).unwrap();
    std::fs::create_dir_all(mount.join("cachepart-50-web/mon_groups")).unwrap();
    std::fs::write(
        mount.join("cachepart-50-web/schemata"),
        "L3:0=f0f;1=ffff\nMB:0=1024;1=2048\n",
    )
    .unwrap();
    std::fs::write(mount.join("cachepart-50-web/tasks"), "50\n51\n").unwrap();
    std::fs::create_dir_all(mount.join("cachepart-60-old/mon_groups")).unwrap();
    std::fs::write(mount.join("cachepart-60-old/schemata"), "L3:0=1;1=1\n").unwrap();
    std::fs::write(mount.join("cachepart-60-old/tasks"), "").unwrap();
    let (m, p) = (mount.to_str().unwrap(), proc_root.to_str().unwrap());
    let out = cachepart(&[
        "rdt",
        "show",
        "--mount",
        m,
        "--proc-root",
        p,
        "--allow-plain-dir",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = format!(
        "resctrl at {m}\n\
L3: 16 ways (cbm_mask ffff), min_cbm_bits 0, 16 CLOSIDs, shareable_bits 0, sparse masks yes, domains 0,1\n\
MB: AmdUnits up to 2048, bandwidth_gran 1, min_bandwidth 0, 16 CLOSIDs, delay_linear 0, domains 0,1\n\
L3_MON: 256 RMIDs: llc_occupancy mbm_total_bytes mbm_local_bytes\n\
groups: 3 of 16 CLOSIDs in use\n\
/  default group, 0 tasks\n    L3:0=ffff;1=ffff\n    MB:0=2048;1=2048\n\
cachepart-50-web  owner pid 50 (running), 2 tasks\n    L3:0=f0f;1=ffff\n    MB:0=1024;1=2048\n\
cachepart-60-old  owner pid 60 (gone: removed at the next start), 0 tasks\n    L3:0=1;1=1\n"
    );
    assert_eq!(text, expected);

    // Without the development flag a plain directory is refused.
    let out = cachepart(&["rdt", "show", "--mount", m, "--proc-root", p]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("not a resctrl filesystem"), "{err}");
    assert!(err.contains("cachepart doctor"), "{err}");
}

/// A fake Skylake mount and /proc with process 4242 (threads 4242, 4243)
/// and process 5151; returns (tempdir, mount, proc).
fn fake_machine() -> (tempfile::TempDir, String, String) {
    let t = tempfile::tempdir().unwrap();
    let mount = t.path().join("resctrl");
    let proc_root = t.path().join("proc");
    fake::resctrl(&mount, Preset::Skylake).unwrap();
    fake::proc_tree(&proc_root, true, &mount).unwrap();
    fake::process(&proc_root, 4242, "batch", &[4242, 4243]).unwrap();
    fake::process(&proc_root, 5151, "web", &[5151]).unwrap();
    let (m, p) = (
        mount.to_str().unwrap().to_string(),
        proc_root.to_str().unwrap().to_string(),
    );
    (t, m, p)
}

fn rdt(sub: &str, m: &str, p: &str, extra: &[&str]) -> Output {
    let mut a = vec!["rdt", sub];
    a.extend_from_slice(extra);
    a.extend(["--mount", m, "--proc-root", p, "--allow-plain-dir"]);
    cachepart(&a)
}

#[test]
fn rdt_set_makes_a_group_owned_by_its_first_process() {
    let (_t, m, p) = fake_machine();
    let o = rdt(
        "set",
        &m,
        &p,
        &["batch", "--l3", "0x7", "--mb", "30", "--pid", "4242"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let dir = Path::new(&m).join("cachepart-4242-batch");
    let schemata = std::fs::read_to_string(dir.join("schemata")).unwrap();
    assert!(schemata.contains("L3:0=7;1=7"), "{schemata}");
    assert!(schemata.contains("MB:0=30;1=30"), "{schemata}");
    let tasks = std::fs::read_to_string(dir.join("tasks")).unwrap();
    assert!(tasks.contains("4242") && tasks.contains("4243"), "{tasks}");
    // again, with a second process: the same group, updated
    let o = rdt(
        "set",
        &m,
        &p,
        &["batch", "--l3", "0x3", "--pid", "4242", "--pid", "5151"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let schemata = std::fs::read_to_string(dir.join("schemata")).unwrap();
    assert!(schemata.contains("L3:0=3;1=3"), "{schemata}");
    assert!(std::fs::read_to_string(dir.join("tasks"))
        .unwrap()
        .contains("5151"));
    // show lists it as running
    let o = rdt("show", &m, &p, &[]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("cachepart-4242-batch  owner pid 4242 (running)"),
        "{text}"
    );
    // reset removes it
    let o = rdt("reset", &m, &p, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("removed cachepart-4242-batch"));
    assert!(!dir.exists());
}

#[test]
fn rdt_set_refuses_what_the_kernel_would_refuse_and_leaves_nothing() {
    let (_t, m, p) = fake_machine();
    let cases: &[(&[&str], &str)] = &[
        // non-contiguous: Intel requires contiguous masks
        (&["g", "--l3", "0x5", "--pid", "4242"], "non-consecutive"),
        // wider than cbm_mask 7ff
        (&["g", "--l3", "0xfff", "--pid", "4242"], "L3"),
        (&["g", "--l3", "0x0", "--pid", "4242"], "L3"),
        (&["g", "--l3", "zz", "--pid", "4242"], "--l3"),
        // MB below min_bandwidth 10, or not a multiple of 10
        (&["g", "--mb", "5", "--pid", "4242"], "MB"),
        (&["g", "--mb", "33", "--pid", "4242"], "MB"),
        (&["g", "--l3", "0x3", "--pid", "999"], "no such process"),
        (&["g", "--l3", "0x3", "--pid", "0"], "process id"),
        (&["g", "--l3", "0x3"], "--pid"),
        (&["g", "--pid", "4242"], "--l3"),
        (&["../x", "--l3", "0x3", "--pid", "4242"], "../x"),
    ];
    for (args, want) in cases {
        let before = list_dir(Path::new(&m));
        let o = rdt("set", &m, &p, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} was accepted");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(list_dir(Path::new(&m)), before, "{args:?} left a group");
    }
}

#[test]
fn rdt_monitor_prints_each_group() {
    let (_t, m, p) = fake_machine();
    let o = rdt("set", &m, &p, &["batch", "--l3", "0x7", "--pid", "4242"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = rdt("monitor", &m, &p, &["--count", "2", "--interval", "0.01"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        text.matches("cachepart-4242-batch (pid 4242)").count(),
        2,
        "{text}"
    );
    let o = rdt("monitor", &m, &p, &["--interval", "nan"]);
    assert!(!o.status.success());
}

/// An interval a Duration rounds to 0 printed a bandwidth of NaN (inf
/// where the counter moved), and `--count 0` took one reading anyway:
/// both are refused, naming the option, before any reading.
#[test]
fn rdt_monitor_refuses_an_interval_below_a_millisecond_and_no_readings() {
    let (_t, m, p) = fake_machine();
    let o = rdt("set", &m, &p, &["batch", "--l3", "0x7", "--pid", "4242"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for (args, want) in [
        (
            ["--interval", "1e-12", "--count", "2"],
            "--interval 0.000000000001: expected seconds from 0.001 to 3600",
        ),
        (
            ["--interval", "1e300", "--count", "2"],
            "--interval 1e300: expected",
        ),
        (
            ["--interval", "0.01", "--count", "0"],
            "--count 0: expected at least 1 reading",
        ),
    ] {
        let o = rdt("monitor", &m, &p, &args);
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert_eq!(o.status.code(), Some(1), "{args:?}: {out}{err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
    }
    // The shortest interval works, and gives finite bandwidths.
    let o = rdt("monitor", &m, &p, &["--interval", "0.001", "--count", "3"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!text.contains("inf") && !text.contains("NaN"), "{text}");
}

fn list_dir(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}
