//! Control groups (a CLOSID each) and monitoring groups (`mon_groups/`, an
//! RMID each): create and remove them under the owned prefix, write their
//! schemata, move processes into them and read their counters.

use super::fsio::read;
use super::info::Capabilities;
use super::monitor::MonReading;
use super::schemata::Schemata;
use super::{mount, PREFIX};
use crate::error::{Error, Result};
use std::collections::BTreeSet;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

/// statfs magic of a resctrl mount (`RDTGROUP_SUPER_MAGIC`).
const RESCTRL_MAGIC: i64 = 0x7655821;

/// Directories at the mount root that are not control groups.
const NOT_GROUPS: [&str; 3] = ["info", "mon_groups", "mon_data"];

/// A control group, a monitoring group, or the root (default) group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRef {
    /// Directory name (empty for the root group).
    pub name: String,
    /// The control group holding this monitoring group, if it is one.
    pub parent: Option<String>,
    /// The group's directory.
    pub dir: PathBuf,
}

impl GroupRef {
    /// `NAME`, or `PARENT/mon_groups/NAME` for a monitoring group, or `/`.
    pub fn path_name(&self) -> String {
        match (&self.parent, self.name.as_str()) {
            (_, "") => "/".into(),
            (Some(p), n) if !p.is_empty() => format!("{p}/mon_groups/{n}"),
            (Some(_), n) => format!("mon_groups/{n}"),
            (None, n) => n.into(),
        }
    }
}

/// A resctrl mount with its capabilities.
#[derive(Debug)]
pub struct Resctrl {
    caps: Capabilities,
    proc_root: PathBuf,
    /// A plain directory: cachepart plays the kernel's part in mkdir/rmdir.
    plain: bool,
    owner: u32,
}

/// True when `path` is a resctrl filesystem (statfs magic).
#[cfg(target_os = "linux")]
fn is_resctrl(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: statfs fills the zeroed struct we pass; the path is a valid C string.
    unsafe {
        let mut s: libc::statfs = std::mem::zeroed();
        libc::statfs(c.as_ptr(), &mut s) == 0 && s.f_type as i64 == RESCTRL_MAGIC
    }
}

/// resctrl exists only on Linux.
#[cfg(not(target_os = "linux"))]
fn is_resctrl(_path: &Path) -> bool {
    false
}

fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-')
        && !name.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(Error::BadName {
            name: name.into(),
            why: "expected 1 to 64 letters, digits, '_', '.' or '-', not starting with '.'".into(),
        })
    }
}

impl Resctrl {
    /// Opens the resctrl mount at `mount`; `proc_root` is `/proc`. Refuses
    /// a directory that is not a resctrl filesystem, the kernel's or the
    /// emulated one ([`crate::emulate`]).
    pub fn open(mount: &Path, proc_root: &Path) -> Result<Self> {
        if !is_resctrl(mount) && !mount::is_emulated(proc_root, mount) {
            return Err(Error::parse(
                mount,
                "not a resctrl filesystem; mount it with: mount -t resctrl resctrl /sys/fs/resctrl",
            ));
        }
        Self::open_any(mount, proc_root, false)
    }

    /// Opens a plain directory laid out like a resctrl mount (see
    /// [`crate::fake`]). A plain directory cannot populate new groups or
    /// refuse writes as the kernel does, so cachepart creates the files a
    /// new group would have and checks only what it writes itself.
    pub fn open_plain(mount: &Path, proc_root: &Path) -> Result<Self> {
        Self::open_any(mount, proc_root, true)
    }

    fn open_any(mount: &Path, proc_root: &Path, plain: bool) -> Result<Self> {
        let mbps = mount::options_of(proc_root, mount)
            .iter()
            .any(|o| o == "mba_MBps");
        Ok(Resctrl {
            caps: Capabilities::read(mount, mbps)?,
            proc_root: proc_root.to_path_buf(),
            plain,
            owner: std::process::id(),
        })
    }

    /// The mount's capabilities.
    pub fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    /// The mount point.
    pub fn mount(&self) -> &Path {
        &self.caps.mount
    }

    /// The `/proc` this mount's processes are read from.
    pub fn proc_root(&self) -> &Path {
        &self.proc_root
    }

    /// The root (default) group.
    pub fn root(&self) -> GroupRef {
        GroupRef {
            name: String::new(),
            parent: None,
            dir: self.mount().to_path_buf(),
        }
    }

    fn subdirs(dir: &Path) -> Result<Vec<String>> {
        if !dir.is_dir() {
            return Ok(Vec::new());
        }
        let mut names = Vec::new();
        for e in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
            let e = e.map_err(|e| Error::io(dir, e))?;
            if e.file_type().map_err(|x| Error::io(e.path(), x))?.is_dir() {
                names.push(e.file_name().to_string_lossy().into_owned());
            }
        }
        names.sort();
        Ok(names)
    }

    /// Every control group but the root, owned or not, by name.
    pub fn control_groups(&self) -> Result<Vec<GroupRef>> {
        Ok(Self::subdirs(self.mount())?
            .into_iter()
            .filter(|n| !NOT_GROUPS.contains(&n.as_str()))
            .map(|n| GroupRef {
                dir: self.mount().join(&n),
                name: n,
                parent: None,
            })
            .collect())
    }

    /// The monitoring groups of a control group (or of the root).
    pub fn mon_groups(&self, group: &GroupRef) -> Result<Vec<GroupRef>> {
        Ok(Self::subdirs(&group.dir.join("mon_groups"))?
            .into_iter()
            .map(|n| GroupRef {
                dir: group.dir.join("mon_groups").join(&n),
                name: n,
                parent: Some(group.name.clone()),
            })
            .collect())
    }

    /// The same mount, with groups it creates owned by process `pid`
    /// instead of this one: they then live as long as that process (see
    /// [`super::cleanup`]). `cachepart rdt set` makes a group owned by the
    /// first process it places, so that the group outlives the command.
    pub fn with_owner(mut self, pid: u32) -> Self {
        self.owner = pid;
        self
    }

    /// The full name of an owned group: `cachepart-PID-NAME`.
    pub fn owned_name(&self, name: &str) -> String {
        format!("{PREFIX}{}-{name}", self.owner)
    }

    fn mkdir(&self, dir: &Path, mon: bool) -> Result<()> {
        std::fs::create_dir(dir).map_err(|e| {
            let status = self.last_cmd_status();
            if e.raw_os_error() == Some(libc::ENOSPC) {
                Error::Refused {
                    path: dir.to_path_buf(),
                    written: "mkdir".into(),
                    source: e,
                    status,
                }
            } else {
                Error::io(dir, e)
            }
        })?;
        if self.plain {
            crate::fake::populate_group(dir, &self.caps, mon).map_err(|e| Error::io(dir, e))?;
        }
        Ok(())
    }

    fn rmids_in_use(&self) -> Result<u32> {
        let mut n = 1 + self.mon_groups(&self.root())?.len();
        for g in self.control_groups()? {
            n += 1 + self.mon_groups(&g)?.len();
        }
        Ok(n as u32)
    }

    /// Creates the owned control group `cachepart-PID-NAME`, after checking
    /// that a CLOSID (and, with monitoring, an RMID) is free.
    pub fn create_group(&self, name: &str) -> Result<GroupRef> {
        check_name(name)?;
        let used = 1 + self.control_groups()?.len() as u32;
        let total = self.caps.num_closids();
        if used >= total {
            return Err(Error::Exhausted {
                mount: self.mount().to_path_buf(),
                what: "CLOSID",
                used,
                total,
            });
        }
        self.check_rmid()?;
        let full = self.owned_name(name);
        let g = GroupRef {
            dir: self.mount().join(&full),
            name: full,
            parent: None,
        };
        self.mkdir(&g.dir, false)?;
        Ok(g)
    }

    fn check_rmid(&self) -> Result<()> {
        if let Some(mon) = &self.caps.mon {
            let used = self.rmids_in_use()?;
            if used >= mon.num_rmids {
                return Err(Error::Exhausted {
                    mount: self.mount().to_path_buf(),
                    what: "RMID",
                    used,
                    total: mon.num_rmids,
                });
            }
        }
        Ok(())
    }

    /// Creates the owned monitoring group `cachepart-PID-NAME` in `parent`.
    pub fn create_mon_group(&self, parent: &GroupRef, name: &str) -> Result<GroupRef> {
        check_name(name)?;
        if self.caps.mon.is_none() {
            return Err(Error::Unsupported {
                mount: self.mount().to_path_buf(),
                what: "L3 monitoring (info/L3_MON)".into(),
                found: self.caps.resource_names(),
            });
        }
        self.check_rmid()?;
        let full = self.owned_name(name);
        let g = GroupRef {
            dir: parent.dir.join("mon_groups").join(&full),
            name: full,
            parent: Some(parent.name.clone()),
        };
        self.mkdir(&g.dir, true)?;
        Ok(g)
    }

    /// Removes an owned group (its tasks go back to the parent group).
    pub fn remove(&self, group: &GroupRef) -> Result<()> {
        if !group.name.starts_with(PREFIX) {
            return Err(Error::BadName {
                name: group.path_name(),
                why: format!("cachepart removes only the groups it owns ({PREFIX}*)"),
            });
        }
        let r = if self.plain {
            std::fs::remove_dir_all(&group.dir)
        } else {
            std::fs::remove_dir(&group.dir)
        };
        r.map_err(|e| Error::io(&group.dir, e))
    }

    /// `info/last_cmd_status`, or why it could not be read.
    pub fn last_cmd_status(&self) -> String {
        let p = self.mount().join("info/last_cmd_status");
        match std::fs::read_to_string(&p) {
            Ok(t) => t.trim().to_string(),
            Err(e) => format!("{} unreadable: {e}", p.display()),
        }
    }

    /// A group's schemata.
    pub fn read_schemata(&self, group: &GroupRef) -> Result<Schemata> {
        let p = group.dir.join("schemata");
        Schemata::parse(&read(&p)?, &p)
    }

    /// Checks every line with the mount's rules, then writes them in one
    /// write (ending with a newline). A refused write reports
    /// `info/last_cmd_status`.
    pub fn write_schemata(&self, group: &GroupRef, schemata: &Schemata) -> Result<()> {
        for line in schemata.lines.values() {
            self.caps.check_line(line)?;
        }
        let p = group.dir.join("schemata");
        let text = schemata.to_write();
        self.write_file(&p, &text, false)
    }

    /// Writes schemata lines as given, in resctrl's syntax
    /// (`L3:0=ff;1=f0`, one line per resource), adding the final newline
    /// if missing; nothing is checked first, so the kernel decides, and a
    /// refusal carries `info/last_cmd_status`.
    pub fn write_schemata_text(&self, group: &GroupRef, text: &str) -> Result<()> {
        let mut text = text.to_string();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        self.write_file(&group.dir.join("schemata"), &text, false)
    }

    fn write_file(&self, path: &Path, text: &str, append: bool) -> Result<()> {
        let mut f = OpenOptions::new()
            .write(true)
            .append(append)
            .truncate(!append)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        f.write_all(text.as_bytes()).map_err(|e| Error::Refused {
            path: path.to_path_buf(),
            written: text.trim_end().to_string(),
            source: e,
            status: self.last_cmd_status(),
        })
    }

    /// The thread ids in a group's `tasks`.
    pub fn tasks(&self, group: &GroupRef) -> Result<BTreeSet<u32>> {
        let p = group.dir.join("tasks");
        read(&p)?
            .split_whitespace()
            .map(|t| {
                t.parse()
                    .map_err(|_| Error::parse(&p, format!("expected thread ids, found '{t}'")))
            })
            .collect()
    }

    /// The thread ids of process `pid` (`/proc/PID/task/*`).
    pub fn threads(&self, pid: u32) -> Result<BTreeSet<u32>> {
        let dir = self.proc_root.join(pid.to_string()).join("task");
        let mut tids = BTreeSet::new();
        for e in std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))? {
            let e = e.map_err(|e| Error::io(&dir, e))?;
            if let Ok(t) = e.file_name().to_string_lossy().parse() {
                tids.insert(t);
            }
        }
        Ok(tids)
    }

    /// Moves every thread of `pid` into `group`, one thread id per write
    /// as the kernel requires; threads that exit meanwhile are skipped.
    /// Returns the threads moved.
    pub fn move_process(&self, group: &GroupRef, pid: u32) -> Result<Vec<u32>> {
        let tids = self.threads(pid)?;
        self.move_threads(group, tids.into_iter())
    }

    /// Moves the threads of `pid` not yet listed in `group`'s `tasks`
    /// (threads born since the last move); run it every interval.
    pub fn resync(&self, group: &GroupRef, pid: u32) -> Result<Vec<u32>> {
        let have = self.tasks(group)?;
        let tids = self.threads(pid)?;
        self.move_threads(group, tids.into_iter().filter(|t| !have.contains(t)))
    }

    fn move_threads(&self, group: &GroupRef, tids: impl Iterator<Item = u32>) -> Result<Vec<u32>> {
        let p = group.dir.join("tasks");
        let mut moved = Vec::new();
        for tid in tids {
            match self.write_file(&p, &format!("{tid}\n"), true) {
                Ok(()) => moved.push(tid),
                Err(Error::Refused { source, .. })
                    if source.raw_os_error() == Some(libc::ESRCH) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(moved)
    }

    /// The group's monitoring counters.
    pub fn read_monitor(&self, group: &GroupRef) -> Result<MonReading> {
        MonReading::read(&group.dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::{self, Preset};
    use crate::resctrl::{remove_stale_groups, Resource, SchemataLine, Value};
    use cachepart_units::WayMask;
    use tempfile::TempDir;

    fn setup(preset: Preset) -> (TempDir, Resctrl) {
        let t = tempfile::tempdir().unwrap();
        let mount = t.path().join("resctrl");
        let proc_root = t.path().join("proc");
        fake::resctrl(&mount, preset).unwrap();
        fake::proc_tree(&proc_root, true, &mount).unwrap();
        let rdt = Resctrl::open_plain(&mount, &proc_root).unwrap();
        (t, rdt)
    }

    fn line(text: &str) -> Schemata {
        let l = SchemataLine::parse(text).unwrap();
        let mut s = Schemata::default();
        s.lines.insert(l.resource, l);
        s
    }

    #[test]
    fn skylake_capabilities() {
        let (_t, rdt) = setup(Preset::Skylake);
        let c = rdt.capabilities();
        assert_eq!(c.caches[&Resource::L3].ways(), 11);
        assert_eq!(c.num_closids(), 16);
        assert_eq!(c.domains[&Resource::L3], vec![0, 1]);
        let mb = c.mb.as_ref().unwrap();
        assert_eq!(
            (mb.bandwidth_gran, mb.min_bandwidth, mb.units),
            (10, 10, crate::resctrl::MbUnits::Percent)
        );
        assert_eq!(c.mon.as_ref().unwrap().num_rmids, 224);
        assert!(!c.cdp());
    }

    #[test]
    fn open_refuses_a_plain_directory() {
        let (t, _rdt) = setup(Preset::Skylake);
        let e = Resctrl::open(&t.path().join("resctrl"), Path::new("/proc")).unwrap_err();
        assert!(e.to_string().contains("not a resctrl filesystem"), "{e}");
    }

    #[test]
    fn writes_validated_schemata_with_newline() {
        let (_t, rdt) = setup(Preset::Skylake);
        let g = rdt.create_group("web").unwrap();
        assert_eq!(g.name, format!("cachepart-{}-web", std::process::id()));
        assert_eq!(
            rdt.read_schemata(&g).unwrap().to_write(),
            "L3:0=7ff;1=7ff\nMB:0=100;1=100\n"
        );
        let s = Schemata::parse("L3:0=00f;1=0f0\nMB:0=50;1=100\n", Path::new("x")).unwrap();
        rdt.write_schemata(&g, &s).unwrap();
        let written = std::fs::read_to_string(g.dir.join("schemata")).unwrap();
        assert_eq!(written, "L3:0=f;1=f0\nMB:0=50;1=100\n");
        assert_eq!(rdt.read_schemata(&g).unwrap(), s);
    }

    #[test]
    fn refuses_what_the_kernel_refuses_before_writing() {
        let (_t, rdt) = setup(Preset::Skylake);
        let g = rdt.create_group("a").unwrap();
        let before = std::fs::read_to_string(g.dir.join("schemata")).unwrap();
        let cases = [
            ("L3:0=5", "non-consecutive 1-bits"),
            ("L3:0=800", "Mask out of range"),
            ("L3:0=0", "Mask out of range"),
            ("L3:2=f", "Unknown or unsupported domain id 2"),
            ("L2:0=f", "Unknown or unsupported resource name 'L2'"),
            ("MB:0=5", "MB value 5 out of range [10,100]"),
            ("MB:0=110", "MB value 110 out of range [10,100]"),
            ("MB:0=55", "not a multiple of bandwidth_gran 10"),
        ];
        for (text, words) in cases {
            let e = rdt.write_schemata(&g, &line(text)).unwrap_err().to_string();
            assert!(e.contains(words), "{text}: {e}");
        }
        assert_eq!(
            std::fs::read_to_string(g.dir.join("schemata")).unwrap(),
            before
        );
    }

    #[test]
    fn cdp_and_amd_rules() {
        let (_t, rdt) = setup(Preset::Cdp);
        assert!(rdt.capabilities().cdp());
        assert_eq!(rdt.capabilities().num_closids(), 8);
        let g = rdt.create_group("c").unwrap();
        let s = Schemata::parse("L3CODE:0=7f0;1=7f0\nL3DATA:0=f;1=f\n", Path::new("x")).unwrap();
        rdt.write_schemata(&g, &s).unwrap();
        assert_eq!(
            rdt.read_schemata(&g).unwrap().lines[&Resource::L3Data].domains[&1],
            Value::Mask(WayMask(0xf))
        );
        assert!(rdt.write_schemata(&g, &line("L3:0=f")).is_err());

        let (_t, rdt) = setup(Preset::Amd);
        let mb = rdt.capabilities().mb.clone().unwrap();
        assert_eq!(mb.units, crate::resctrl::MbUnits::AmdUnits);
        let g = rdt.create_group("amd").unwrap();
        rdt.write_schemata(&g, &line("L3:0=f0f;1=0")).unwrap();
        rdt.write_schemata(&g, &line("MB:0=1024;1=3")).unwrap();
        let e = rdt
            .write_schemata(&g, &line("MB:0=4096"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("MB value 4096 out of range [0,2048]"), "{e}");
        let e = rdt
            .write_schemata(&g, &line("L3:0=10000"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("Mask out of range"), "{e}");
    }

    #[test]
    fn closids_and_rmids_are_counted() {
        let (_t, rdt) = setup(Preset::Cdp);
        for i in 0..7 {
            rdt.create_group(&format!("g{i}")).unwrap();
        }
        let e = rdt.create_group("g7").unwrap_err();
        assert!(
            matches!(
                e,
                Error::Exhausted {
                    what: "CLOSID",
                    used: 8,
                    total: 8,
                    ..
                }
            ),
            "{e}"
        );
        assert!(
            e.to_string().contains("no free CLOSID: 8 of 8 in use"),
            "{e}"
        );
        let (_t, rdt) = setup(Preset::Skylake);
        let g = rdt.create_group("m").unwrap();
        for i in 0..222 {
            rdt.create_mon_group(&g, &format!("m{i}")).unwrap();
        }
        let e = rdt.create_mon_group(&g, "last").unwrap_err().to_string();
        assert!(e.contains("no free RMID: 224 of 224"), "{e}");
    }

    #[test]
    fn bad_names_are_refused() {
        let (_t, rdt) = setup(Preset::Skylake);
        for bad in ["", "a/b", ".x", "sp ace"] {
            let e = rdt.create_group(bad).unwrap_err().to_string();
            assert!(e.contains(&format!("group name '{bad}'")), "{e}");
        }
        std::fs::create_dir(rdt.mount().join("theirs")).unwrap();
        let theirs = rdt
            .control_groups()
            .unwrap()
            .into_iter()
            .find(|g| g.name == "theirs")
            .unwrap();
        let e = rdt.remove(&theirs).unwrap_err().to_string();
        assert!(e.contains("only the groups it owns"), "{e}");
        assert!(rdt.mount().join("theirs").is_dir());
    }

    #[test]
    fn moves_every_thread_and_resyncs_new_ones() {
        let (t, rdt) = setup(Preset::Skylake);
        let proc_root = t.path().join("proc");
        fake::process(&proc_root, 4242, "xz", &[4242, 4243]).unwrap();
        let g = rdt.create_group("xz").unwrap();
        assert_eq!(rdt.move_process(&g, 4242).unwrap(), vec![4242, 4243]);
        assert_eq!(
            std::fs::read_to_string(g.dir.join("tasks")).unwrap(),
            "4242\n4243\n"
        );
        fake::process(&proc_root, 4242, "xz", &[4250]).unwrap();
        assert_eq!(rdt.resync(&g, 4242).unwrap(), vec![4250]);
        assert_eq!(rdt.resync(&g, 4242).unwrap(), Vec::<u32>::new());
        assert_eq!(
            rdt.tasks(&g).unwrap().into_iter().collect::<Vec<_>>(),
            vec![4242, 4243, 4250]
        );
        let e = rdt.move_process(&g, 999).unwrap_err().to_string();
        assert!(e.contains("999/task"), "{e}");
    }

    #[test]
    fn monitor_counters_of_a_mon_group() {
        let (_t, rdt) = setup(Preset::Skylake);
        let g = rdt.create_group("m").unwrap();
        let m = rdt.create_mon_group(&g, "one").unwrap();
        std::fs::write(m.dir.join("mon_data/mon_L3_01/llc_occupancy"), "65536\n").unwrap();
        std::fs::write(
            m.dir.join("mon_data/mon_L3_00/llc_occupancy"),
            "Unavailable\n",
        )
        .unwrap();
        let r = rdt.read_monitor(&m).unwrap();
        assert_eq!(r.domains.len(), 2);
        assert_eq!(r.llc_occupancy(), Some(65536));
        assert_eq!(m.path_name(), format!("{}/mon_groups/{}", g.name, m.name));
    }

    #[test]
    fn stale_groups_are_removed_live_ones_kept() {
        let (t, rdt) = setup(Preset::Skylake);
        let proc_root = t.path().join("proc");
        fake::process(&proc_root, 77, "cachepart", &[77]).unwrap();
        for name in ["cachepart-77-alive", "cachepart-99-dead", "someone-else"] {
            std::fs::create_dir(rdt.mount().join(name)).unwrap();
        }
        let mine = rdt.create_group("mine").unwrap();
        let ghost = rdt
            .mount()
            .join("cachepart-77-alive/mon_groups/cachepart-98-ghost");
        std::fs::create_dir_all(&ghost).unwrap();
        let root_ghost = rdt.mount().join("mon_groups/cachepart-97-ghost");
        std::fs::create_dir_all(&root_ghost).unwrap();
        // Our own pid is not in the fake /proc: make it so.
        fake::process(&proc_root, std::process::id(), "test", &[]).unwrap();
        let removed = remove_stale_groups(&rdt).unwrap();
        assert_eq!(
            removed,
            vec![
                "mon_groups/cachepart-97-ghost",
                "cachepart-77-alive/mon_groups/cachepart-98-ghost",
                "cachepart-99-dead"
            ]
        );
        assert!(!ghost.exists() && !root_ghost.exists());
        assert!(mine.dir.is_dir());
        assert!(rdt.mount().join("someone-else").is_dir());
        assert!(rdt.mount().join("cachepart-77-alive").is_dir());
    }
}
