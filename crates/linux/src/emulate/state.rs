//! The state of an emulated resctrl mount and the kernel's rules for
//! changing it: control groups (a CLOSID and an RMID each), monitoring
//! groups (an RMID each), which control and monitoring group every task
//! is in, which CPUs each group owns, and `info/last_cmd_status`.
//!
//! Every operation clears `last_cmd_status` where the kernel does and, on
//! a refusal, appends the kernel's words. Freed RMIDs are reusable at
//! once (the kernel keeps them in limbo while their occupancy drains).

use super::controls::{Controls, Mode, Peer};
use super::counters;
use super::platform::Platform;
use super::refusal::{kstrtoint, Outcome, Refusal};
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

#[derive(Clone, Debug)]
struct MonGroup {
    rmid: u32,
    born: Duration,
    cpus: BTreeSet<u32>,
}

#[derive(Clone, Debug)]
struct CtrlGroup {
    closid: u32,
    mon: MonGroup,
    mode: Mode,
    controls: Controls,
    mons: BTreeMap<String, MonGroup>,
}

/// The emulated kernel state.
#[derive(Debug)]
pub struct State {
    platform: Platform,
    proc_root: PathBuf,
    start: Instant,
    root: CtrlGroup,
    groups: BTreeMap<String, CtrlGroup>,
    /// Thread id to (control group, monitoring group); absent means the
    /// root group and its own RMID.
    tasks: BTreeMap<u32, Target>,
    status: String,
}

/// Names that cannot be control groups (they are the root's own dirs).
const RESERVED: [&str; 3] = ["info", "mon_groups", "mon_data"];

impl State {
    /// A freshly mounted resctrl of `platform`; `proc_root` is where
    /// processes are looked up (`/proc`).
    pub fn new(platform: Platform, proc_root: PathBuf) -> Self {
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
    pub fn platform(&self) -> &Platform {
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

    fn record<T>(&mut self, r: Outcome<T>) -> Outcome<T> {
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

    fn ctrl(&self, ctrl: Option<&str>) -> Option<&CtrlGroup> {
        match ctrl {
            None => Some(&self.root),
            Some(n) => self.groups.get(n),
        }
    }

    fn ctrl_mut(&mut self, ctrl: Option<&str>) -> Option<&mut CtrlGroup> {
        match ctrl {
            None => Some(&mut self.root),
            Some(n) => self.groups.get_mut(n),
        }
    }

    fn mon(&self, t: &Target) -> Option<&MonGroup> {
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

    fn alive(&self, tid: u32) -> bool {
        self.proc_root.join(tid.to_string()).exists()
    }

    /// The `tasks` file: the threads in the group (a control group lists
    /// those of its monitoring groups too; the root lists every thread
    /// not in another control group). Exited threads are dropped.
    pub fn tasks(&mut self, t: &Target) -> String {
        let gone: Vec<u32> = self
            .tasks
            .keys()
            .copied()
            .filter(|&tid| !self.alive(tid))
            .collect();
        for tid in gone {
            self.tasks.remove(&tid);
        }
        let mut tids: Vec<u32> = match (&t.ctrl, &t.mon) {
            (None, None) => {
                let mut all = self.system_threads();
                all.retain(|tid| self.tasks.get(tid).is_none_or(|x| x.ctrl.is_none()));
                all
            }
            (c, None) => self
                .tasks
                .iter()
                .filter(|(_, x)| &x.ctrl == c)
                .map(|(k, _)| *k)
                .collect(),
            _ => self
                .tasks
                .iter()
                .filter(|(_, x)| *x == t)
                .map(|(k, _)| *k)
                .collect(),
        };
        tids.sort_unstable();
        tids.iter().map(|t| format!("{t}\n")).collect()
    }

    fn system_threads(&self) -> Vec<u32> {
        let mut out = Vec::new();
        let Ok(procs) = std::fs::read_dir(&self.proc_root) else {
            return out;
        };
        for p in procs.flatten() {
            if p.file_name().to_string_lossy().parse::<u32>().is_err() {
                continue;
            }
            if let Ok(threads) = std::fs::read_dir(p.path().join("task")) {
                out.extend(
                    threads
                        .flatten()
                        .filter_map(|t| t.file_name().to_string_lossy().parse::<u32>().ok()),
                );
            }
        }
        out
    }

    /// A write to `tasks`: comma-separated thread ids (0: the writer),
    /// moved one by one until one fails.
    pub fn write_tasks(&mut self, t: &Target, buf: &str, writer: u32) -> Outcome {
        self.status.clear();
        let r = self.try_write_tasks(t, buf, writer);
        self.record(r)
    }

    fn try_write_tasks(&mut self, t: &Target, buf: &str, writer: u32) -> Outcome {
        let mut rest = Some(buf);
        while let Some(b) = rest.filter(|b| !b.is_empty() && !b.starts_with('\n')) {
            let (item, tail) = match b.split_once(',') {
                Some((i, tail)) => (i, Some(tail)),
                None => (b, None),
            };
            rest = tail;
            let item = item.trim();
            let Some(pid) = kstrtoint(item) else {
                return Err(Refusal::inval(format!(
                    "Task list parsing error pid {item}"
                )));
            };
            let Ok(pid) = u32::try_from(pid) else {
                return Err(Refusal::inval(format!("Invalid pid {pid}")));
            };
            let tid = if pid == 0 { writer } else { pid };
            self.move_task(t, tid).map_err(|e| Refusal {
                errno: e.errno,
                status: Some(format!(
                    "{}Error while processing task {pid}",
                    e.status.map(|s| s + "\n").unwrap_or_default()
                )),
            })?;
        }
        Ok(())
    }

    fn move_task(&mut self, t: &Target, tid: u32) -> Outcome {
        if !self.alive(tid) {
            return Err(Refusal::with(libc::ESRCH, format!("No task {tid}")));
        }
        let current_ctrl = self.tasks.get(&tid).and_then(|x| x.ctrl.clone());
        if t.mon.is_some() && current_ctrl != t.ctrl {
            return Err(Refusal::inval("Can't move task to different control group"));
        }
        if t.ctrl.is_none() && t.mon.is_none() {
            self.tasks.remove(&tid);
        } else {
            self.tasks.insert(tid, t.clone());
        }
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
            .map(|g| format!("{}\n", g.mode.word()))
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
        let r = match word {
            "shareable" => Ok(Mode::Shareable),
            "exclusive" => controls
                .test_exclusive(&self.platform, &peers)
                .map(|()| Mode::Exclusive),
            _ => Err(Refusal::inval("Unknown or unsupported mode")),
        };
        drop(peers);
        let mode = self.record(r)?;
        self.ctrl_mut(ctrl).expect("checked by peers").mode = mode;
        Ok(())
    }

    /// The `cpus` (hex mask) or `cpus_list` (ranges) file.
    pub fn cpus(&self, t: &Target, list: bool) -> String {
        let cpus = self.mon(t).map(|m| m.cpus.clone()).unwrap_or_default();
        if list {
            format!("{}\n", format_list(&cpus))
        } else {
            let mask: u64 = cpus.iter().map(|c| 1u64 << c).sum();
            let width = self.platform.cpus.div_ceil(4) as usize;
            format!("{mask:0width$x}\n")
        }
    }

    /// A write to `cpus` or `cpus_list`: the group takes the CPUs given
    /// (from whichever group had them); CPUs it drops go to its parent.
    pub fn write_cpus(&mut self, t: &Target, buf: &str, list: bool) -> Outcome {
        self.status.clear();
        let r = self.try_write_cpus(t, buf, list);
        self.record(r)
    }

    fn try_write_cpus(&mut self, t: &Target, buf: &str, list: bool) -> Outcome {
        let text = buf.trim_end_matches('\n');
        let new = if list {
            parse_list(text)
        } else {
            parse_mask(text)
        }
        .ok_or_else(|| Refusal::inval("Bad CPU list/mask"))?;
        if new.iter().any(|&c| c >= self.platform.cpus) {
            return Err(Refusal::inval("Can only assign online CPUs"));
        }
        let ctrl = t.ctrl.as_deref();
        let g = self.ctrl(ctrl).ok_or(Refusal::bare(libc::ENOENT))?;
        match &t.mon {
            None => {
                let dropped: BTreeSet<u32> = g.mon.cpus.difference(&new).copied().collect();
                if ctrl.is_none() && !dropped.is_empty() {
                    return Err(Refusal::inval("Can't drop CPUs from default group"));
                }
                for other in std::iter::once(&mut self.root).chain(self.groups.values_mut()) {
                    other.mon.cpus.retain(|c| !new.contains(c));
                    for m in other.mons.values_mut() {
                        m.cpus.retain(|c| !new.contains(c) && !dropped.contains(c));
                    }
                }
                self.root.mon.cpus.extend(dropped);
                self.ctrl_mut(ctrl).expect("checked").mon.cpus = new;
            }
            Some(m) => {
                if !new.is_subset(&g.mon.cpus) {
                    return Err(Refusal::inval(
                        "Can only add CPUs to mongroup that belong to parent",
                    ));
                }
                let g = self.ctrl_mut(ctrl).expect("checked");
                for (name, other) in g.mons.iter_mut() {
                    if name == m {
                        other.cpus = new.clone();
                    } else {
                        other.cpus.retain(|c| !new.contains(c));
                    }
                }
            }
        }
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

fn parse_mask(text: &str) -> Option<BTreeSet<u32>> {
    let hex: String = text.chars().filter(|&c| c != ',').collect();
    if hex.is_empty() || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let mut set = BTreeSet::new();
    for (i, c) in hex.chars().rev().enumerate() {
        let v = c.to_digit(16)?;
        for b in 0..4 {
            if v & (1 << b) != 0 {
                set.insert(u32::try_from(i * 4 + b).ok()?);
            }
        }
    }
    Some(set)
}

fn parse_list(text: &str) -> Option<BTreeSet<u32>> {
    let mut set = BTreeSet::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
        if a > b || b > 4095 {
            return None;
        }
        set.extend(a..=b);
    }
    Some(set)
}

fn format_list(cpus: &BTreeSet<u32>) -> String {
    let mut parts = Vec::new();
    let mut it = cpus.iter().copied().peekable();
    while let Some(a) = it.next() {
        let mut b = a;
        while it.peek() == Some(&(b + 1)) {
            b = it.next().expect("peeked");
        }
        parts.push(if a == b {
            a.to_string()
        } else {
            format!("{a}-{b}")
        });
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::Preset;

    fn state(preset: Preset) -> (tempfile::TempDir, State) {
        let t = tempfile::tempdir().unwrap();
        for tid in [10, 11, 12] {
            std::fs::create_dir_all(t.path().join(format!("{tid}/task/{tid}"))).unwrap();
        }
        let s = State::new(Platform::of(preset), t.path().to_path_buf());
        (t, s)
    }

    fn g(ctrl: &str, mon: Option<&str>) -> Target {
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
    fn tasks_live_in_one_group_and_return_on_rmdir() {
        let (t, mut s) = state(Preset::Skylake);
        s.mkdir_ctrl("a").unwrap();
        s.mkdir_ctrl("b").unwrap();
        s.mkdir_mon(Some("a"), "m").unwrap();
        s.write_tasks(&g("a", None), "10", 1).unwrap();
        assert_eq!(s.tasks(&g("a", None)), "10\n");
        assert_eq!(
            s.write_tasks(&g("b", Some("x")), "10", 1)
                .map_err(|e| e.errno),
            Err(libc::EINVAL)
        );
        assert_eq!(
            s.write_tasks(&g("a", None), "99", 1),
            Err(Refusal::with(
                libc::ESRCH,
                "No task 99\nError while processing task 99"
            ))
        );
        assert_eq!(
            s.last_cmd_status(),
            "No task 99\nError while processing task 99\n"
        );
        s.write_tasks(&g("a", Some("m")), "10,11", 1)
            .map_err(|e| e.errno)
            .unwrap_err();
        s.write_tasks(&g("a", None), "11", 1).unwrap();
        s.write_tasks(&g("a", Some("m")), "10,11", 1).unwrap();
        assert_eq!(s.tasks(&g("a", None)), "10\n11\n");
        assert_eq!(s.tasks(&g("a", Some("m"))), "10\n11\n");
        s.write_tasks(&g("b", None), "11", 1).unwrap();
        assert_eq!(s.tasks(&g("a", Some("m"))), "10\n");
        assert_eq!(s.tasks(&Target::root()), "12\n");
        s.rmdir_mon(Some("a"), "m").unwrap();
        assert_eq!(s.tasks(&g("a", None)), "10\n");
        s.rmdir_ctrl("a").unwrap();
        assert_eq!(s.tasks(&Target::root()), "10\n12\n");
        std::fs::remove_dir_all(t.path().join("11")).unwrap();
        assert_eq!(s.tasks(&g("b", None)), "");
    }

    #[test]
    fn cpus_move_between_groups() {
        let (_t, mut s) = state(Preset::Skylake);
        s.mkdir_ctrl("a").unwrap();
        s.mkdir_mon(Some("a"), "m").unwrap();
        assert_eq!(s.cpus(&Target::root(), false), "ffff\n");
        assert_eq!(s.cpus(&g("a", None), false), "0000\n");
        s.write_cpus(&g("a", None), "0-3,8\n", true).unwrap();
        assert_eq!(s.cpus(&Target::root(), true), "4-7,9-15\n");
        assert_eq!(s.cpus(&g("a", None), false), "010f\n");
        assert_eq!(
            s.write_cpus(&g("a", Some("m")), "10", false),
            Err(Refusal::inval(
                "Can only add CPUs to mongroup that belong to parent"
            ))
        );
        s.write_cpus(&g("a", Some("m")), "3", false).unwrap();
        assert_eq!(s.cpus(&g("a", Some("m")), true), "0-1\n");
        assert_eq!(
            s.write_cpus(&Target::root(), "1", false),
            Err(Refusal::inval("Can't drop CPUs from default group"))
        );
        assert_eq!(
            s.write_cpus(&g("a", None), "10000", false),
            Err(Refusal::inval("Can only assign online CPUs"))
        );
        assert_eq!(
            s.write_cpus(&g("a", None), "xyz", false),
            Err(Refusal::inval("Bad CPU list/mask"))
        );
        s.rmdir_ctrl("a").unwrap();
        assert_eq!(s.cpus(&Target::root(), true), "0-15\n");
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
