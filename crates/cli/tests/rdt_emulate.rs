//! `cachepart rdt emulate` end to end: the emulated resctrl mounted by the
//! CLI, driven by `rdt show`, `set` and `reset` as on a real machine, and
//! unmounted on SIGINT or SIGTERM. Needs root and /dev/fuse (CI has
//! both); without them the tests fail and say why.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn cachepart(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn mounted(mnt: &Path) -> bool {
    std::fs::read_to_string("/proc/mounts")
        .unwrap()
        .lines()
        .any(|l| l.split_whitespace().nth(1) == mnt.to_str())
}

/// Starts `rdt emulate` and waits for its mount.
fn emulate(mnt: &Path, preset: &str) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(["rdt", "emulate", mnt.to_str().unwrap(), "--preset", preset])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !mnt.join("info/last_cmd_status").exists() {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            panic!(
                "rdt emulate exited ({status}) before mounting; the emulated resctrl needs \
                 root and /dev/fuse: {}",
                text(&out.stderr)
            );
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "rdt emulate did not mount within 20 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

fn stop(child: Child, sig: i32, mnt: &Path) -> String {
    // SAFETY: kill sends a signal to the child we started.
    unsafe { libc::kill(child.id() as i32, sig) };
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!mounted(mnt), "{} is still mounted: {err}", mnt.display());
    assert_eq!(std::fs::read_dir(mnt).unwrap().count(), 0);
    err
}

#[test]
fn emulate_then_show_set_reset_then_sigint_unmounts() {
    let t = tempfile::tempdir().unwrap();
    let mnt = t.path().join("resctrl");
    std::fs::create_dir(&mnt).unwrap();
    let child = emulate(&mnt, "skylake");
    let m = mnt.to_str().unwrap();
    let mut sleeper = Command::new("sleep").arg("600").spawn().unwrap();
    let pid = sleeper.id().to_string();

    let out = cachepart(&["rdt", "show", "--mount", m]);
    let shown = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        shown.contains("L3: 11 ways (cbm_mask 7ff), min_cbm_bits 1, 16 CLOSIDs"),
        "{shown}"
    );
    assert!(shown.contains("L3_MON: 224 RMIDs"), "{shown}");

    let out = cachepart(&[
        "rdt", "set", "web", "--l3", "0x7", "--mb", "50", "--pid", &pid, "--mount", m,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dir = mnt.join(format!("cachepart-{pid}-web"));
    assert_eq!(
        std::fs::read_to_string(dir.join("schemata")).unwrap(),
        "    L3:0=7;1=7\n    MB:0=50;1=50\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("tasks")).unwrap(),
        format!("{pid}\n")
    );
    let root_tasks = std::fs::read_to_string(mnt.join("tasks")).unwrap();
    assert!(
        !root_tasks.lines().any(|l| l == pid),
        "still in the root group"
    );

    let out = cachepart(&[
        "rdt", "set", "web", "--l3", "0x5", "--pid", &pid, "--mount", m,
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("non-consecutive 1-bits"),
        "{}",
        text(&out.stderr)
    );

    let shown = text(&cachepart(&["rdt", "show", "--mount", m]).stdout);
    assert!(
        shown.contains(&format!(
            "cachepart-{pid}-web  owner pid {pid} (running), 1 tasks"
        )),
        "{shown}"
    );
    assert!(shown.contains("groups: 2 of 16 CLOSIDs in use"), "{shown}");

    let out = cachepart(&["rdt", "reset", "--mount", m]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!dir.exists());
    let root_tasks = std::fs::read_to_string(mnt.join("tasks")).unwrap();
    assert!(
        root_tasks.lines().any(|l| l == pid),
        "back in the root group"
    );

    let err = stop(child, libc::SIGINT, &mnt);
    assert!(err.contains("unmounted"), "{err}");
    let _ = sleeper.kill();
    let _ = sleeper.wait();
}

#[test]
fn emulate_refuses_bad_mountpoints_and_stops_on_sigterm() {
    let t = tempfile::tempdir().unwrap();
    let missing = t.path().join("missing");
    let out = cachepart(&["rdt", "emulate", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("missing: cannot use it as a mountpoint"),
        "{err}"
    );
    assert!(err.contains("create an empty directory first"), "{err}");

    std::fs::write(t.path().join("file"), "x").unwrap();
    let out = cachepart(&["rdt", "emulate", t.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("not empty; mount the emulator on an empty directory"));

    let out = cachepart(&["rdt", "emulate", "x", "--preset", "haswell"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unknown preset 'haswell': expected one of skylake, cdp, amd")
    );

    let mnt = t.path().join("cdp");
    std::fs::create_dir(&mnt).unwrap();
    let child = emulate(&mnt, "cdp");
    let out = cachepart(&["rdt", "show", "--mount", mnt.to_str().unwrap()]);
    assert!(
        text(&out.stdout).contains("L3CODE: 11 ways"),
        "{}",
        text(&out.stdout)
    );
    stop(child, libc::SIGTERM, &mnt);
}

#[test]
fn set_l3_on_a_cdp_mount_sets_code_and_data() {
    let t = tempfile::tempdir().unwrap();
    let mnt = t.path().join("resctrl");
    std::fs::create_dir(&mnt).unwrap();
    let child = emulate(&mnt, "cdp");
    let m = mnt.to_str().unwrap();
    let mut sleeper = Command::new("sleep").arg("600").spawn().unwrap();
    let pid = sleeper.id().to_string();
    let out = cachepart(&[
        "rdt", "set", "db", "--l3", "0x3", "--pid", &pid, "--mount", m,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dir = mnt.join(format!("cachepart-{pid}-db"));
    let schemata = std::fs::read_to_string(dir.join("schemata")).unwrap();
    assert!(
        schemata.contains("L3CODE:0=3;1=3") && schemata.contains("L3DATA:0=3;1=3"),
        "{schemata}"
    );
    // a mask the kernel refuses changes neither line
    let out = cachepart(&[
        "rdt", "set", "db", "--l3", "0x5", "--pid", &pid, "--mount", m,
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("non-consecutive 1-bits"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("schemata")).unwrap(),
        schemata
    );
    let out = cachepart(&["rdt", "reset", "--mount", m]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    sleeper.kill().unwrap();
    let _ = sleeper.wait();
    stop(child, libc::SIGTERM, &mnt);
}
