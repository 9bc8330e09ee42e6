//! Cleanup of the Linux launcher on the emulated resctrl (`rdt emulate`):
//! a `cachepart run` killed with SIGKILL leaves its groups, and the next
//! start (`run` or `daemon`) removes them; SIGINT or SIGTERM to `run`
//! stops the apps, removes every group, writes nothing and exits 130 or
//! 143.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use cachepart::linux::fake;
use support::emulated::{owned, tasks, wait_for, Emulated};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_cachepart")
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A machine: the emulated mount, a fake /sys, the profile table, and a
/// mix of two `sleep`s that run for `secs` seconds.
fn setup(dir: &Path, secs: u32) -> Emulated {
    let emu = Emulated::start(dir, "skylake");
    fake::sys_tree(&dir.join("sys"), 2, 11264 * 1024, 11, false).unwrap();
    support::three_program_metrics(&dir.join("metrics.csv"));
    std::fs::write(
        dir.join("mix.toml"),
        format!(
            "interval = \"100ms\"\n\
             [[app]]\nname = \"xz\"\nargv = [\"sleep\", \"{secs}\"]\n\
             [[app]]\nname = \"sort\"\nargv = [\"sleep\", \"{secs}\"]\n"
        ),
    )
    .unwrap();
    emu
}

/// Starts `cachepart run` on the mix, writing into `dir/out`.
fn start_run(dir: &Path, emu: &Emulated) -> Child {
    Command::new(bin())
        .args(["run", p(&dir.join("mix.toml")), "--policy", "lfoc"])
        .args(["-m", p(&dir.join("metrics.csv")), "--fake-counters"])
        .args(["--resctrl", emu.arg(), "--sys-root", p(&dir.join("sys"))])
        .args(["-o", p(&dir.join("out"))])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the run's cluster groups hold tasks; returns the groups
/// and the tasks.
fn placed(emu: &Emulated, run: u32) -> (Vec<PathBuf>, Vec<u32>) {
    let prefix = format!("cachepart-{run}-c");
    let clusters = || -> Vec<PathBuf> {
        owned(&emu.mount)
            .into_iter()
            .filter(|g| {
                g.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(&prefix)
            })
            .collect()
    };
    wait_for(30, "the run's groups to hold its apps", || {
        clusters().iter().map(|g| tasks(g).len()).sum::<usize>() >= 2
    });
    let groups = clusters();
    let t = groups.iter().flat_map(|g| tasks(g)).collect();
    (groups, t)
}

fn kill(pid: u32, sig: i32) {
    // SAFETY: kill sends a signal to a process this test started.
    unsafe { libc::kill(pid as i32, sig) };
}

fn alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty() && !stat.contains(") Z ")
}

/// Kills a run with SIGKILL once its apps are placed; returns its pid and
/// the apps' pids, which go on running.
fn killed_run(dir: &Path, emu: &Emulated) -> (u32, Vec<u32>) {
    let mut run = start_run(dir, emu);
    let pid = run.id();
    let (groups, apps) = placed(emu, pid);
    kill(pid, libc::SIGKILL);
    run.wait().unwrap();
    // Its groups stay, with its apps in them.
    for g in &groups {
        assert!(g.exists(), "{} went with the run", g.display());
    }
    assert!(apps.iter().all(|&a| alive(a)));
    (pid, apps)
}

#[test]
fn groups_of_a_run_killed_with_sigkill_go_at_the_next_run() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let emu = setup(dir, 60);
    let (dead, apps) = killed_run(dir, &emu);
    // The next start: a short run.
    std::fs::write(
        dir.join("mix.toml"),
        "interval = \"100ms\"\n[[app]]\nname = \"xz\"\nargv = [\"true\"]\n",
    )
    .unwrap();
    let out = start_run(dir, &emu).wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let res: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/results.json")).unwrap())
            .unwrap();
    let removed: Vec<&str> = res["removed_at_start"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(!removed.is_empty(), "{res}");
    assert!(
        removed
            .iter()
            .all(|g| g.starts_with(&format!("cachepart-{dead}-"))),
        "{removed:?}"
    );
    assert_eq!(owned(&emu.mount), Vec::<PathBuf>::new());
    let root = emu.root_tasks();
    for a in apps {
        assert!(root.contains(&a), "{a} not back in the default group");
        kill(a, libc::SIGKILL);
    }
}

#[test]
fn groups_of_a_run_killed_with_sigkill_go_when_the_daemon_starts() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let emu = setup(dir, 60);
    let (dead, apps) = killed_run(dir, &emu);
    std::fs::write(
        dir.join("daemon.toml"),
        format!(
            "policy = \"equal-part\"\ninterval = \"100ms\"\n[[target]]\nname = \"left\"\npid = {}\n",
            apps[0]
        ),
    )
    .unwrap();
    let log = dir.join("log");
    let mut daemon = Command::new(bin())
        .args(["daemon", p(&dir.join("daemon.toml")), "--log", p(&log)])
        .args(["--resctrl", emu.arg(), "--sys-root", p(&dir.join("sys"))])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(20, "the daemon's first plan", || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("\"event\":\"plan\""))
    });
    let text = std::fs::read_to_string(&log).unwrap();
    let start: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let removed = start["removed_at_start"].as_array().unwrap();
    assert!(!removed.is_empty(), "{start}");
    assert!(
        removed.iter().all(|g| g
            .as_str()
            .unwrap()
            .starts_with(&format!("cachepart-{dead}-"))),
        "{start}"
    );
    // Only the daemon's groups remain.
    let mine = format!("cachepart-{}-", daemon.id());
    for g in owned(&emu.mount) {
        assert!(
            g.file_name().unwrap().to_string_lossy().starts_with(&mine),
            "{} left",
            g.display()
        );
    }
    kill(daemon.id(), libc::SIGINT);
    let status = daemon.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(owned(&emu.mount), Vec::<PathBuf>::new());
    let root = emu.root_tasks();
    for a in apps {
        assert!(root.contains(&a), "{a} not back in the default group");
        kill(a, libc::SIGKILL);
    }
}

#[test]
fn sigint_and_sigterm_to_run_restore_everything_and_exit_130_and_143() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let emu = setup(dir, 600);
    for (sig, code, name) in [
        (libc::SIGINT, 130, "SIGINT"),
        (libc::SIGTERM, 143, "SIGTERM"),
    ] {
        let run = start_run(dir, &emu);
        let (_, apps) = placed(&emu, run.id());
        assert!(!emu.root_tasks().iter().any(|t| apps.contains(t)));
        kill(run.id(), sig);
        let out = run.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{stderr}");
        assert!(
            stderr.contains(&format!("interrupted by {name}")),
            "{stderr}"
        );
        assert!(String::from_utf8_lossy(&out.stdout).is_empty());
        assert_eq!(owned(&emu.mount), Vec::<PathBuf>::new(), "{name}");
        assert!(apps.iter().all(|&a| !alive(a)), "{name}: apps still run");
        assert!(!dir.join("out").exists(), "{name}: output written");
    }
}
