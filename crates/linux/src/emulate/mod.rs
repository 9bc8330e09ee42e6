//! An emulated resctrl filesystem served over FUSE, for developing and
//! testing without the hardware: it behaves as the kernel's resctrl does
//! at `write()`, `mkdir()` and `rmdir()` time, with the kernel's errno and
//! `info/last_cmd_status` words, on the platforms of [`crate::preset`]
//! (the hardware and its `info/` files).
//!
//! * [`controls`]: a group's schemata, as the kernel prints and parses it;
//! * [`state`]: groups, CLOSIDs and RMIDs, and the rules for changing
//!   them; [`tasks`] and [`cpus`]: which group each task and CPU is in;
//! * [`counters`]: the `mon_data` counters (a documented function of time);
//! * [`node`]: the directory tree derived from the state;
//! * [`fuse`]: the FUSE adapter (`fuser`, no libfuse needed: as root it
//!   mounts with mount(2)).
//!
//! [`Emulator::mount`] mounts one in the background; dropping it unmounts.
//! The mount is listed in `/proc/mounts` as `resctrl MOUNTPOINT
//! fuse.cachepart-resctrl ...` (`resctrl:cdp` with CDP: see
//! [`mount_source`]), and [`crate::resctrl::Resctrl::open`]
//! accepts it as it accepts the kernel's.

pub mod controls;
pub mod counters;
pub mod cpus;
pub mod fuse;
pub mod node;
pub mod refusal;
pub mod state;
pub mod tasks;

use crate::error::{Error, Result};
use crate::preset::{Preset, RdtPlatform};
use std::path::{Path, PathBuf};

/// The filesystem type `/proc/mounts` lists for an emulated mount.
pub const FS_TYPE: &str = "fuse.cachepart-resctrl";

/// The source name of an emulated mount with resctrl mount `options`:
/// `resctrl`, or `resctrl:cdp` (FUSE accepts no foreign mount options, so
/// the options the emulated mount stands for follow the source name in
/// `/proc/mounts`, where [`crate::resctrl::mount`] reads them).
pub fn mount_source(options: &[&str]) -> String {
    if options.is_empty() {
        "resctrl".into()
    } else {
        format!("resctrl:{}", options.join(","))
    }
}

/// A mounted emulator; dropping it unmounts.
pub struct Emulator {
    session: Option<::fuser::BackgroundSession>,
    mountpoint: PathBuf,
}

impl std::fmt::Debug for Emulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Emulator at {}", self.mountpoint.display())
    }
}

/// Refuses a mountpoint that is missing, not a directory, or not empty.
pub fn check_mountpoint(mountpoint: &Path) -> Result<()> {
    let bad = |why: String| Error::Mountpoint {
        path: mountpoint.to_path_buf(),
        why,
    };
    let meta = std::fs::metadata(mountpoint).map_err(|e| {
        bad(format!(
            "cannot use it as a mountpoint ({e}); create an empty directory first"
        ))
    })?;
    if !meta.is_dir() {
        return Err(bad("not a directory; expected an empty directory".into()));
    }
    let mut entries = std::fs::read_dir(mountpoint).map_err(|e| Error::io(mountpoint, e))?;
    if entries.next().is_some() {
        return Err(bad(
            "not empty; mount the emulator on an empty directory".into()
        ));
    }
    Ok(())
}

impl Emulator {
    /// Mounts an emulated resctrl of `preset` on the empty directory
    /// `mountpoint`; processes are looked up in `proc_root` (`/proc`).
    /// Needs root (or `fusermount3`) and `/dev/fuse`.
    pub fn mount(mountpoint: &Path, preset: Preset, proc_root: &Path) -> Result<Self> {
        check_mountpoint(mountpoint)?;
        let platform = RdtPlatform::of(preset);
        let source = mount_source(&platform.mount_options());
        let state = state::State::new(platform, proc_root.to_path_buf());
        let options = [
            ::fuser::MountOption::FSName(source),
            // A kernel option (fuser passes its Subtype only to fusermount).
            ::fuser::MountOption::CUSTOM("subtype=cachepart-resctrl".into()),
            ::fuser::MountOption::DefaultPermissions,
            ::fuser::MountOption::NoExec,
        ];
        let session = ::fuser::spawn_mount2(fuse::ResctrlFs::new(state), mountpoint, &options)
            .map_err(|e| Error::Mountpoint {
                path: mountpoint.to_path_buf(),
                why: format!(
                    "cannot mount FUSE there: {e} (it needs /dev/fuse and root, or fusermount3)"
                ),
            })?;
        Ok(Emulator {
            session: Some(session),
            mountpoint: mountpoint.to_path_buf(),
        })
    }

    /// The mount point.
    pub fn mountpoint(&self) -> &Path {
        &self.mountpoint
    }

    /// False once the filesystem was unmounted from outside (`umount`).
    pub fn is_running(&self) -> bool {
        self.session
            .as_ref()
            .is_some_and(|s| !s.guard.is_finished())
    }

    /// Unmounts. If the mount is busy (a process has a file or its working
    /// directory there), it is detached lazily instead and `Ok(false)` is
    /// returned: it disappears from the tree at once and ends when the
    /// last user lets go.
    pub fn unmount(mut self) -> Result<bool> {
        self.release()
    }

    fn release(&mut self) -> Result<bool> {
        let Some(session) = self.session.take() else {
            return Ok(true);
        };
        let path = std::ffi::CString::new(self.mountpoint.as_os_str().as_encoded_bytes()).map_err(
            |_| Error::Mountpoint {
                path: self.mountpoint.clone(),
                why: "the path contains a NUL byte".into(),
            },
        )?;
        // SAFETY: umount2 reads the NUL-terminated path we own.
        let clean = if unsafe { libc::umount2(path.as_ptr(), 0) } == 0 {
            true
        } else {
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EBUSY) => {
                    // SAFETY: as above.
                    unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) };
                    false
                }
                // Already unmounted from outside.
                Some(libc::EINVAL) => true,
                _ => return Err(Error::io(&self.mountpoint, e)),
            }
        };
        if clean {
            // The kernel ended the connection: the server thread returns.
            let _ = session.guard.join();
        }
        Ok(clean)
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.release();
    }
}
