//! [`LinuxMachine`]: the [`Machine`] every cachepart policy runs on, on a
//! real Linux host.
//!
//! * the platform comes from resctrl's `info/` (the way count and mask
//!   rules of the L3's `cbm_mask`) and sysfs (the LLC's size, ways and line:
//!   [`Llc`]);
//! * [`Machine::apply`] writes one owned control group per cluster and
//!   moves each app's threads there (the run's groups), after counting the
//!   CLOSIDs the plan needs;
//! * [`Machine::run_interval`] waits the interval, notes apps that exited
//!   (restarting them when the methodology says), moves threads born
//!   since, and reads the [`CounterSource`] and resctrl's `mon_data` into
//!   one [`Sample`](cachepart_machine::Sample) per app;
//! * [`Machine::act`] carries out throttling through [`MsrControl`] when
//!   MSR access was allowed;
//! * alone curves come from a profile table the caller gives (PBBCache's
//!   metrics, as `profile eval` reads them).
//!
//! [`Adopter`] is the same machine for processes cachepart did not start
//! (`cachepart daemon`): the same groups, for a set of processes that
//! changes.
//!
//! Every kernel path comes from [`Roots`]. On drop, and after SIGINT or
//! SIGTERM (the next interval returns an error and the caller drops the
//! machine), the apps still running are stopped, the owned groups removed
//! (their tasks return to the default group) and the MSRs restored.

mod adopt;
mod apps;
mod groups;
mod host;
mod llc;
mod sampling;
#[cfg(test)]
mod tests;

pub use adopt::{Adopted, Adopter};
pub use apps::AppSpec;
pub use groups::Groups;
pub use llc::Llc;

use crate::doctor::Roots;
use crate::error::{Error, Result};
use crate::msr::MsrControl;
use crate::perf::CounterSource;
use crate::resctrl::Resctrl;
use apps::Proc;
use cachepart_machine::{
    Action, AppCurves, AppEvent, Axis, Effect, EventKind, Interval, Machine, MachineError, Plan,
    Platform, Responder,
};
use host::Host;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How to run a mix on this machine.
pub struct LinuxConfig {
    /// Where `/proc`, `/sys`, `/dev` and the resctrl mount are.
    pub roots: Roots,
    /// The resctrl mount is a plain directory tree
    /// ([`crate::fake`]), not the kernel's filesystem.
    pub plain_resctrl: bool,
    /// The interval length.
    pub interval: Duration,
    /// The counters (perf, or scripted).
    pub counters: Box<dyn CounterSource>,
    /// MSR access, when the operator allowed it.
    pub msr: Option<MsrControl>,
    /// The apps' alone curves over ways, mix order, when a profile table
    /// gives them.
    pub alone: Option<Vec<AppCurves>>,
    /// Raised by SIGINT/SIGTERM: the next interval fails and the machine,
    /// dropped, cleans up. [`LinuxMachine::start`] registers the signals
    /// when `None`.
    pub interrupt: Option<Arc<AtomicBool>>,
}

/// One app's state.
struct App {
    spec: AppSpec,
    proc: Option<Proc>,
    /// How long its first run took, once it has.
    first_run: Option<Duration>,
    /// Every run's length (first, then restarts).
    runs: Vec<Duration>,
    /// How its last run ended.
    status: Option<std::process::ExitStatus>,
    started: bool,
}

/// A real Linux machine running a mix.
pub struct LinuxMachine {
    platform: Platform,
    llc: Llc,
    mhz: f64,
    groups: Groups,
    counters: Box<dyn CounterSource>,
    msr: Option<MsrControl>,
    alone: Option<Vec<AppCurves>>,
    interval: Duration,
    interrupt: Arc<AtomicBool>,
    apps: Vec<App>,
    /// When the first app started.
    t0: Option<Instant>,
    index: u64,
    done: bool,
    /// Events that happened outside an interval (starts), reported with
    /// the next one.
    pending: Vec<AppEvent>,
}

fn backend(e: Error) -> MachineError {
    MachineError::backend(e)
}

impl LinuxMachine {
    /// Checks everything and takes the mount; starts nothing yet (the
    /// apps start with the first plan or interval). Fails before any
    /// process starts when the mount, the counters or an app is not
    /// usable.
    pub fn start(config: LinuxConfig, apps: Vec<AppSpec>) -> Result<LinuxMachine> {
        let roots = &config.roots;
        let rdt = if config.plain_resctrl {
            Resctrl::open_plain(&roots.resctrl, &roots.proc_root)?
        } else {
            Resctrl::open(&roots.resctrl, &roots.proc_root)?
        };
        let Host {
            platform,
            llc,
            mhz,
            cores,
        } = Host::read(&rdt, roots)?;
        for (i, a) in apps.iter().enumerate() {
            a.check(i, cores)?;
        }
        if let Some(alone) = &config.alone {
            if alone.len() != apps.len() {
                return Err(Error::parse(
                    "profile table",
                    format!("{} alone curves for {} apps", alone.len(), apps.len()),
                ));
            }
        }
        let interrupt = match config.interrupt {
            Some(f) => f,
            None => {
                let f = Arc::new(AtomicBool::new(false));
                for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
                    signal_hook::flag::register(sig, Arc::clone(&f)).map_err(|e| {
                        Error::Process {
                            what: "registering the SIGINT/SIGTERM handler".into(),
                            source: e,
                        }
                    })?;
                }
                f
            }
        };
        let groups = Groups::new(rdt, apps.len())?;
        Ok(LinuxMachine {
            platform,
            llc,
            mhz,
            groups,
            counters: config.counters,
            msr: config.msr,
            alone: config.alone,
            interval: config.interval,
            interrupt,
            apps: apps
                .into_iter()
                .map(|spec| App {
                    spec,
                    proc: None,
                    first_run: None,
                    runs: Vec::new(),
                    status: None,
                    started: false,
                })
                .collect(),
            t0: None,
            index: 0,
            done: false,
            pending: Vec::new(),
        })
    }

    /// The run's groups: the mount, each app's control and monitoring group,
    /// the owned cluster groups, the stale groups removed at the start.
    pub fn groups(&self) -> &Groups {
        &self.groups
    }

    /// The LLC as sysfs describes it.
    pub fn llc(&self) -> &Llc {
        &self.llc
    }

    /// App `app`'s process id, while it runs.
    pub fn pid(&self, app: usize) -> Option<u32> {
        self.apps[app].proc.as_ref().map(|p| p.pid)
    }

    /// How long app `app`'s first run took, once finished.
    pub fn first_run(&self, app: usize) -> Option<Duration> {
        self.apps[app].first_run
    }

    /// Every completed run of app `app`.
    pub fn runs(&self, app: usize) -> &[Duration] {
        &self.apps[app].runs
    }

    /// The clock cycles are counted at, MHz ([`crate::cpu::CpuModel::clock_mhz`]).
    pub fn clock_mhz(&self) -> f64 {
        self.mhz
    }

    /// How app `app`'s last run ended, once it has.
    pub fn exit_status(&self, app: usize) -> Option<std::process::ExitStatus> {
        self.apps[app].status
    }

    /// The apps' specs, mix order.
    pub fn specs(&self) -> Vec<&AppSpec> {
        self.apps.iter().map(|a| &a.spec).collect()
    }

    /// The counters' L2-miss stall event, if any.
    pub fn stall_event(&self) -> Option<&str> {
        self.counters.stall_event()
    }

    fn cycles_since_start(&self) -> u64 {
        self.t0.map_or(0, |t| host::cycles_since(t, self.mhz))
    }

    fn event(&self, app: usize, kind: EventKind) -> AppEvent {
        AppEvent {
            app,
            kind,
            at_cycles: self.cycles_since_start(),
            core: self.apps[app].spec.core,
        }
    }

    fn launch(&mut self, app: usize) -> Result<()> {
        let p = self.apps[app].spec.spawn()?;
        let pid = p.pid;
        self.apps[app].proc = Some(p);
        let placed = self
            .counters
            .attach(app, pid)
            .and_then(|()| self.groups.place(app, pid));
        if let Err(e) = placed {
            if let Some(mut p) = self.apps[app].proc.take() {
                p.stop();
            }
            return Err(e);
        }
        Ok(())
    }

    /// Starts every app not started yet (the first plan or interval).
    fn ensure_started(&mut self) -> Result<()> {
        if self.t0.is_some() {
            return Ok(());
        }
        self.t0 = Some(Instant::now());
        for app in 0..self.apps.len() {
            self.launch(app)?;
            self.apps[app].started = true;
            let e = self.event(app, EventKind::Started);
            self.pending.push(e);
        }
        Ok(())
    }

    /// Stops every app still running, removes the run's groups and
    /// restores the MSRs; the first failure is returned after trying all.
    pub fn shutdown(&mut self) -> Result<()> {
        for (i, a) in self.apps.iter_mut().enumerate() {
            if let Some(mut p) = a.proc.take() {
                p.stop();
                self.counters.detach(i);
            }
        }
        let g = self.groups.remove_all();
        let m = self.msr.as_mut().map_or(Ok(()), |m| m.restore());
        g.and(m)
    }

    /// Polls the apps; returns the events of those that exited.
    fn poll(&mut self, events: &mut Vec<AppEvent>) -> Result<()> {
        let all_first_done = |apps: &[App]| apps.iter().all(|a| a.first_run.is_some());
        for app in 0..self.apps.len() {
            let Some(p) = self.apps[app].proc.as_mut() else {
                continue;
            };
            let Some((took, status)) = p.exited()? else {
                continue;
            };
            let a = &mut self.apps[app];
            a.runs.push(took);
            a.status = Some(status);
            let first = a.first_run.is_none();
            if first {
                a.first_run = Some(took);
            }
            a.proc = None;
            self.groups.exited(app)?;
            events.push(self.event(app, EventKind::Finished));
            if self.apps[app].spec.restart && !all_first_done(&self.apps) {
                self.counters.detach(app);
                self.launch(app)?;
                events.push(self.event(app, EventKind::Restarted));
            }
        }
        if all_first_done(&self.apps) {
            self.done = true;
        }
        Ok(())
    }

    fn interrupted(&self) -> Result<()> {
        if self.interrupt.load(Ordering::Relaxed) {
            return Err(Error::Process {
                what: "the run".into(),
                source: std::io::Error::new(
                    std::io::ErrorKind::Interrupted,
                    "interrupted by SIGINT/SIGTERM: apps stopped, groups removed, MSRs restored",
                ),
            });
        }
        Ok(())
    }

    fn interval_inner(&mut self) -> Result<Interval> {
        self.ensure_started()?;
        let mut events = std::mem::take(&mut self.pending);
        let start = Instant::now();
        let step = Duration::from_millis(10).min(self.interval);
        while start.elapsed() < self.interval {
            self.interrupted()?;
            std::thread::sleep(step.min(self.interval.saturating_sub(start.elapsed())));
            self.poll(&mut events)?;
            if self.done {
                break;
            }
        }
        self.interrupted()?;
        let elapsed = start.elapsed();
        let samples = sampling::read_samples(
            &mut self.groups,
            &mut *self.counters,
            self.apps.len(),
            elapsed,
        )?;
        // Apps that exited and were not restarted count no more.
        for (i, a) in self.apps.iter().enumerate() {
            if a.proc.is_none() {
                self.counters.detach(i);
            }
        }
        if self.done {
            for (i, a) in self.apps.iter_mut().enumerate() {
                if let Some(mut p) = a.proc.take() {
                    p.stop();
                    self.counters.detach(i);
                    self.groups.exited(i)?;
                }
            }
        }
        let iv = Interval {
            index: self.index,
            end_cycles: self.cycles_since_start(),
            samples,
            events,
        };
        self.index += 1;
        Ok(iv)
    }

    fn throttle(&mut self, t: &cachepart_machine::AppThrottle) -> Result<()> {
        let core = self.apps.get(t.app).and_then(|a| a.spec.core);
        let msr = self.msr.as_mut();
        let (Some(msr), Some(core)) = (msr, core) else {
            return Err(Error::Msr {
                msr: crate::msr::IA32_CLOCK_MODULATION,
                why: if core.is_none() {
                    format!(
                        "app {} has no core: throttling acts on a pinned app's core",
                        t.app
                    )
                } else {
                    "MSR writes are off; pass --allow-msr to throttle cores".into()
                },
            });
        };
        if let Some(d) = t.duty {
            msr.set_duty(core, d)?;
        }
        if let Some(w) = t.prefetchers {
            msr.set_prefetchers(core, w)?;
        }
        Ok(())
    }
}

impl Drop for LinuxMachine {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

impl Machine for LinuxMachine {
    fn platform(&self) -> &Platform {
        &self.platform
    }

    fn alone_curves_on(&mut self, axis: &Axis) -> std::result::Result<&[AppCurves], MachineError> {
        if *axis != Axis::Ways {
            return Err(MachineError::Unsupported(
                "page colors: Linux has no page-coloring allocator".into(),
            ));
        }
        self.alone.as_deref().ok_or_else(|| {
            MachineError::Unsupported(
                "alone curves: give a profile table (PBBCache metrics CSV, one row per app and way count) measured with `cachepart profile measure` or by a CAT sweep".into(),
            )
        })
    }

    fn app_count(&mut self) -> std::result::Result<usize, MachineError> {
        Ok(self.apps.len())
    }

    fn apply(&mut self, plan: &Plan) -> std::result::Result<(), MachineError> {
        plan.validate(self.apps.len(), &self.platform.mask_rules)?;
        if !plan.colors.is_empty() {
            return Err(MachineError::Unsupported(
                "page colors: Linux has no page-coloring allocator".into(),
            ));
        }
        self.ensure_started().map_err(backend)?;
        if !plan.clusters.is_empty() {
            self.groups.apply(plan).map_err(backend)?;
            for c in &plan.clusters {
                for &app in &c.apps {
                    self.counters.set_ways(app, c.mask.count());
                }
            }
        }
        for t in &plan.throttle {
            self.throttle(t).map_err(backend)?;
        }
        Ok(())
    }

    fn act(&mut self, action: &Action) -> std::result::Result<Effect, MachineError> {
        match action {
            Action::Apply(plan) => self.apply(plan).map(|()| Effect::default()),
            Action::Throttle(t) => {
                self.throttle(t)
                    .map(|()| Effect::default())
                    .map_err(|e| match e {
                        Error::Msr { why, .. } => {
                            MachineError::Unsupported(format!("throttle: {why}"))
                        }
                        e => backend(e),
                    })
            }
            Action::Place { app, core } => {
                if *app >= self.apps.len() {
                    return Err(MachineError::BadAction {
                        action: "place",
                        reason: format!("app {app}: the mix has {} apps", self.apps.len()),
                    });
                }
                self.apps[*app].spec.core = Some(*core);
                if let Some(pid) = self.pid(*app) {
                    apps::pin_pid(pid, *core).map_err(|e| {
                        backend(Error::Process {
                            what: format!("pinning pid {pid} to core {core}"),
                            source: e,
                        })
                    })?;
                }
                Ok(Effect::default())
            }
            Action::Recolor { .. } => Err(MachineError::Unsupported(
                "recolor: Linux has no page-coloring allocator".into(),
            )),
        }
    }

    fn run_interval(
        &mut self,
        _respond: Responder<'_>,
    ) -> std::result::Result<Interval, MachineError> {
        self.interval_inner().map_err(backend)
    }

    fn is_done(&self) -> bool {
        self.done
    }
}
