//! An emulated resctrl (`cachepart rdt emulate`) in a temporary directory
//! for the Linux tests, and what they check on it. Needs root and
//! /dev/fuse; without them the test fails and says why.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A mounted emulator; dropping it stops the emulator (SIGTERM), which
/// unmounts.
pub struct Emulated {
    child: Option<Child>,
    /// The mount point.
    pub mount: PathBuf,
}

impl Emulated {
    /// Mounts an emulator of `preset` at `dir/resctrl`.
    pub fn start(dir: &Path, preset: &str) -> Emulated {
        let mount = dir.join("resctrl");
        std::fs::create_dir(&mount).unwrap();
        Emulated::at(&mount, preset)
    }

    /// Mounts an emulator of `preset` at `mount`, an empty directory.
    pub fn at(mount: &Path, preset: &str) -> Emulated {
        let mount = mount.to_path_buf();
        let mut child = Command::new(env!("CARGO_BIN_EXE_cachepart"))
            .args([
                "rdt",
                "emulate",
                mount.to_str().unwrap(),
                "--preset",
                preset,
            ])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !mount.join("info/last_cmd_status").exists() {
            if let Some(status) = child.try_wait().unwrap() {
                let out = child.wait_with_output().unwrap();
                panic!(
                    "rdt emulate exited ({status}) before mounting; the emulated resctrl needs \
                     root and /dev/fuse: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "no mount in 20 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Emulated {
            child: Some(child),
            mount,
        }
    }

    /// Stops the emulator (SIGTERM) and checks that it unmounted and
    /// exited with status 0.
    pub fn stop(mut self) {
        let c = self.child.take().expect("running");
        // SAFETY: kill sends SIGTERM to the emulator we started.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        let out = c.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The mount as an argument.
    pub fn arg(&self) -> &str {
        self.mount.to_str().unwrap()
    }

    /// The thread ids in the root group's `tasks`.
    pub fn root_tasks(&self) -> Vec<u32> {
        tasks(&self.mount)
    }
}

impl Drop for Emulated {
    fn drop(&mut self) {
        if let Some(c) = self.child.take() {
            // SAFETY: kill sends SIGTERM to the emulator we started.
            unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
            let _ = c.wait_with_output();
        }
    }
}

/// The thread ids in group directory `dir`'s `tasks`.
pub fn tasks(dir: &Path) -> Vec<u32> {
    std::fs::read_to_string(dir.join("tasks"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|t| t.parse().ok())
        .collect()
}

/// Every `cachepart-*` group (control or monitoring) under `mount`.
pub fn owned(mount: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![mount.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.path().is_dir() {
                if e.file_name().to_string_lossy().starts_with("cachepart-") {
                    out.push(e.path());
                }
                stack.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// Waits up to `secs` seconds for `what` to hold, polling.
pub fn wait_for(secs: u64, what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !ok() {
        assert!(Instant::now() < deadline, "waited {secs} s for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A process that sleeps until dropped.
pub struct Sleeper(pub Child);

impl Sleeper {
    /// `sleep 600`.
    pub fn new() -> Sleeper {
        Sleeper(Command::new("sleep").arg("600").spawn().unwrap())
    }

    /// Its pid.
    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
