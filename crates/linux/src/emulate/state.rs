//! The state of an emulated resctrl mount and the kernel's rules for
//! changing it: control groups (a CLOSID and an RMID each), monitoring
//! groups (an RMID each), which control and monitoring group every task
//! is in, which CPUs each group owns, and `info/last_cmd_status`.
//!
//! Every operation clears `last_cmd_status` where the kernel does and, on
//! a refusal, appends the kernel's words. Tasks are in [`super::tasks`],
//! CPUs in [`super::cpus`]. Freed RMIDs are reusable at
//! once (the kernel keeps them in limbo while their occupancy drains).

use super::controls::{Controls, Mode, Peer};
use super::counters;
use super::refusal::{Outcome, Refusal};
use crate::preset::RdtPlatform;
use cachepart_units::Kind as _;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A group: the root (`ctrl` None), a control group, or a monitoring
/// group of either (`mon`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Target {
    /// The control group's name; None for the root (default) group.
    pub ctrl: Option<String>,
    /// The monitoring group's name, for a monitoring group.
    pub mon: Option<String>,
}

impl Target {
    /// The root group.
    pub fn root() -> Self {
        Target {
            ctrl: None,
            mon: None,
        }
    }
}

/// A monitoring group (or a control group's own monitoring).
#[derive(Clone, Debug)]
pub(super) struct MonGroup {
    pub(super) rmid: u32,
    pub(super) born: Duration,
    pub(super) cpus: BTreeSet<u32>,
}

/// A control group (or the root).
#[derive(Clone, Debug)]
pub(super) struct CtrlGroup {
    pub(super) closid: u32,
    pub(super) mon: MonGroup,
    pub(super) mode: Mode,
    pub(super) controls: Controls,
    pub(super) mons: BTreeMap<String, MonGroup>,
}

/// The emulated kernel state.
#[derive(Debug)]
pub struct State {
    pub(super) platform: RdtPlatform,
    pub(super) proc_root: PathBuf,
    pub(super) start: Instant,
    pub(super) root: CtrlGroup,
    pub(super) groups: BTreeMap<String, CtrlGroup>,
    /// Thread id to (control group, monitoring group); absent means the
    /// root group and its own RMID.
    pub(super) tasks: BTreeMap<u32, Target>,
    pub(super) status: String,
}

/// Names that cannot be control groups (they are the root's own dirs).
const RESERVED: [&str; 3] = ["info", "mon_groups", "mon_data"];

impl State {
    /// A freshly mounted resctrl of `platform`; `proc_root` is where
    /// processes are looked up (`/proc`).
    pub fn new(platform: RdtPlatform, proc_root: PathBuf) -> Self {
        let root = CtrlGroup {
            closid: 0,
            mon: MonGroup {
                rmid: 0,
                born: Duration::ZERO,
                cpus: (0..platform.cpus).collect(),
            },
            mode: Mode::Shareable,
            controls: Controls::default_for(&platform),
            mons: BTreeMap::new(),
        };
        State {
            platform,
            proc_root,
            start: Instant::now(),
            root,
            groups: BTreeMap::new(),
            tasks: BTreeMap::new(),
            status: String::new(),
        }
    }

    /// The platform.
    pub fn platform(&self) -> &RdtPlatform {
        &self.platform
    }

    /// `info/last_cmd_status`: `ok` when the last command left no message.
    pub fn last_cmd_status(&self) -> String {
        if self.status.is_empty() {
            "ok\n".into()
        } else {
            self.status.clone()
        }
    }

    pub(super) fn record<T>(&mut self, r: Outcome<T>) -> Outcome<T> {
        if let Err(Refusal {
            status: Some(s), ..
        }) = &r
        {
            self.status.push_str(s);
            self.status.push('\n');
        }
        r
    }

    /// The control groups, by name.
    pub fn ctrl_names(&self) -> Vec<String> {
        self.groups.keys().cloned().collect()
    }

    /// The monitoring groups of a control group (None: the root).
    pub fn mon_names(&self, ctrl: Option<&str>) -> Vec<String> {
        self.ctrl(ctrl)
            .map(|g| g.mons.keys().cloned().collect())
            .unwrap_or_default()
    }

    pub(super) fn ctrl(&self, ctrl: Option<&str>) -> Option<&CtrlGroup> {
        match ctrl {
            None => Some(&self.root),
            Some(n) => self.groups.get(n),
        }
    }

    pub(super) fn ctrl_mut(&mut self, ctrl: Option<&str>) -> Option<&mut CtrlGroup> {
        match ctrl {
            None => Some(&mut self.root),
            Some(n) => self.groups.get_mut(n),
        }
    }

    pub(super) fn mon(&self, t: &Target) -> Option<&MonGroup> {
        let g = self.ctrl(t.ctrl.as_deref())?;
        match &t.mon {
            None => Some(&g.mon),
            Some(m) => g.mons.get(m),
        }
    }

    /// True when the group exists.
    pub fn exists(&self, t: &Target) -> bool {
        self.mon(t).is_some()
    }

    fn rmids_in_use(&self) -> BTreeSet<u32> {
        std::iter::once(&self.root)
            .chain(self.groups.values())
            .flat_map(|g| std::iter::once(g.mon.rmid).chain(g.mons.values().map(|m| m.rmid)))
            .collect()
    }

    fn alloc_rmid(&self) -> Outcome<u32> {
        let used = self.rmids_in_use();
        (1..self.platform.num_rmids)
            .find(|r| !used.contains(r))
            .ok_or_else(|| Refusal::with(libc::ENOSPC, "Out of RMIDs"))
    }

    fn new_mon(&self) -> Outcome<MonGroup> {
        Ok(MonGroup {
            rmid: self.alloc_rmid()?,
            born: self.start.elapsed(),
            cpus: BTreeSet::new(),
        })
    }

    fn check_new_name(&mut self, name: &str, taken: bool) -> Outcome {
        if name.contains('\n') {
            return Err(Refusal::bare(libc::EINVAL));
        }
        if taken {
            return Err(Refusal::bare(libc::EEXIST));
        }
        self.status.clear();
        Ok(())
    }

    /// `mkdir NAME` at the root: a control group with the default
    /// schemata, or ENOSPC "Out of CLOSIDs" / "Out of RMIDs".
    pub fn mkdir_ctrl(&mut self, name: &str) -> Outcome {
        let taken = self.groups.contains_key(name) || RESERVED.contains(&name);
        self.check_new_name(name, taken)?;
        let r = self.try_mkdir_ctrl(name);
        self.record(r)
    }

    fn try_mkdir_ctrl(&mut self, name: &str) -> Outcome {
        let used: BTreeSet<u32> = self.groups.values().map(|g| g.closid).collect();
        let closid = (1..self.platform.num_closids())
            .find(|c| !used.contains(c))
            .ok_or_else(|| Refusal::with(libc::ENOSPC, "Out of CLOSIDs"))?;
        let mon = self.new_mon()?;
        let g = CtrlGroup {
            closid,
            mon,
            mode: Mode::Shareable,
            controls: Controls::default_for(&self.platform),
            mons: BTreeMap::new(),
        };
        self.groups.insert(name.to_string(), g);
        Ok(())
    }

    /// `mkdir CTRL/mon_groups/NAME`: a monitoring group, or ENOSPC "Out
    /// of RMIDs".
    pub fn mkdir_mon(&mut self, ctrl: Option<&str>, name: &str) -> Outcome {
        let Some(g) = self.ctrl(ctrl) else {
            return Err(Refusal::bare(libc::ENOENT));
        };
        if name == "mon_groups" {
            return Err(Refusal::bare(libc::EPERM));
        }
        let taken = g.mons.contains_key(name);
        self.check_new_name(name, taken)?;
        let r = self.new_mon();
        let m = self.record(r)?;
        self.ctrl_mut(ctrl)
            .expect("checked above")
            .mons
            .insert(name.to_string(), m);
        Ok(())
    }

    /// `rmdir NAME`: the control group's tasks and CPUs go back to the
    /// root group; its CLOSID and RMIDs are freed.
    pub fn rmdir_ctrl(&mut self, name: &str) -> Outcome {
        let Some(g) = self.groups.remove(name) else {
            return Err(Refusal::bare(libc::ENOENT));
        };
        self.tasks.retain(|_, t| t.ctrl.as_deref() != Some(name));
        self.root.mon.cpus.extend(g.mon.cpus);
        Ok(())
    }

    /// `rmdir CTRL/mon_groups/NAME`: its tasks go back to the control
    /// group's own RMID; the RMID is freed.
    pub fn rmdir_mon(&mut self, ctrl: Option<&str>, name: &str) -> Outcome {
        let Some(g) = self.ctrl_mut(ctrl) else {
            return Err(Refusal::bare(libc::ENOENT));
        };
        if g.mons.remove(name).is_none() {
            return Err(Refusal::bare(libc::ENOENT));
        }
        for t in self.tasks.values_mut() {
            if t.ctrl.as_deref() == ctrl && t.mon.as_deref() == Some(name) {
                t.mon = None;
            }
        }
        self.tasks
            .retain(|_, t| t.ctrl.is_some() || t.mon.is_some());
        Ok(())
    }

    /// The `schemata` file of a control group.
    pub fn schemata(&self, ctrl: Option<&str>) -> String {
        self.ctrl(ctrl)
            .map(|g| g.controls.show(&self.platform))
            .unwrap_or_default()
    }

    /// The `size` file of a control group.
    pub fn size(&self, ctrl: Option<&str>) -> String {
        self.ctrl(ctrl)
            .map(|g| g.controls.size(&self.platform))
            .unwrap_or_default()
    }

    /// The `mode` file of a control group.
    pub fn mode(&self, ctrl: Option<&str>) -> String {
        self.ctrl(ctrl)
            .map(|g| format!("{}\n", g.mode.name()))
            .unwrap_or_default()
    }

    fn peers(&self, ctrl: Option<&str>) -> (Vec<Peer<'_>>, Controls, Mode) {
        let me = self.ctrl(ctrl).expect("caller checked the group");
        let peers = std::iter::once((None, &self.root))
            .chain(self.groups.iter().map(|(n, g)| (Some(n.as_str()), g)))
            .filter(|(n, _)| *n != ctrl)
            .map(|(_, g)| Peer {
                mode: g.mode,
                controls: &g.controls,
            })
            .collect();
        (peers, me.controls.clone(), me.mode)
    }

    /// A write to `schemata`: the text must end with a newline; all lines
    /// are checked before any is applied.
    pub fn write_schemata(&mut self, ctrl: Option<&str>, buf: &str) -> Outcome {
        let Some(body) = buf.strip_suffix('\n') else {
            return Err(Refusal::bare(libc::EINVAL));
        };
        self.status.clear();
        let (peers, mut controls, mode) = self.peers(ctrl);
        let r = controls.write(&self.platform, body, mode, &peers);
        drop(peers);
        self.record(r)?;
        self.ctrl_mut(ctrl).expect("checked by peers").controls = controls;
        Ok(())
    }

    /// A write to `mode`: `shareable`, or `exclusive` when no other group
    /// uses the group's ways.
    pub fn write_mode(&mut self, ctrl: Option<&str>, buf: &str) -> Outcome {
        let Some(word) = buf.strip_suffix('\n') else {
            return Err(Refusal::bare(libc::EINVAL));
        };
        self.status.clear();
        let (peers, controls, _) = self.peers(ctrl);
        let r = match Mode::from_name(word) {
            Some(Mode::Shareable) => Ok(Mode::Shareable),
            Some(Mode::Exclusive) => controls
                .test_exclusive(&self.platform, &peers)
                .map(|()| Mode::Exclusive),
            None => Err(Refusal::inval("Unknown or unsupported mode")),
        };
        drop(peers);
        let mode = self.record(r)?;
        self.ctrl_mut(ctrl).expect("checked by peers").mode = mode;
        Ok(())
    }

    /// A monitoring counter of a group on L3 domain `domain`.
    pub fn counter(&self, t: &Target, domain: u32, event: &str) -> String {
        let (Some(m), Some(g)) = (self.mon(t), self.ctrl(t.ctrl.as_deref())) else {
            return String::new();
        };
        let Some(d) = self.platform.domains.iter().position(|&x| x == domain) else {
            return String::new();
        };
        let p = &self.platform;
        let ways = (0..p.caches.len()).fold(0u64, |acc, s| acc | g.controls.mask(s, d));
        let cbm_len = p.caches.first().map_or(1, |c| c.cbm_len);
        let mask_bytes = p.l3_bytes / u64::from(cbm_len) * u64::from(ways.count_ones());
        let age = self.start.elapsed().saturating_sub(m.born);
        format!(
            "{}\n",
            counters::value(event, m.rmid, domain, age, mask_bytes)
        )
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::preset::Preset;

    pub(crate) fn state(preset: Preset) -> (tempfile::TempDir, State) {
        let t = tempfile::tempdir().unwrap();
        for tid in [10, 11, 12] {
            std::fs::create_dir_all(t.path().join(format!("{tid}/task/{tid}"))).unwrap();
        }
        let s = State::new(RdtPlatform::of(preset), t.path().to_path_buf());
        (t, s)
    }

    pub(crate) fn g(ctrl: &str, mon: Option<&str>) -> Target {
        Target {
            ctrl: Some(ctrl.into()),
            mon: mon.map(str::to_string),
        }
    }

    #[test]
    fn closids_and_rmids_run_out_with_the_kernels_words() {
        let (_t, mut s) = state(Preset::Cdp);
        for i in 1..8 {
            s.mkdir_ctrl(&format!("g{i}")).unwrap();
        }
        assert_eq!(
            s.mkdir_ctrl("g8"),
            Err(Refusal::with(libc::ENOSPC, "Out of CLOSIDs"))
        );
        assert_eq!(s.last_cmd_status(), "Out of CLOSIDs\n");
        assert_eq!(s.mkdir_ctrl("g1"), Err(Refusal::bare(libc::EEXIST)));
        s.rmdir_ctrl("g3").unwrap();
        s.mkdir_ctrl("again").unwrap();
        assert_eq!(s.last_cmd_status(), "ok\n");
        for i in 0..(224 - 8) {
            s.mkdir_mon(Some("g1"), &format!("m{i}")).unwrap();
        }
        assert_eq!(
            s.mkdir_mon(None, "last"),
            Err(Refusal::with(libc::ENOSPC, "Out of RMIDs"))
        );
        assert_eq!(s.last_cmd_status(), "Out of RMIDs\n");
    }

    #[test]
    fn schemata_and_mode_writes() {
        let (_t, mut s) = state(Preset::Skylake);
        s.mkdir_ctrl("a").unwrap();
        assert_eq!(
            s.write_schemata(Some("a"), "L3:0=3"),
            Err(Refusal::bare(libc::EINVAL))
        );
        s.write_schemata(Some("a"), "L3:0=3;1=3\n").unwrap();
        assert_eq!(
            s.write_mode(Some("a"), "exclusive\n"),
            Err(Refusal::inval("Schemata overlaps"))
        );
        s.write_schemata(None, "L3:0=7fc;1=7fc\n").unwrap();
        s.write_mode(Some("a"), "exclusive\n").unwrap();
        assert_eq!(s.mode(Some("a")), "exclusive\n");
        assert_eq!(
            s.write_schemata(None, "L3:0=7ff\n"),
            Err(Refusal::inval("Overlaps with exclusive group"))
        );
        assert_eq!(
            s.write_mode(Some("a"), "locked\n"),
            Err(Refusal::inval("Unknown or unsupported mode"))
        );
        assert_eq!(s.schemata(None), "    L3:0=7fc;1=7fc\n    MB:0=100;1=100\n");
    }
}
