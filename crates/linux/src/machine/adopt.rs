//! [`Adopter`]: the [`Machine`] of processes cachepart did not start
//! (`cachepart daemon`). It takes the mount as [`super::LinuxMachine`]
//! does (the manager lock, stale groups of dead managers removed), and
//! its apps are whatever processes the caller adopts now: each interval
//! the caller finds its targets again and calls [`Adopter::adopt`], which
//! keeps the groups of processes still there, gives new ones a
//! monitoring group in the default group, and returns processes no longer
//! adopted to the default group. A policy then plans for the new set and
//! [`Machine::apply`] enforces it with the same groups code as the
//! launcher (one owned control group per cluster, CLOSIDs counted first).
//!
//! It starts, pins and stops nothing, and writes no MSR: a plan that
//! throttles is refused (throttling acts on a pinned app's core). The
//! daemon drives time itself, so [`Machine::run_interval`] is refused;
//! an online controller gets its samples from [`Adopter::sample`] instead,
//! once the caller has given the adopted set its counters
//! ([`Adopter::count_with`]).
//! On drop, and so after SIGINT or SIGTERM, the owned groups are removed
//! and their tasks return to the default group.

use std::time::Instant;

use super::groups::Groups;
use super::host::{cycles_since, Host};
use super::sampling::read_samples;
use super::Llc;
use crate::doctor::Roots;
use crate::error::Result;
use crate::perf::CounterSource;
use crate::resctrl::Resctrl;
use cachepart_machine::{
    AppCurves, Axis, Interval, Machine, MachineError, Plan, Platform, Responder,
};

/// One adopted process.
#[derive(Clone, Debug, PartialEq)]
pub struct Adopted {
    /// Its name in plans and logs.
    pub name: String,
    /// The process.
    pub pid: u32,
    /// Its alone curves over ways (from a profile table), if known.
    pub curves: Option<AppCurves>,
}

/// A machine whose apps are processes it adopted.
pub struct Adopter {
    host: Host,
    groups: Groups,
    apps: Vec<Adopted>,
    /// The apps' curves, when every app has them.
    alone: Option<Vec<AppCurves>>,
    /// The adopted set's counters, when the caller gave them.
    counters: Option<Box<dyn CounterSource>>,
    /// When the counters were attached or last read.
    last_read: Instant,
    /// When the adopter started (the clock of [`Interval::end_cycles`]).
    t0: Instant,
    /// The next sample's interval number.
    index: u64,
}

impl std::fmt::Debug for Adopter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Adopter")
            .field("mount", &self.groups.resctrl().mount())
            .field("apps", &self.apps.len())
            .finish()
    }
}

impl Adopter {
    /// Opens the mount under `roots` (`plain`: a fake tree), reads the
    /// host, takes the manager lock and removes the stale groups of dead
    /// managers. Adopts nothing yet.
    pub fn start(roots: &Roots, plain: bool) -> Result<Adopter> {
        let rdt = if plain {
            Resctrl::open_plain(&roots.resctrl, &roots.proc_root)?
        } else {
            Resctrl::open(&roots.resctrl, &roots.proc_root)?
        };
        let host = Host::read(&rdt, roots)?;
        let groups = Groups::new(rdt, 0)?;
        let now = Instant::now();
        Ok(Adopter {
            host,
            groups,
            apps: Vec::new(),
            alone: Some(Vec::new()),
            counters: None,
            last_read: now,
            t0: now,
            index: 0,
        })
    }

    /// Makes `apps` the machine's apps, in this order (see the module
    /// docs). The clusters of the last plan stay until the next
    /// [`Machine::apply`]; an app that joined is in the default group
    /// until then.
    ///
    /// The counters of the previous set are dropped: give the new set
    /// its own with [`Adopter::count_with`].
    pub fn adopt(&mut self, apps: Vec<Adopted>) -> Result<()> {
        self.counters = None;
        let pids: Vec<u32> = apps.iter().map(|a| a.pid).collect();
        self.alone = apps.iter().map(|a| a.curves.clone()).collect();
        self.apps = apps;
        self.groups.retarget(&pids)
    }

    /// Counts the adopted processes with `counters` (app `i` is the
    /// `i`-th adopted process) from now on; the next
    /// [`Adopter::sample`] covers the time since this call. A process
    /// that cannot be counted (gone, or refused by perf) is an error, and
    /// the set is then counted by nothing.
    pub fn count_with(&mut self, mut counters: Box<dyn CounterSource>) -> Result<()> {
        // Dropping a source stops all its counting.
        self.counters = None;
        for (i, a) in self.apps.iter().enumerate() {
            counters.attach(i, a.pid)?;
        }
        // The table-driven counters answer for the way count each app
        // holds: in the default group, all of them.
        for i in 0..self.apps.len() {
            counters.set_ways(i, self.host.platform.ways);
        }
        self.counters = Some(counters);
        self.last_read = Instant::now();
        Ok(())
    }

    /// The adopted processes' samples since the counters were attached
    /// or last read, with threads born since moved into their groups.
    /// Refused when the set has no counters.
    pub fn sample(&mut self) -> std::result::Result<Interval, MachineError> {
        let Some(counters) = self.counters.as_mut() else {
            return Err(MachineError::Unsupported(
                "samples: the adopted processes have no counters (Adopter::count_with)".into(),
            ));
        };
        let elapsed = self.last_read.elapsed();
        self.last_read = Instant::now();
        let samples = read_samples(&mut self.groups, &mut **counters, self.apps.len(), elapsed)
            .map_err(MachineError::backend)?;
        let iv = Interval {
            index: self.index,
            end_cycles: cycles_since(self.t0, self.host.mhz),
            samples,
            events: Vec::new(),
        };
        self.index += 1;
        Ok(iv)
    }

    /// The CPU clock in MHz (`/proc/cpuinfo`; 1000 when unknown).
    pub fn clock_mhz(&self) -> f64 {
        self.host.mhz
    }

    /// The adopted processes, in order.
    pub fn apps(&self) -> &[Adopted] {
        &self.apps
    }

    /// Moves the threads that the adopted processes started since the
    /// last call into their groups.
    pub fn resync(&mut self) -> Result<()> {
        for app in 0..self.apps.len() {
            self.groups.resync(app)?;
        }
        Ok(())
    }

    /// The groups: the mount, each adopted process's control and monitoring
    /// group, the owned cluster groups, the stale groups removed at the start.
    pub fn groups(&self) -> &Groups {
        &self.groups
    }

    /// The LLC as sysfs describes it.
    pub fn llc(&self) -> &Llc {
        &self.host.llc
    }

    /// Removes every owned group; the tasks return to the default group.
    /// The first failure is returned after trying all.
    pub fn shutdown(&mut self) -> Result<()> {
        self.counters = None;
        self.groups.remove_all()
    }
}

impl Drop for Adopter {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

impl Machine for Adopter {
    fn platform(&self) -> &Platform {
        &self.host.platform
    }

    fn alone_curves_on(&mut self, axis: &Axis) -> std::result::Result<&[AppCurves], MachineError> {
        if *axis != Axis::Ways {
            return Err(MachineError::Unsupported(
                "page colors: Linux has no page-coloring allocator".into(),
            ));
        }
        match &self.alone {
            Some(a) => Ok(a),
            None => {
                let missing: Vec<&str> = self
                    .apps
                    .iter()
                    .filter(|a| a.curves.is_none())
                    .map(|a| a.name.as_str())
                    .collect();
                Err(MachineError::Unsupported(format!(
                    "alone curves: no profile for {}; name each target's rows in the profile table (PBBCache metrics CSV)",
                    missing.join(", ")
                )))
            }
        }
    }

    fn app_count(&mut self) -> std::result::Result<usize, MachineError> {
        Ok(self.apps.len())
    }

    fn apply(&mut self, plan: &Plan) -> std::result::Result<(), MachineError> {
        plan.validate(self.apps.len(), &self.host.platform.mask_rules)?;
        if !plan.colors.is_empty() {
            return Err(MachineError::Unsupported(
                "page colors: Linux has no page-coloring allocator".into(),
            ));
        }
        if !plan.throttle.is_empty() {
            return Err(MachineError::Unsupported(
                "throttling: adopted processes are not pinned to a core, and MSR throttling acts on a core".into(),
            ));
        }
        let r = if plan.clusters.is_empty() {
            if self.groups.clusters().is_empty() {
                Ok(())
            } else {
                self.groups.unclustered()
            }
        } else {
            self.groups.apply(plan)
        };
        r.map_err(MachineError::backend)?;
        if let Some(c) = self.counters.as_mut() {
            for app in 0..self.apps.len() {
                let ways = plan
                    .clusters
                    .iter()
                    .find(|cl| cl.apps.contains(&app))
                    .map_or(self.host.platform.ways, |cl| cl.mask.count());
                c.set_ways(app, ways);
            }
        }
        Ok(())
    }

    fn run_interval(
        &mut self,
        _respond: Responder<'_>,
    ) -> std::result::Result<Interval, MachineError> {
        Err(MachineError::Unsupported(
            "intervals: the adopter's caller finds its processes again each interval and re-plans"
                .into(),
        ))
    }
}
