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
    source: &'a str,
    path: PathBuf,
    fs_type: &'a str,
    options: &'a str,
}

/// The lines of a `/proc/mounts` text that have at least the four fields.
fn entries(text: &str) -> impl Iterator<Item = Entry<'_>> {
    text.lines().filter_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() >= 4).then(|| Entry {
            source: f[0],
            path: unescape(f[1]),
            fs_type: f[2],
            options: f[3],
        })
    })
}

/// A mount point as `/proc/mounts` writes it, with a space, tab, newline
/// or backslash as an octal escape (`\040`), back to the path.
fn unescape(field: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b.get(i + 1..i + 4).filter(|d| {
            b[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)) && d[0] <= b'3'
        });
        match octal {
            Some(d) => {
                out.push(d.iter().fold(0u8, |v, c| v * 8 + (c - b'0')));
                i += 4;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

impl Entry<'_> {
    /// The mount; an emulated one's options are FUSE's followed by the
    /// resctrl options its source names (`resctrl:cdp`, see
    /// [`crate::emulate::mount_source`]).
    fn mount(&self) -> Mount {
        let mut options: Vec<String> = self.options.split(',').map(str::to_string).collect();
        if self.fs_type == crate::emulate::FS_TYPE {
            if let Some((_, rest)) = self.source.split_once(':') {
                options.extend(rest.split(',').map(str::to_string));
            }
        }
        Mount {
            path: self.path.clone(),
            options,
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
/// `proc_root/mounts` lists, if any. The list holds absolute paths with
/// symbolic links resolved, so `mount` is looked up as given and resolved
/// (a relative path, `..`, a link to the mount point).
fn mounted_at(proc_root: &Path, mount: &Path, fs_type: &str) -> Option<Mount> {
    let text = std::fs::read_to_string(proc_root.join("mounts")).ok()?;
    let resolved = std::fs::canonicalize(mount).ok();
    let found = entries(&text)
        .find(|e| e.fs_type == fs_type && (e.path == mount || resolved.as_deref() == Some(&e.path)))
        .map(|e| e.mount());
    found
}

/// Whether `proc_root/mounts` lists `mount` as an emulated resctrl
/// (`cachepart rdt emulate`), whose rules are the kernel's but which runs
/// on any CPU and kernel.
pub fn is_emulated(proc_root: &Path, mount: &Path) -> bool {
    mounted_at(proc_root, mount, crate::emulate::FS_TYPE).is_some()
}

/// The options of the resctrl mount at `mount`, the kernel's or an
/// emulated one, if `/proc/mounts` lists it.
pub fn options_of(proc_root: &Path, mount: &Path) -> Vec<String> {
    mounted_at(proc_root, mount, "resctrl")
        .or_else(|| mounted_at(proc_root, mount, crate::emulate::FS_TYPE))
        .map(|m| m.options)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_and_emulated_mounts_give_their_options() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(
            t.path().join("mounts"),
            "proc /proc proc rw 0 0\n\
             resctrl /emu fuse.cachepart-resctrl rw,nosuid,user_id=0,group_id=0 0 0\n\
             resctrl:cdp /emu-cdp fuse.cachepart-resctrl rw,nosuid,user_id=0,group_id=0 0 0\n\
             resctrl /sys/fs/resctrl resctrl rw,relatime,cdp,mba_MBps 0 0\n",
        )
        .unwrap();
        let opts = |m: &str| options_of(t.path(), Path::new(m));
        assert_eq!(
            opts("/sys/fs/resctrl"),
            ["rw", "relatime", "cdp", "mba_MBps"]
        );
        assert!(
            !opts("/emu").iter().any(|o| o == "cdp"),
            "{:?}",
            opts("/emu")
        );
        assert_eq!(opts("/emu-cdp").last().map(String::as_str), Some("cdp"));
        assert!(opts("/elsewhere").is_empty());
        let found = find(t.path()).unwrap().unwrap();
        assert!(found.has("mba_MBps") && found.path == Path::new("/sys/fs/resctrl"));
        assert!(is_emulated(t.path(), Path::new("/emu-cdp")));
    }

    /// `/proc/mounts` lists the mount point absolute, resolved and with a
    /// space escaped; the mount given relative, through a link or with a
    /// space in its name is found there all the same (it was "not a
    /// resctrl filesystem", and a kernel mount lost its `mba_MBps`).
    #[test]
    fn a_mount_given_relative_or_through_a_link_is_found() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        let (emu, spaced) = (root.join("emu"), root.join("my emu"));
        std::fs::create_dir(&emu).unwrap();
        std::fs::create_dir(&spaced).unwrap();
        std::os::unix::fs::symlink(&emu, root.join("link")).unwrap();
        std::fs::write(
            root.join("mounts"),
            format!(
                "resctrl {} fuse.cachepart-resctrl rw,nosuid 0 0\n\
                 resctrl {} resctrl rw,relatime,mba_MBps 0 0\n",
                emu.display(),
                root.join("my\\040emu").display()
            ),
        )
        .unwrap();
        // the same directory relative to the working directory
        let cwd = std::env::current_dir().unwrap();
        let mut relative: PathBuf = cwd.components().skip(1).map(|_| "..").collect();
        relative.push(emu.strip_prefix("/").unwrap());
        for given in [
            emu.clone(),
            relative,
            root.join("link"),
            root.join("emu/../emu"),
        ] {
            assert!(is_emulated(&root, &given), "{}", given.display());
        }
        assert!(
            !is_emulated(&root, &root),
            "the directory above is no mount"
        );
        assert_eq!(options_of(&root, &spaced).last().unwrap(), "mba_MBps");
        assert_eq!(unescape("/a\\134b\\011c\\9"), Path::new("/a\\b\tc\\9"));
    }
}
