//! The child processes of a capture and their lifetime.
//!
//! Every program a capture starts (the tool, `--version` probes, the
//! compiler) is *tied* to this process ([`tie`]): on Linux its `pre_exec`
//! sets `PR_SET_PDEATHSIG` to `SIGKILL`, so the kernel kills it when the
//! thread that started it ends, even if this process is killed with
//! `SIGKILL` and can clean nothing up. (The signal follows the starting
//! *thread*: start children from a thread that outlives them, as the
//! capture does from its caller's thread.) A child that this process is
//! still waiting for is a [`TiedChild`]: [`TiedChild::wait_or_stop`] waits
//! for it but kills and reaps it as soon as a stop is asked (an error on
//! the reading side, or the caller's cancellation), and dropping one that
//! was not reaped kills and reaps it too, so no capture leaves an orphan
//! behind, whatever path it leaves by.

use std::io;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use crate::error::{CaptureError, CaptureResult};

/// Makes `cmd`'s process die with this one (see the module documentation);
/// a no-op outside Linux.
pub(crate) fn tie(cmd: &mut Command) -> &mut Command {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let parent = std::process::id();
        // SAFETY: the closure runs in the child between fork and exec; it
        // calls only async-signal-safe functions (prctl, getppid) and
        // allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                ) == -1
                {
                    return Err(io::Error::last_os_error());
                }
                // The parent may have died before prctl: then nobody would
                // send the signal, so give up now.
                if libc::getppid() as u32 != parent {
                    return Err(io::Error::other("the capturing process is gone"));
                }
                Ok(())
            });
        }
    }
    cmd
}

/// How a [`TiedChild`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    /// It exited by itself (or was killed by someone else) with this
    /// status.
    Exited(ExitStatus),
    /// A stop was asked: it was killed and reaped.
    Stopped,
}

/// A running child that is killed and reaped if this side stops caring
/// about it (on a stop request, or on drop).
#[derive(Debug)]
pub(crate) struct TiedChild {
    child: Child,
    reaped: bool,
}

/// The first poll of [`TiedChild::wait_or_stop`] comes after this long...
const FIRST_POLL: Duration = Duration::from_millis(1);
/// ...and the interval doubles up to this: a stop takes at most this long
/// to be seen.
const MAX_POLL: Duration = Duration::from_millis(20);

impl TiedChild {
    /// Spawns `cmd`, [tied](tie) to this process.
    pub(crate) fn spawn(cmd: &mut Command) -> io::Result<TiedChild> {
        let child = tie(cmd).spawn()?;
        Ok(TiedChild {
            child,
            reaped: false,
        })
    }

    /// The child's process id.
    #[cfg(test)]
    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the child to exit; if `stop()` turns true first, kills
    /// and reaps it instead. `stop` is polled every few milliseconds.
    pub(crate) fn wait_or_stop(&mut self, stop: impl Fn() -> bool) -> io::Result<Ended> {
        let mut pause = FIRST_POLL;
        loop {
            if let Some(status) = self.child.try_wait()? {
                self.reaped = true;
                return Ok(Ended::Exited(status));
            }
            if stop() {
                self.kill_and_reap()?;
                return Ok(Ended::Stopped);
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(MAX_POLL);
        }
    }

    /// Sends `SIGKILL` (harmless if it has already exited) and reaps it.
    fn kill_and_reap(&mut self) -> io::Result<ExitStatus> {
        // an error here means it is already gone; `wait` tells
        let _ = self.child.kill();
        let status = self.child.wait()?;
        self.reaped = true;
        Ok(status)
    }
}

impl Drop for TiedChild {
    fn drop(&mut self) {
        if !self.reaped {
            let _ = self.kill_and_reap();
        }
    }
}

/// The standard output of `program --version`; a program that cannot run
/// or exits with an error becomes `missing(reason)`.
pub(crate) fn version_output(
    program: &Path,
    missing: impl Fn(io::Error) -> CaptureError,
) -> CaptureResult<String> {
    let out = tie(Command::new(program).arg("--version"))
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(&missing)?;
    if !out.status.success() {
        return Err(missing(io::Error::other(format!(
            "`--version` exited with {}",
            out.status
        ))));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;

    /// Whether process `pid` still exists (a zombie counts).
    fn alive(pid: u32) -> bool {
        Path::new(&format!("/proc/{pid}")).exists()
    }

    #[test]
    fn a_child_that_exits_gives_its_status() {
        let mut c = TiedChild::spawn(Command::new("sh").args(["-c", "exit 7"])).unwrap();
        let ended = c.wait_or_stop(|| false).unwrap();
        assert!(
            matches!(ended, Ended::Exited(s) if s.code() == Some(7)),
            "{ended:?}"
        );
    }

    #[test]
    fn a_stop_kills_and_reaps_the_child() {
        let mut c = TiedChild::spawn(Command::new("sleep").arg("30")).unwrap();
        let pid = c.id();
        let t = Instant::now();
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(100));
                stop.store(true, Ordering::SeqCst);
            });
            assert_eq!(
                c.wait_or_stop(|| stop.load(Ordering::SeqCst)).unwrap(),
                Ended::Stopped
            );
        });
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        assert!(!alive(pid), "pid {pid} survived (or was not reaped)");
    }

    #[test]
    fn dropping_a_running_child_kills_and_reaps_it() {
        let c = TiedChild::spawn(Command::new("sleep").arg("30")).unwrap();
        let pid = c.id();
        assert!(alive(pid));
        drop(c);
        assert!(!alive(pid), "pid {pid} survived (or was not reaped)");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_tied_child_dies_with_the_thread_that_started_it() {
        use std::os::unix::process::ExitStatusExt;
        // PR_SET_PDEATHSIG fires when the starting thread ends: a thread
        // that spawns a tied `sleep` and returns leaves it killed
        let mut child = std::thread::spawn(|| tie(Command::new("sleep").arg("30")).spawn())
            .join()
            .unwrap()
            .unwrap();
        let t = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if t.elapsed() > Duration::from_secs(5) {
                let _ = child.kill();
                panic!("the tied child outlived the thread that started it");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    }
}
