//! The processes a manager is told about, found anew each time they are
//! looked up (`cachepart daemon` re-scans every interval): by process id,
//! by command name (`/proc/PID/comm`, so processes started later match
//! too), or by cgroup v2 directory (the processes in its `cgroup.procs`).
//!
//! Zombies (state `Z` in `/proc/PID/stat`) never match: they have no
//! threads left to move. The caller's own process never matches a
//! command name.

use crate::error::{Error, Result};
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// The longest command name the kernel keeps (`TASK_COMM_LEN` less the
/// NUL); longer names are truncated in `/proc/PID/comm`.
pub const COMM_MAX: usize = 15;

/// Which processes a target names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    /// One process.
    Pid(u32),
    /// Every process whose `comm` is this name.
    Comm(String),
    /// Every process of this cgroup v2 directory (relative to the cgroup
    /// root, `/sys/fs/cgroup`), not of its children.
    Cgroup(PathBuf),
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Selector::Pid(p) => write!(f, "pid {p}"),
            Selector::Comm(c) => write!(f, "comm {c}"),
            Selector::Cgroup(c) => write!(f, "cgroup {}", c.display()),
        }
    }
}

impl Selector {
    /// Checks a selector before any lookup: a pid above 0, a command name
    /// of 1 to [`COMM_MAX`] bytes without `/`, a relative cgroup path
    /// without `..`. The error says what is expected.
    pub fn check(&self) -> std::result::Result<(), String> {
        match self {
            Selector::Pid(0) => Err("pid 0: expected a process id above 0".into()),
            Selector::Pid(_) => Ok(()),
            Selector::Comm(c) if c.is_empty() || c.len() > COMM_MAX || c.contains('/') => Err(
                format!(
                    "comm '{c}': expected a command name of 1 to {COMM_MAX} bytes without '/' (the kernel keeps {COMM_MAX} in /proc/PID/comm)"
                ),
            ),
            Selector::Comm(_) => Ok(()),
            Selector::Cgroup(p) => {
                let ok = !p.as_os_str().is_empty()
                    && p.components().all(|c| matches!(c, Component::Normal(_)));
                if ok {
                    Ok(())
                } else {
                    Err(format!(
                        "cgroup '{}': expected a path relative to the cgroup root, such as system.slice/nginx.service (no leading '/', no '..')",
                        p.display()
                    ))
                }
            }
        }
    }

    /// The running processes this selector names now, ascending. A pid
    /// that is gone, or a cgroup directory that does not exist (yet),
    /// names none.
    pub fn find(&self, proc_root: &Path, cgroup_root: &Path) -> Result<Vec<u32>> {
        let mut found = BTreeSet::new();
        match self {
            Selector::Pid(pid) => {
                if is_live_process(proc_root, *pid) {
                    found.insert(*pid);
                }
            }
            Selector::Comm(name) => {
                let me = std::process::id();
                for pid in processes(proc_root)? {
                    if pid == me {
                        continue;
                    }
                    let comm = std::fs::read_to_string(proc_root.join(format!("{pid}/comm")));
                    if comm.is_ok_and(|c| c.trim_end_matches('\n') == name)
                        && is_live_process(proc_root, pid)
                    {
                        found.insert(pid);
                    }
                }
            }
            Selector::Cgroup(rel) => {
                let file = cgroup_root.join(rel).join("cgroup.procs");
                let text = match std::fs::read_to_string(&file) {
                    Ok(t) => t,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
                    Err(e) => return Err(Error::io(&file, e)),
                };
                for t in text.split_whitespace() {
                    let pid: u32 = t.parse().map_err(|_| {
                        Error::parse(&file, format!("expected process ids, found '{t}'"))
                    })?;
                    if is_live_process(proc_root, pid) {
                        found.insert(pid);
                    }
                }
            }
        }
        Ok(found.into_iter().collect())
    }
}

/// The process ids listed in `proc_root` (thread-group leaders only: the
/// kernel lists no other thread there).
fn processes(proc_root: &Path) -> Result<Vec<u32>> {
    let dir = std::fs::read_dir(proc_root).map_err(|e| Error::io(proc_root, e))?;
    Ok(dir
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
        .collect())
}

/// Whether `pid` is a process (a thread-group leader) that is not a
/// zombie.
fn is_live_process(proc_root: &Path, pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(proc_root.join(format!("{pid}/stat"))) else {
        return false;
    };
    // "PID (comm) S ...": the comm may hold spaces and parentheses.
    let state = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next());
    if state.is_none_or(|s| s == "Z" || s == "X") {
        return false;
    }
    // A thread id also has a /proc entry; only a leader's Tgid is itself.
    let status = std::fs::read_to_string(proc_root.join(format!("{pid}/status")));
    status.is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Tgid:"))
            .is_some_and(|t| t.trim() == pid.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    struct Child(std::process::Child);
    impl Drop for Child {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    #[test]
    fn selectors_are_checked() {
        assert!(Selector::Pid(0).check().unwrap_err().contains("above 0"));
        assert!(Selector::Comm("a-very-long-command".into())
            .check()
            .unwrap_err()
            .contains("1 to 15 bytes"));
        assert!(Selector::Comm("x/y".into()).check().is_err());
        for bad in ["/sys/fs/cgroup/x", "a/../b", ""] {
            let e = Selector::Cgroup(bad.into()).check().unwrap_err();
            assert!(e.contains("relative to the cgroup root"), "{bad}: {e}");
        }
        Selector::Cgroup("system.slice/nginx.service".into())
            .check()
            .unwrap();
        Selector::Comm("nginx".into()).check().unwrap();
    }

    /// Polls `done` for up to ten seconds: a child's `comm` is the parent's
    /// until its exec, and a killed child turns zombie only once the kernel
    /// has delivered the signal, neither at a fixed time after the call.
    fn eventually(what: &str, mut done: impl FnMut() -> bool) {
        let start = std::time::Instant::now();
        while !done() {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(10),
                "{what}"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    fn comm_of(pid: u32) -> String {
        std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default()
    }

    fn state_of(pid: u32) -> Option<char> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit_once(") ")?.1.chars().next()
    }

    #[test]
    fn processes_are_found_by_pid_comm_and_cgroup() {
        let proc_root = Path::new("/proc");
        let a = Child(Command::new("sleep").arg("60").spawn().unwrap());
        let b = Child(Command::new("sleep").arg("60").spawn().unwrap());
        let (pa, pb) = (a.0.id(), b.0.id());
        for pid in [pa, pb] {
            eventually("the child never exec'd sleep", || {
                comm_of(pid).trim() == "sleep"
            });
        }
        let t = tempfile::tempdir().unwrap();
        assert_eq!(
            Selector::Pid(pa).find(proc_root, t.path()).unwrap(),
            vec![pa]
        );
        let sleeps = Selector::Comm("sleep".into())
            .find(proc_root, t.path())
            .unwrap();
        assert!(sleeps.contains(&pa) && sleeps.contains(&pb), "{sleeps:?}");
        // A fake cgroup tree: a gone pid and a thread id are not processes.
        let cg = t.path().join("system.slice/x.service");
        std::fs::create_dir_all(&cg).unwrap();
        std::fs::write(cg.join("cgroup.procs"), format!("{pb}\n{}\n", u32::MAX - 1)).unwrap();
        let sel = Selector::Cgroup("system.slice/x.service".into());
        assert_eq!(sel.find(proc_root, t.path()).unwrap(), vec![pb]);
        let none = Selector::Cgroup("system.slice/later.service".into());
        assert!(none.find(proc_root, t.path()).unwrap().is_empty());
        std::fs::write(cg.join("cgroup.procs"), "12 x\n").unwrap();
        let e = sel.find(proc_root, t.path()).unwrap_err().to_string();
        assert!(e.contains("cgroup.procs") && e.contains("'x'"), "{e}");
        // Killed and not yet reaped: a zombie, which no selector names.
        let mut z = Command::new("sleep")
            .arg("60")
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let pz = z.id();
        // SAFETY: kill sends SIGKILL to the child we started.
        unsafe { libc::kill(pz as i32, libc::SIGKILL) };
        eventually("the killed child never became a zombie", || {
            state_of(pz) == Some('Z')
        });
        assert!(Selector::Pid(pz)
            .find(proc_root, t.path())
            .unwrap()
            .is_empty());
        z.wait().unwrap();
        drop(a);
        assert!(Selector::Pid(pa)
            .find(proc_root, t.path())
            .unwrap()
            .is_empty());
    }
}
