//! `cachepart daemon`: a static policy managing processes that run
//! anyway, found by process id, command name or cgroup ([`config`]).
//!
//! The loop, once an interval: find every target's processes again
//! (processes that appeared join, those gone leave); when the set changed,
//! adopt it ([`Adopter`]), let the policy plan for it from the profile
//! table, and apply the plan; otherwise move the threads born since.
//! Each decision is one JSON object on a line of the log ([`log`]).
//! The caller's flags carry the signals: a reload request (SIGHUP)
//! re-reads the configuration, keeping the old one when the new one is
//! bad; a stop request (SIGINT, SIGTERM) removes the owned groups (their
//! tasks return to the default group) and ends the loop.
//!
//! The daemon reads no hardware counters and writes no MSR: its policies
//! plan once per set of processes from the profile table.

pub mod config;
pub mod log;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

use cachepart_linux::doctor::Roots;
use cachepart_linux::machine::{Adopted, Adopter};
use cachepart_machine::{AppCurves, Machine, Plan};
use cachepart_policy::Policy;
use cachepart_profile::MetricsTable;

pub use config::{DaemonConfig, Target};
use log::Log;

use crate::error::Error;
use crate::experiment::{policy_for, RunOptions};
use crate::linux_run::preflight;

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

/// A configuration with what it needs to plan: the policy and the curves.
struct Loaded {
    config: DaemonConfig,
    policy: Box<dyn Policy>,
    /// Per target, its alone curves, when a table is given.
    curves: Vec<Option<AppCurves>>,
}

impl Loaded {
    fn read(path: &std::path::Path) -> Result<Loaded, Error> {
        let config = DaemonConfig::read(path)?;
        let policy = policy_for(config.policy, &RunOptions::default())?;
        let curves = match &config.metrics {
            None => vec![None; config.targets.len()],
            Some(m) => {
                let table = MetricsTable::from_path(m)?;
                config
                    .targets
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let found = table.apps().iter().position(|a| a.name == t.profile);
                        let Some(found) = found else {
                            return Err(Error::Input(format!(
                                "{}:{}: target[{i}].profile: no program '{}' in {}{}",
                                path.display(),
                                t.profile_line,
                                t.profile,
                                m.display(),
                                table
                                    .suggest(&t.profile)
                                    .map(|s| format!("; did you mean '{s}'?"))
                                    .unwrap_or_default()
                            )));
                        };
                        Ok(Some(table.curves(found)))
                    })
                    .collect::<Result<_, Error>>()?
            }
        };
        Ok(Loaded {
            config,
            policy,
            curves,
        })
    }

    /// Every target's processes now, target order then pid order; a
    /// process two targets name belongs to the first. The daemon never
    /// adopts itself (a cgroup target may hold it).
    fn scan(&self, opts: &DaemonOptions) -> Result<Vec<Adopted>, Error> {
        let mut seen = std::collections::BTreeSet::from([std::process::id()]);
        let mut apps = Vec::new();
        for (t, curves) in self.config.targets.iter().zip(&self.curves) {
            for pid in t.selector.find(&opts.roots.proc_root, &opts.cgroup_root)? {
                if seen.insert(pid) {
                    apps.push(Adopted {
                        name: format!("{}:{pid}", t.name),
                        pid,
                        curves: curves.clone(),
                    });
                }
            }
        }
        Ok(apps)
    }
}

/// Runs the daemon until `requests.stop` is set; returns that signal.
/// Fails before it manages anything when the configuration, the profile
/// table or the machine is not usable; once running, a failed scan or
/// plan is logged and the loop goes on.
pub fn run_daemon(opts: &DaemonOptions, requests: &Requests) -> Result<i32, Error> {
    let mut loaded = Loaded::read(&opts.config)?;
    // Static policies plan from the profile table: no counters are read,
    // so the PMU check of `cachepart run` does not apply.
    preflight(&opts.roots, opts.plain_resctrl, true)?;
    let mut adopter = Adopter::start(&opts.roots, opts.plain_resctrl)?;
    let log = &mut Log::open(opts.log.as_deref())?;
    log.start(&loaded.config, &adopter)?;
    // The set the last plan was made for (None: plan at the next scan).
    let mut planned: Option<Vec<(String, u32)>> = None;
    let mut last_error: Option<String> = None;
    let mut index: u64 = 0;
    loop {
        let scanned = loaded.scan(opts);
        let step = scanned.and_then(|apps| {
            let set: Vec<(String, u32)> = apps.iter().map(|a| (a.name.clone(), a.pid)).collect();
            if planned.as_ref() == Some(&set) {
                return adopter.resync().map_err(Error::from);
            }
            let before: BTreeMap<String, u32> = adopter
                .apps()
                .iter()
                .map(|a| (a.name.clone(), a.pid))
                .collect();
            planned = Some(set);
            adopter.adopt(apps)?;
            let plan = plan_for(&mut *loaded.policy, &mut adopter)?;
            log.plan(index, &loaded.config, &adopter, &plan, &before)
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
                match Loaded::read(&opts.config) {
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

/// The policy's plan for the adopted processes, applied; with no process,
/// the plan without clusters (every owned group removed).
fn plan_for(policy: &mut dyn Policy, adopter: &mut Adopter) -> Result<Plan, Error> {
    let plan = if adopter.apps().is_empty() {
        Plan::default()
    } else {
        policy
            .decide(adopter)
            .map_err(|e| Error::Input(format!("{}: {e}", policy.name())))?
    };
    adopter
        .apply(&plan)
        .map_err(|e| Error::Input(format!("applying the plan: {e}")))?;
    Ok(plan)
}
