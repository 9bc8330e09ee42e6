//! One manager per mount: an exclusive, non-blocking `flock` on the mount
//! directory, as the kernel's resctrl documentation advises.
//!
//! The holder is named without writing anything into the mount (resctrl
//! lets no one create plain files there): the kernel lists every flock in
//! `/proc/locks` with the holder's pid and the locked inode, so a refused
//! manager finds the holder there and reads its `comm`.

use crate::error::{Error, Result};
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// The held lock; dropping it releases the mount.
#[derive(Debug)]
pub struct ManagerLock {
    _dir: File,
    mount: PathBuf,
}

impl ManagerLock {
    /// Takes the lock on `mount`, or fails with [`Error::Locked`] naming
    /// the holder (found in `proc_root/locks`).
    pub fn acquire(mount: &Path, proc_root: &Path) -> Result<Self> {
        let dir = File::open(mount).map_err(|e| Error::io(mount, e))?;
        // SAFETY: flock on a descriptor we own; no memory is passed.
        let rc = unsafe { libc::flock(dir.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                let meta = dir.metadata().map_err(|e| Error::io(mount, e))?;
                return Err(Error::Locked {
                    mount: mount.to_path_buf(),
                    holder: holder(proc_root, meta.dev(), meta.ino()),
                });
            }
            return Err(Error::io(mount, err));
        }
        Ok(ManagerLock {
            _dir: dir,
            mount: mount.to_path_buf(),
        })
    }

    /// The mount this lock holds.
    pub fn mount(&self) -> &Path {
        &self.mount
    }
}

/// `pid N (comm)` of the flock holder of (dev, ino), or `pid unknown`.
fn holder(proc_root: &Path, dev: u64, ino: u64) -> String {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let key = format!("{major:02x}:{minor:02x}:{ino}");
    let text = std::fs::read_to_string(proc_root.join("locks")).unwrap_or_default();
    let pid = text.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        // "1: FLOCK  ADVISORY  WRITE 1234 00:2a:1 0 EOF"
        (f.len() >= 6 && f[1] == "FLOCK" && f[5] == key).then(|| f[4].to_string())
    });
    match pid {
        Some(pid) => {
            let comm = std::fs::read_to_string(proc_root.join(&pid).join("comm"))
                .map(|c| format!(" ({})", c.trim()))
                .unwrap_or_default();
            format!("pid {pid}{comm}")
        }
        None => "pid unknown: not listed in /proc/locks".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_manager_is_refused_and_named() {
        let t = tempfile::tempdir().unwrap();
        let first = ManagerLock::acquire(t.path(), Path::new("/proc")).unwrap();
        let e = ManagerLock::acquire(t.path(), Path::new("/proc")).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::Locked { .. }), "{msg}");
        let me = format!("pid {}", std::process::id());
        assert!(msg.contains(&me), "{msg} should name {me}");
        drop(first);
        ManagerLock::acquire(t.path(), Path::new("/proc")).unwrap();
    }
}
