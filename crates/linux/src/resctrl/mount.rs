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

/// One line of `/proc/mounts`: where, which file system, which options.
struct Entry<'a> {
    path: &'a Path,
    fs_type: &'a str,
    options: &'a str,
}

/// The lines of a `/proc/mounts` text that have at least the four fields.
fn entries(text: &str) -> impl Iterator<Item = Entry<'_>> {
    text.lines().filter_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() >= 4).then(|| Entry {
            path: Path::new(f[1]),
            fs_type: f[2],
            options: f[3],
        })
    })
}

impl Entry<'_> {
    fn mount(&self) -> Mount {
        Mount {
            path: self.path.to_path_buf(),
            options: self.options.split(',').map(str::to_string).collect(),
        }
    }
}

/// The first resctrl mount listed in `proc_root/mounts`, if any; the
/// kernel's is preferred to an emulated one (`cachepart rdt emulate`).
pub fn find(proc_root: &Path) -> Result<Option<Mount>> {
    let text = read(&proc_root.join("mounts"))?;
    let of_type = |fs_type: &str| {
        entries(&text)
            .find(|e| e.fs_type == fs_type)
            .map(|e| e.mount())
    };
    Ok(of_type("resctrl").or_else(|| of_type(crate::emulate::FS_TYPE)))
}

/// The mount of file-system type `fs_type` at `mount` that
/// `proc_root/mounts` lists, if any.
fn mounted_at(proc_root: &Path, mount: &Path, fs_type: &str) -> Option<Mount> {
    let text = std::fs::read_to_string(proc_root.join("mounts")).ok()?;
    let found = entries(&text)
        .find(|e| e.fs_type == fs_type && e.path == mount)
        .map(|e| e.mount());
    found
}

/// Whether `proc_root/mounts` lists `mount` as an emulated resctrl
/// (`cachepart rdt emulate`), whose rules are the kernel's but which runs
/// on any CPU and kernel.
pub fn is_emulated(proc_root: &Path, mount: &Path) -> bool {
    mounted_at(proc_root, mount, crate::emulate::FS_TYPE).is_some()
}

/// The options of the resctrl mount at `mount`, if `/proc/mounts` lists it.
pub fn options_of(proc_root: &Path, mount: &Path) -> Vec<String> {
    mounted_at(proc_root, mount, "resctrl")
        .map(|m| m.options)
        .unwrap_or_default()
}
