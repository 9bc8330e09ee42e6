//! The run's resctrl groups: one owned control group per cluster of the
//! current plan (`cachepart-PID-cN`, holding the cluster's way mask) and
//! one owned monitoring group per app inside the control group it is in
//! (`cachepart-PID-aN`, for its occupancy and memory bytes).
//!
//! Before the first plan the apps are in the default group, each with its
//! monitoring group there. Moving an app to another cluster moves every
//! thread to the new control group, then makes its monitoring group anew
//! there (the kernel lets a task into a monitoring group only from the
//! group's parent). CLOSIDs are counted before anything is written.

use crate::error::{Error, Result};
use crate::resctrl::{
    remove_stale_groups, ByteCounter, GroupRef, ManagerLock, MonReading, Resctrl, Schemata,
    SchemataLine, Value,
};
use cachepart_machine::Plan;
use cachepart_units::Kind as _;
use std::collections::BTreeMap;

/// Where one app is.
#[derive(Debug, Default)]
struct Place {
    /// Its cluster in the current plan (`None`: the default group).
    cluster: Option<usize>,
    /// Its monitoring group.
    mon: Option<GroupRef>,
    /// Its memory-bytes counter.
    mbm: ByteCounter,
    /// The process whose threads are in the groups.
    pid: Option<u32>,
    /// Its monitoring group's name (`aN` for a launched app, `pPID` for
    /// an adopted process, whose index changes as processes come and go).
    label: String,
}

impl Place {
    fn new(label: String) -> Place {
        Place {
            label,
            ..Place::default()
        }
    }
}

/// The groups of one run on one mount; dropping them removes them. The
/// launcher ([`super::LinuxMachine`]) and the daemon ([`super::Adopter`])
/// each hold one and lend it out read-only (`groups()`), so the two share
/// these accessors; only this crate changes the groups.
#[derive(Debug)]
pub struct Groups {
    rdt: Resctrl,
    _lock: ManagerLock,
    clusters: Vec<GroupRef>,
    places: Vec<Place>,
    /// Stale groups removed at the start.
    removed_at_start: Vec<String>,
}

impl Groups {
    /// Takes the mount's lock and removes the groups of managers that are
    /// gone.
    pub(crate) fn new(rdt: Resctrl, apps: usize) -> Result<Groups> {
        let lock = ManagerLock::acquire(rdt.mount(), rdt.proc_root())?;
        let removed_at_start = remove_stale_groups(&rdt)?;
        Ok(Groups {
            rdt,
            _lock: lock,
            clusters: Vec::new(),
            places: (0..apps).map(|i| Place::new(format!("a{i}"))).collect(),
            removed_at_start,
        })
    }

    /// The resctrl mount in use.
    pub fn resctrl(&self) -> &Resctrl {
        &self.rdt
    }

    /// Stale groups of dead managers removed at the start.
    pub fn removed_at_start(&self) -> &[String] {
        &self.removed_at_start
    }

    /// The control group app `app` is in.
    pub fn control_group(&self, app: usize) -> GroupRef {
        match self.places[app].cluster {
            Some(c) => self.clusters[c].clone(),
            None => self.rdt.root(),
        }
    }

    /// App `app`'s monitoring group, if it has one.
    pub fn mon_group(&self, app: usize) -> Option<&GroupRef> {
        self.places[app].mon.as_ref()
    }

    /// The owned control groups, cluster order.
    pub fn clusters(&self) -> &[GroupRef] {
        &self.clusters
    }

    /// Puts process `pid` of app `app` into the app's control group and a
    /// fresh monitoring group there.
    pub(crate) fn place(&mut self, app: usize, pid: u32) -> Result<()> {
        let ctrl = self.control_group(app);
        if let Some(m) = self.places[app].mon.take() {
            self.rdt.remove(&m)?;
        }
        self.rdt.move_process(&ctrl, pid)?;
        let p = &mut self.places[app];
        p.mbm = ByteCounter::default();
        p.pid = Some(pid);
        if self.rdt.capabilities().mon.is_some() {
            let m = self.rdt.create_mon_group(&ctrl, &self.places[app].label)?;
            // Recorded before the move, so that a failed move leaves
            // nothing that `remove_all` does not find.
            self.places[app].mon = Some(m.clone());
            self.rdt.move_process(&m, pid)?;
        }
        Ok(())
    }

    /// Makes the apps the processes `pids`, in this order (the adopted
    /// processes of `cachepart daemon`): a process already placed keeps
    /// its groups, a new one goes into the default group with a
    /// monitoring group of its own (`cachepart-PID-pN`), and one no longer
    /// listed is moved back to the default group if it still runs, its
    /// monitoring group removed. The clusters stay until the next
    /// [`Groups::apply`].
    pub(crate) fn retarget(&mut self, pids: &[u32]) -> Result<()> {
        let mut old: BTreeMap<u32, Place> = std::mem::take(&mut self.places)
            .into_iter()
            .filter_map(|p| p.pid.map(|pid| (pid, p)))
            .collect();
        self.places = pids
            .iter()
            .map(|&pid| {
                old.remove(&pid)
                    .unwrap_or_else(|| Place::new(format!("p{pid}")))
            })
            .collect();
        let mut first = None;
        for (pid, gone) in old {
            // Out of its groups first: removing a monitoring group would
            // leave the process in the cluster's control group.
            if self.rdt.proc_root().join(pid.to_string()).exists() {
                let root = self.rdt.root();
                match self.rdt.move_process(&root, pid) {
                    // It exited meanwhile.
                    Err(Error::Io { .. })
                        if !self.rdt.proc_root().join(pid.to_string()).exists() => {}
                    Err(e) => {
                        first.get_or_insert(e);
                    }
                    Ok(_) => {}
                }
            }
            if let Some(m) = gone.mon {
                if let Err(e) = self.rdt.remove(&m) {
                    first.get_or_insert(e);
                }
            }
        }
        for (app, &pid) in pids.iter().enumerate() {
            if self.places[app].pid.is_some() {
                continue;
            }
            match self.place(app, pid) {
                // It exited since it was found: the next scan drops it.
                Err(Error::Io { .. }) if !self.rdt.proc_root().join(pid.to_string()).exists() => {}
                r => r?,
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Puts every app back into the default group (a plan without
    /// clusters) and removes the run's control groups.
    pub(crate) fn unclustered(&mut self) -> Result<()> {
        let pids: Vec<Option<u32>> = self.places.iter().map(|p| p.pid).collect();
        self.remove_all()?;
        for (app, pid) in pids.into_iter().enumerate() {
            if let Some(pid) = pid {
                self.place(app, pid)?;
            }
        }
        Ok(())
    }

    /// Forgets app `app`'s process (it exited: the kernel dropped its
    /// threads from the groups) and removes its monitoring group, which
    /// counts nothing more and would hold its RMID (and, once a re-plan
    /// removes the control group it is in, would be gone under it).
    pub(crate) fn exited(&mut self, app: usize) -> Result<()> {
        let p = &mut self.places[app];
        p.pid = None;
        p.mbm = ByteCounter::default();
        match p.mon.take() {
            Some(m) => self.rdt.remove(&m),
            None => Ok(()),
        }
    }

    /// Moves threads of app `app` born since the last move.
    pub(crate) fn resync(&mut self, app: usize) -> Result<()> {
        let Some(pid) = self.places[app].pid else {
            return Ok(());
        };
        let ctrl = self.control_group(app);
        let r = self
            .rdt
            .resync(&ctrl, pid)
            .and_then(|_| match &self.places[app].mon {
                Some(m) => self.rdt.resync(m, pid).map(|_| ()),
                None => Ok(()),
            });
        match r {
            // The process exited since it was polled: nothing to move.
            Err(Error::Io { .. }) if !self.rdt.proc_root().join(pid.to_string()).exists() => Ok(()),
            r => r,
        }
    }

    /// App `app`'s LLC occupancy (bytes) and memory bytes since the last
    /// read, where the mount counts them.
    pub(crate) fn monitor(&mut self, app: usize) -> Result<(Option<u64>, Option<u64>)> {
        let p = &mut self.places[app];
        let Some(m) = &p.mon else {
            return Ok((None, None));
        };
        let r: MonReading = self.rdt.read_monitor(m)?;
        let total = r
            .domains
            .values()
            .filter_map(|d| d.mbm_total_bytes)
            .fold(None, |a: Option<u64>, v| {
                Some(a.unwrap_or(0).wrapping_add(v))
            });
        Ok((r.llc_occupancy(), p.mbm.update(total)))
    }

    /// Enforces the plan's clusters: a control group per cluster with its
    /// mask on every cache domain, each running app moved to its
    /// cluster's group, groups of clusters no longer planned removed.
    pub(crate) fn apply(&mut self, plan: &Plan) -> Result<()> {
        let caps = self.rdt.capabilities().clone();
        let total = caps.num_closids();
        let ours: Vec<&str> = self.clusters.iter().map(|g| g.name.as_str()).collect();
        let others = self
            .rdt
            .control_groups()?
            .iter()
            .filter(|g| !ours.contains(&g.name.as_str()))
            .count() as u32;
        let free = total.saturating_sub(1 + others);
        if plan.clusters.len() as u32 > free {
            return Err(Error::TooManyClusters {
                mount: self.rdt.mount().to_path_buf(),
                clusters: plan.clusters.len(),
                free,
                total,
                others,
            });
        }
        while self.clusters.len() < plan.clusters.len() {
            let g = self
                .rdt
                .create_group(&format!("c{}", self.clusters.len()))?;
            self.clusters.push(g);
        }
        for (i, cluster) in plan.clusters.iter().enumerate() {
            let mut s = Schemata::default();
            for (r, ids) in &caps.domains {
                if caps.caches.contains_key(r) && r.name().starts_with("L3") {
                    let domains: BTreeMap<u32, Value> = ids
                        .iter()
                        .map(|&d| (d, Value::Mask(cluster.mask)))
                        .collect();
                    s.lines.insert(
                        *r,
                        SchemataLine {
                            resource: *r,
                            domains,
                        },
                    );
                }
            }
            self.rdt.write_schemata(&self.clusters[i], &s)?;
        }
        for (i, cluster) in plan.clusters.iter().enumerate() {
            for &app in &cluster.apps {
                if self.places[app].cluster == Some(i) {
                    continue;
                }
                self.places[app].cluster = Some(i);
                if let Some(pid) = self.places[app].pid {
                    self.place(app, pid)?;
                }
            }
        }
        while self.clusters.len() > plan.clusters.len() {
            let g = self.clusters.pop().expect("more groups than clusters");
            self.rdt.remove(&g)?;
        }
        Ok(())
    }

    /// Removes every group of the run (their tasks go back to the default
    /// group); the first failure is returned after trying all.
    pub(crate) fn remove_all(&mut self) -> Result<()> {
        let mut first = None;
        for p in &mut self.places {
            if let Some(m) = p.mon.take() {
                if let Err(e) = self.rdt.remove(&m) {
                    first.get_or_insert(e);
                }
            }
            p.cluster = None;
        }
        for g in std::mem::take(&mut self.clusters) {
            if let Err(e) = self.rdt.remove(&g) {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }
}

impl Drop for Groups {
    fn drop(&mut self) {
        let _ = self.remove_all();
    }
}
