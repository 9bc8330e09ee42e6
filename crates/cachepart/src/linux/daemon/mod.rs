//! `cachepart daemon`: a policy managing processes that run anyway,
//! found by process id, command name or cgroup ([`config`]; each
//! target's checks in `target.rs`).
//!
//! The loop, once an interval: find every target's processes again
//! (processes that appeared join, those gone leave); when the set changed,
//! adopt it ([`Adopter`]), start the policy's controller for it, and carry
//! out its first actions; otherwise move the threads born since, and hand
//! an online controller the interval's samples, carrying out the new plan
//! it answers with. Each decision is one JSON object on a line of the log
//! ([`log`]). The caller's flags carry the signals: a reload request
//! (SIGHUP) re-reads the configuration, keeping the old one when the new
//! one is bad; a stop request (SIGINT, SIGTERM) removes the owned groups
//! (their tasks return to the default group) and ends the loop.
//!
//! A static policy plans once per set of processes from the profile table
//! and reads no counter; one that plans from curves is refused up front
//! (as a reload) when the configuration gives no table. An online controller (`lfoc-online`,
//! `dunn-dynamic`, `kpart-dynaway`; `ucp-online` only on table-driven
//! counters) is built as `cachepart run` builds it ([`linux_controller`])
//! and reads the processes' counters (perf, or the table-driven fakes)
//! every interval; when the set of processes changes it starts over for
//! the new set, so every app goes through its warm-up and sampling again.
//! The daemon writes no MSR.

pub mod config;
pub mod log;
mod target;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

use cachepart_linux::doctor::Roots;
use cachepart_linux::machine::{Adopted, Adopter};
use cachepart_machine::{Action, AppCurves, Machine, Plan};
use cachepart_policy::Controller;
use cachepart_profile::MetricsTable;

pub use config::{DaemonConfig, Target};
use log::Log;

use crate::error::Error;
use crate::linux::control::{
    check_alone_curves, check_policy, host_setup, linux_controller, TableOption,
};
use crate::linux::counters::{counter_source, CounterChoice};
use crate::linux::run::preflight;
use crate::run::profile::RunOptions;

/// Where the daemon runs.
#[derive(Clone, Debug)]
pub struct DaemonOptions {
    /// The configuration file (re-read on reload).
    pub config: PathBuf,
    /// Where `/proc`, `/sys`, `/dev` and the resctrl mount are.
    pub roots: Roots,
    /// The resctrl mount is a plain directory tree (tests).
    pub plain_resctrl: bool,
    /// The cgroup v2 root the targets' `cgroup` paths start from.
    pub cgroup_root: PathBuf,
    /// Append the log to this file (`None`: stderr). It is opened once
    /// the daemon has the mount, so a refused start leaves no file.
    pub log: Option<PathBuf>,
    /// An online controller's counters are scripted (`--fake-counters`).
    pub fake_counters: bool,
    /// An online controller's counters come from this profile table's
    /// rows at each process's way count (`--fake-counters-from`).
    pub fake_table: Option<PathBuf>,
}

impl DaemonOptions {
    /// Where an online controller's counts come from.
    pub fn counters(&self) -> CounterChoice<'_> {
        CounterChoice::from_flags(self.fake_counters, self.fake_table.as_deref())
    }
}

/// The requests signals make: set by the caller's handlers, read by the
/// loop every 10 ms.
#[derive(Debug, Default)]
pub struct Requests {
    /// The signal that asks the daemon to stop (SIGINT, SIGTERM), 0 while
    /// none came.
    pub stop: AtomicI32,
    /// Set to re-read the configuration (SIGHUP); the loop clears it.
    pub reload: AtomicBool,
}

/// How the daemon is given the alone curves (its configuration's
/// `metrics` key), for the message of a policy that needs them.
const DAEMON_TABLE: TableOption = TableOption {
    reader: "the daemon",
    give: "add metrics = \"TABLE.csv\"",
    whose: "every target's",
};

/// A configuration with what it needs to plan: the curves.
struct Loaded {
    config: DaemonConfig,
    /// Per target, its alone curves, when a table is given.
    curves: Vec<Option<AppCurves>>,
}

impl Loaded {
    fn read(path: &std::path::Path, opts: &DaemonOptions) -> Result<Loaded, Error> {
        let config = DaemonConfig::read(path)?;
        check_policy(config.policy, opts.counters(), false).map_err(|e| {
            Error::config(
                format_args!("{}:{}", path.display(), config.policy_line),
                "policy",
                e,
            )
        })?;
        check_alone_curves(config.policy, config.metrics.is_some(), DAEMON_TABLE).map_err(|e| {
            Error::config(
                format_args!("{}:{}", path.display(), config.policy_line),
                "policy",
                e,
            )
        })?;
        let curves = match &config.metrics {
            None => vec![None; config.targets.len()],
            Some(m) => {
                let table = MetricsTable::from_path(m).map_err(|e| {
                    Error::config(
                        format_args!("{}:{}", path.display(), config.metrics_line),
                        "metrics",
                        e,
                    )
                })?;
                config
                    .targets
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let found = table.apps().iter().position(|a| a.name == t.profile);
                        let Some(found) = found else {
                            return Err(Error::config(
                                format_args!("{}:{}", path.display(), t.profile_line),
                                format!("target[{i}].profile"),
                                format_args!(
                                    "no program '{}' in {}{}",
                                    t.profile,
                                    m.display(),
                                    table
                                        .suggest(&t.profile)
                                        .map(|s| format!("; did you mean '{s}'?"))
                                        .unwrap_or_default()
                                ),
                            ));
                        };
                        Ok(Some(table.curves(found)))
                    })
                    .collect::<Result<_, Error>>()?
            }
        };
        Ok(Loaded { config, curves })
    }

    /// The controller of the policy for the adopted set, its counters
    /// attached first when it reads them; `profiles` are the adopted
    /// processes' programs in the profile table (their targets').
    fn controller(
        &self,
        opts: &DaemonOptions,
        adopter: &mut Adopter,
        profiles: &[&str],
    ) -> Result<Box<dyn Controller>, Error> {
        let config = &self.config;
        if config.policy.is_online() {
            let programs: Vec<(&str, &str)> = adopter
                .apps()
                .iter()
                .zip(profiles)
                .map(|(a, p)| (a.name.as_str(), *p))
                .collect();
            let counters =
                counter_source(opts.counters(), &programs, config.interval, &opts.roots)?;
            adopter.count_with(counters)?;
        }
        let setup = host_setup(
            adopter.apps().len(),
            adopter.clock_mhz(),
            adopter.llc(),
            config.interval,
            &config.path,
        );
        linux_controller(
            config.policy,
            config.sections(),
            &setup,
            &RunOptions::default(),
        )
    }

    /// Every target's processes now, target order then pid order, each
    /// with its target's profile; a process two targets name belongs to
    /// the first. The daemon never adopts itself (a cgroup target may
    /// hold it).
    fn scan(&self, opts: &DaemonOptions) -> Result<Vec<(Adopted, &str)>, Error> {
        let mut seen = std::collections::BTreeSet::from([std::process::id()]);
        let mut apps = Vec::new();
        for (t, curves) in self.config.targets.iter().zip(&self.curves) {
            for pid in t.selector.find(&opts.roots.proc_root, &opts.cgroup_root)? {
                if seen.insert(pid) {
                    let adopted = Adopted {
                        name: format!("{}:{pid}", t.name),
                        pid,
                        curves: curves.clone(),
                    };
                    apps.push((adopted, t.profile.as_str()));
                }
            }
        }
        Ok(apps)
    }
}

/// Why a plan was applied (the log's `cause`, in the word its kebab-case
/// name gives).
#[cachepart_units::kind]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// The set of processes changed (or the daemon started or reloaded).
    Targets,
    /// An online controller re-planned from the interval's samples.
    Controller,
}

/// Runs the daemon until `requests.stop` is set; returns that signal.
/// Fails before it manages anything when the configuration, the profile
/// table, the counters or the machine is not usable; once running, a
/// failed scan or plan is logged and the loop goes on.
pub fn run_daemon(opts: &DaemonOptions, requests: &Requests) -> Result<i32, Error> {
    let mut loaded = Loaded::read(&opts.config, opts)?;
    // Static policies plan from the profile table: no counters are read,
    // so the PMU check of `cachepart run` applies to online ones only.
    let no_pmu_needed = !loaded.config.policy.is_online() || opts.counters().is_fake();
    preflight(&opts.roots, opts.plain_resctrl, no_pmu_needed)?;
    let mut adopter = Adopter::start(&opts.roots, opts.plain_resctrl)?;
    let log = &mut Log::open(opts.log.as_deref())?;
    log.start(&loaded.config, &adopter)?;
    // The set the last plan was made for (None: plan at the next scan).
    let mut planned: Option<Vec<(String, u32)>> = None;
    // The controller of that set and the plan it applied last.
    let mut controller: Option<Box<dyn Controller>> = None;
    let mut applied = Plan::default();
    let mut last_error: Option<String> = None;
    let mut index: u64 = 0;
    loop {
        let scanned = loaded.scan(opts);
        let step = scanned.and_then(|found| {
            let set: Vec<(String, u32)> =
                found.iter().map(|(a, _)| (a.name.clone(), a.pid)).collect();
            if planned.as_ref() == Some(&set) {
                let Some(c) = controller
                    .as_mut()
                    .filter(|_| loaded.config.policy.is_online())
                else {
                    return adopter.resync().map_err(Error::from);
                };
                // The samples move the threads born since, too.
                let interval = adopter.sample().map_err(|e| controller_err(&**c, e))?;
                let actions = c
                    .on_interval(&interval)
                    .map_err(|e| controller_err(&**c, e))?;
                if let Some(plan) = carry_out(&mut **c, &mut adopter, actions)? {
                    if plan != applied {
                        applied = plan;
                        // the same set: nobody joined or left
                        let before = adopted(&adopter);
                        log.plan(
                            index,
                            &loaded.config,
                            &adopter,
                            &applied,
                            &before,
                            Cause::Controller,
                        )?;
                    }
                }
                return Ok(());
            }
            let before = adopted(&adopter);
            planned = Some(set);
            controller = None;
            let (apps, profiles): (Vec<Adopted>, Vec<&str>) = found.into_iter().unzip();
            adopter.adopt(apps)?;
            applied = if adopter.apps().is_empty() {
                apply(&mut adopter, &Plan::default())?;
                Plan::default()
            } else {
                let mut c = loaded.controller(opts, &mut adopter, &profiles)?;
                let actions = c.start(&mut adopter).map_err(|e| controller_err(&*c, e))?;
                let plan = match carry_out(&mut *c, &mut adopter, actions)? {
                    Some(p) => p,
                    // No plan yet: the last set's clusters go.
                    None => {
                        apply(&mut adopter, &Plan::default())?;
                        Plan::default()
                    }
                };
                controller = Some(c);
                plan
            };
            log.plan(
                index,
                &loaded.config,
                &adopter,
                &applied,
                &before,
                Cause::Targets,
            )
        });
        match step {
            Ok(()) => last_error = None,
            Err(e) => {
                // Said once until it changes: the same refusal every
                // interval would flood the log.
                let text = e.to_string();
                if last_error.as_deref() != Some(text.as_str()) {
                    log.error(index, &text)?;
                    last_error = Some(text);
                }
            }
        }
        index += 1;
        let start = Instant::now();
        while start.elapsed() < loaded.config.interval {
            let sig = requests.stop.load(Ordering::Relaxed);
            if sig != 0 {
                let removed = adopter.groups().clusters().len();
                let r = adopter.shutdown();
                log.stop(sig, removed, r.as_ref().err().map(|e| e.to_string()))?;
                r?;
                return Ok(sig);
            }
            if requests.reload.swap(false, Ordering::Relaxed) {
                match Loaded::read(&opts.config, opts) {
                    Ok(l) => {
                        log.reload_ok(&l.config)?;
                        loaded = l;
                        planned = None;
                        last_error = None;
                        break;
                    }
                    Err(e) => log.reload_refused(&e.to_string())?,
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// An error of controller `c` (or of the machine it asked), named by it.
fn controller_err(c: &dyn Controller, e: impl Into<crate::error::Source>) -> Error {
    Error::machine(c.name(), e)
}

/// The adopted processes, name to pid.
fn adopted(adopter: &Adopter) -> BTreeMap<String, u32> {
    adopter
        .apps()
        .iter()
        .map(|a| (a.name.clone(), a.pid))
        .collect()
}

/// Applies `plan` to the adopted processes.
fn apply(adopter: &mut Adopter, plan: &Plan) -> Result<(), Error> {
    adopter
        .apply(plan)
        .map_err(|e| Error::machine("applying the plan", e))
}

/// Carries out the controller's actions one by one, telling it of each
/// effect; returns the last plan applied, if any.
fn carry_out(
    controller: &mut dyn Controller,
    adopter: &mut Adopter,
    actions: Vec<Action>,
) -> Result<Option<Plan>, Error> {
    let mut last = None;
    for action in actions {
        let effect = adopter.act(&action).map_err(|e| {
            Error::machine(format_args!("{}: {}", controller.name(), action.kind()), e)
        })?;
        controller.applied(&action, &effect);
        if let Action::Apply(plan) = action {
            last = Some(plan);
        }
    }
    Ok(last)
}
