//! Where resctrl is mounted and with which options, from `/proc/mounts`.

use super::fsio::read;
use crate::error::Result;
use std::path::{Path, PathBuf};

/// A resctrl mount found in `/proc/mounts`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// The mount point.
    pub path: PathBuf,
    /// Its options (`rw,relatime,cdp,mba_MBps`).
    pub options: Vec<String>,
}

impl Mount {
    /// True when the mount has option `opt`.
    pub fn has(&self, opt: &str) -> bool {
        self.options.iter().any(|o| o == opt)
    }
}

/// The first resctrl mount listed in `proc_root/mounts`, if any; the
/// kernel's is preferred to an emulated one (`cachepart rdt emulate`).
pub fn find(proc_root: &Path) -> Result<Option<Mount>> {
    let text = read(&proc_root.join("mounts"))?;
    let of_type = |fs_type: &str| {
        text.lines().find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 4 && f[2] == fs_type).then(|| Mount {
                path: PathBuf::from(f[1]),
                options: f[3].split(',').map(str::to_string).collect(),
            })
        })
    };
    Ok(of_type("resctrl").or_else(|| of_type(crate::emulate::FS_TYPE)))
}

/// Whether `proc_root/mounts` lists `mount` as an emulated resctrl
/// (`cachepart rdt emulate`), whose rules are the kernel's but which runs
/// on any CPU and kernel.
pub fn is_emulated(proc_root: &Path, mount: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(proc_root.join("mounts")) else {
        return false;
    };
    let mount = mount.canonicalize().unwrap_or_else(|_| mount.to_path_buf());
    text.lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.len() >= 3 && f[2] == crate::emulate::FS_TYPE && Path::new(f[1]) == mount
    })
}

/// The options of the resctrl mount at `mount`, if `/proc/mounts` lists it.
pub fn options_of(proc_root: &Path, mount: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(proc_root.join("mounts")) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 4 && f[2] == "resctrl" && Path::new(f[1]) == mount)
                .then(|| f[3].split(',').map(str::to_string).collect())
        })
        .next()
        .unwrap_or_default()
}
