//! `cachepart trace capture` interrupted: SIGINT or SIGTERM during a
//! capture under valgrind lackey or qemu-user ends cachepart with 130 or
//! 143 and leaves no tool process, no temporary file or FIFO directory and
//! no output; a SIGKILLed capture's tool dies with it (PR_SET_PDEATHSIG).
//! Each test is skipped with a `SKIPPED` line when its tool is missing.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use support::program_runs as runs;
use tempfile::TempDir;

/// One process seen in /proc: its pid and its start time (so a recycled
/// pid is not mistaken for it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Proc {
    pid: u32,
    start: u64,
}

/// (pid, state, ppid, start time) from `/proc/PID/stat`.
fn stat(pid: u32) -> Option<(char, u32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // the command name may hold spaces and parentheses: parse after the last ')'
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let ppid = fields.get(1)?.parse().ok()?;
    // field 22 of stat is the start time; `rest` starts at field 3
    let start = fields.get(19)?.parse().ok()?;
    Some((state, ppid, start))
}

/// Every descendant of `root` now running.
fn descendants(root: u32) -> Vec<Proc> {
    let all: Vec<(u32, u32, u64)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| stat(pid).map(|(_, ppid, start)| (pid, ppid, start)))
        .collect();
    let mut found = Vec::new();
    let mut parents = vec![root];
    while let Some(p) = parents.pop() {
        for &(pid, ppid, start) in &all {
            if ppid == p {
                found.push(Proc { pid, start });
                parents.push(pid);
            }
        }
    }
    found
}

/// Whether `p` still exists; `zombie_is_dead` counts an unreaped one as
/// gone (an orphan's reaper may be slow or absent in a container).
fn alive(p: Proc, zombie_is_dead: bool) -> bool {
    match stat(p.pid) {
        Some((state, _, start)) if start == p.start => !(zombie_is_dead && state == 'Z'),
        _ => false,
    }
}

/// Whether `tool`'s route can run here (prints `SKIPPED` when not).
fn have(tool: &str) -> bool {
    let ok = match tool {
        "lackey" => runs("valgrind"),
        _ => runs(&format!("qemu-{}", std::env::consts::ARCH)) && runs("gcc"),
    };
    if !ok {
        println!("SKIPPED: the {tool} route's tools are not installed (apt-get install valgrind qemu-user gcc)");
    }
    ok
}

/// A running `cachepart trace capture --tool TOOL` of an endless loop, with
/// `$TMPDIR` and the output in directories of its own.
struct Capture {
    child: Child,
    tmp: TempDir,
    out_dir: TempDir,
}

impl Capture {
    fn start(tool: &str) -> Capture {
        let tmp = TempDir::new().unwrap();
        let out_dir = TempDir::new().unwrap();
        let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("interrupt-plugin-cache");
        let child = Command::new(env!("CARGO_BIN_EXE_cachepart"))
            .args(["trace", "capture", "--tool", tool, "-o"])
            .arg(out_dir.path().join("loop.cpt"))
            .args(["--", "sh", "-c", "while :; do :; done"])
            .env("TMPDIR", tmp.path())
            .env("CACHEPART_CACHE_DIR", cache)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Capture {
            child,
            tmp,
            out_dir,
        }
    }

    /// The tool's processes, once it has started and traced a second.
    fn tool_processes(&mut self) -> Vec<Proc> {
        let t = Instant::now();
        // the first qemu capture builds the plugin first
        while descendants(self.child.id()).is_empty() {
            assert!(
                self.child.try_wait().unwrap().is_none(),
                "cachepart ended before starting its tool"
            );
            assert!(t.elapsed() < Duration::from_secs(30), "no tool started");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(1000));
        let procs = descendants(self.child.id());
        assert!(!procs.is_empty());
        procs
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child's pid.
        let r = unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
        assert_eq!(r, 0);
    }

    /// Waits (10 s at most) for cachepart to end.
    fn wait(&mut self) -> ExitStatus {
        let t = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            if t.elapsed() > Duration::from_secs(10) {
                let _ = self.child.kill();
                panic!("cachepart did not end within 10 s of the signal");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stderr(&mut self) -> String {
        use std::io::Read;
        let mut s = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
        s
    }
}

fn listing(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// Interrupts a capture with `sig` and checks that nothing survives.
fn interrupt(tool: &str, sig: i32) {
    if !have(tool) {
        return;
    }
    let mut c = Capture::start(tool);
    let procs = c.tool_processes();
    c.signal(sig);
    let status = c.wait();
    let err = c.stderr();
    assert_eq!(status.code(), Some(128 + sig), "{status:?}: {err}");
    assert!(err.contains("interrupted"), "{err}");
    // cachepart killed and reaped its tool before exiting
    let left: Vec<Proc> = procs.into_iter().filter(|&p| alive(p, false)).collect();
    assert!(left.is_empty(), "{tool}: processes left: {left:?}");
    assert!(
        listing(c.tmp.path()).is_empty(),
        "{tool}: left in $TMPDIR: {:?}",
        listing(c.tmp.path())
    );
    assert!(
        listing(c.out_dir.path()).is_empty(),
        "{tool}: left beside the output: {:?}",
        listing(c.out_dir.path())
    );
}

#[test]
fn sigint_stops_a_lackey_capture_and_leaves_nothing() {
    interrupt("lackey", libc::SIGINT);
}

#[test]
fn sigterm_stops_a_lackey_capture_and_leaves_nothing() {
    interrupt("lackey", libc::SIGTERM);
}

#[test]
fn sigint_stops_a_qemu_capture_and_leaves_nothing() {
    interrupt("qemu", libc::SIGINT);
}

/// A SIGKILLed cachepart cannot clean up, but its tool dies with it.
fn killed(tool: &str) {
    if !have(tool) {
        return;
    }
    let mut c = Capture::start(tool);
    let procs = c.tool_processes();
    c.signal(libc::SIGKILL);
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&c.wait()),
        Some(libc::SIGKILL)
    );
    let t = Instant::now();
    // the tool is the direct child (valgrind execs itself, qemu does not fork)
    while procs.iter().any(|&p| alive(p, true)) {
        if t.elapsed() > Duration::from_secs(5) {
            for p in &procs {
                // SAFETY: kill(2) of a process this test started (pid and
                // start time checked just above)
                unsafe { libc::kill(p.pid as libc::pid_t, libc::SIGKILL) };
            }
            panic!("{tool}: the tool outlived a SIGKILLed cachepart: {procs:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_sigkilled_lackey_capture_takes_valgrind_with_it() {
    killed("lackey");
}

#[test]
fn a_sigkilled_qemu_capture_takes_qemu_with_it() {
    killed("qemu");
}
