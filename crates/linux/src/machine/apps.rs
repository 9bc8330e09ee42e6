//! The mix's processes: started from their command lines, pinned to their
//! core (`sched_setaffinity` in the child before `exec`), polled for exit,
//! restarted when the methodology says, and stopped at the end.

use crate::error::{Error, Result};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One app of the mix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppSpec {
    /// Its name in samples and results.
    pub name: String,
    /// The command and its arguments (run directly, not through a shell).
    pub argv: Vec<String>,
    /// The core it is pinned to, if any.
    pub core: Option<u32>,
    /// Start it again when it finishes before the slowest app has finished
    /// its first run (LFOC's and KPart's methodology); only the first run
    /// counts in the results.
    pub restart: bool,
}

/// A running (or finished) process of an app.
#[derive(Debug)]
pub(super) struct Proc {
    pub child: Child,
    pub pid: u32,
    pub started: Instant,
}

/// Pins the calling process to `core`.
fn pin(core: u32) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; sched_setaffinity(0) acts on the
    // calling thread only and is async-signal-safe (called after fork).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core as usize, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Pins process `pid`'s main thread to `core` (a placement after start).
pub(super) fn pin_pid(pid: u32, core: u32) -> std::io::Result<()> {
    // SAFETY: as in `pin`, for another process.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core as usize, &mut set);
        if libc::sched_setaffinity(pid as i32, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

impl AppSpec {
    /// Checks the spec before anything starts: a command, a core this
    /// machine has.
    pub fn check(&self, index: usize, cores: u32) -> Result<()> {
        let what = |why: String| Error::App {
            index,
            name: self.name.clone(),
            why,
        };
        if self.argv.is_empty() || self.argv[0].is_empty() {
            return Err(what("empty command".into()));
        }
        if let Some(c) = self.core {
            if c >= cores {
                return Err(what(format!(
                    "core {c}: this machine has cores 0..{}",
                    cores.saturating_sub(1)
                )));
            }
        }
        Ok(())
    }

    /// Starts the command, pinned to its core, standard streams closed.
    pub(super) fn spawn(&self) -> Result<Proc> {
        let mut cmd = Command::new(&self.argv[0]);
        cmd.args(&self.argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(core) = self.core {
            // SAFETY: the closure only calls sched_setaffinity.
            unsafe {
                cmd.pre_exec(move || pin(core));
            }
        }
        let child = cmd.spawn().map_err(|e| Error::Process {
            what: format!("starting {} ({})", self.name, self.argv.join(" ")),
            source: e,
        })?;
        Ok(Proc {
            pid: child.id(),
            child,
            started: Instant::now(),
        })
    }
}

impl Proc {
    /// The run's length and exit status if it has exited.
    pub fn exited(&mut self) -> Result<Option<(Duration, std::process::ExitStatus)>> {
        match self.child.try_wait() {
            Ok(Some(status)) => Ok(Some((self.started.elapsed(), status))),
            Ok(None) => Ok(None),
            Err(e) => Err(Error::Process {
                what: format!("waiting for pid {}", self.pid),
                source: e,
            }),
        }
    }

    /// Stops it (SIGKILL) and reaps it.
    pub fn stop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
