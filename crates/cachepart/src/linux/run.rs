//! `cachepart run`: a mix of real programs on this Linux machine under one
//! controller, as KPart's and LFOC's experiments run them.
//!
//! The mix file ([`crate::linux::mix`]) lists the apps. The run
//! checks the machine first ([`preflight`]: resctrl, and the PMU unless
//! the counters are scripted) and starts nothing when it lacks them; then
//! it drives the controller ([`crate::linux::control`]: a static policy or
//! an online controller) on a [`LinuxMachine`] until every app has
//! finished its first run, and reports each app's first run (wall time,
//! IPC, slowdown against its IPC alone at every way in the profile table)
//! with STP, ANTT and unfairness.

use std::path::{Path, PathBuf};
use std::time::Duration;

use cachepart_linux::doctor::{diagnose, Roots, Status};
use cachepart_linux::machine::{AppSpec, LinuxConfig, LinuxMachine};
use cachepart_linux::perf::pmu_dir;
use cachepart_linux::{cpu::CpuModel, msr::MsrControl};
use cachepart_machine::{Action, AppCurves, EventKind, Machine};
use cachepart_policy::{drive, Stop};
use cachepart_profile::{MetricsTable, MixMetrics};
use serde::Serialize;

use crate::error::Error;
use crate::linux::control::{
    check_alone_curves, check_policy, linux_controller, linux_setup, TableOption,
};
use crate::linux::counters::{counter_source, find_program, CounterChoice};
use crate::linux::mix::{parse_interval, MixFile};
use crate::output::samples::SampleRow;
use crate::run::profile::RunOptions;
use crate::Algorithm;

/// How to run a mix.
#[derive(Clone, Debug)]
pub struct LinuxRunOptions {
    /// The policy (a static one: it plans once from the alone curves).
    pub policy: Algorithm,
    /// The interval (default: the mix file's, else 500 ms).
    pub interval: Option<Duration>,
    /// Where the kernel interfaces are.
    pub roots: Roots,
    /// The resctrl mount is a plain directory tree (tests).
    pub plain_resctrl: bool,
    /// Scripted counters in place of perf.
    pub fake_counters: bool,
    /// Counters from this profile table's rows at each app's way count in
    /// place of perf (and of `fake_counters`).
    pub fake_table: Option<PathBuf>,
    /// Allow MSR writes (throttling).
    pub allow_msr: bool,
    /// The profile table giving the apps' alone curves.
    pub metrics: Option<PathBuf>,
    /// Raised by the caller's SIGINT/SIGTERM handler: the run stops at
    /// the next interval check, cleaning up, and fails. `None`: the
    /// machine registers its own.
    pub interrupt: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// One app's first run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinuxAppResult {
    /// Its name.
    pub name: String,
    /// Its core.
    pub core: Option<u32>,
    /// Its cluster's way mask in the plan (hex), if the plan had clusters.
    pub mask: Option<String>,
    /// Wall time of its first run, seconds.
    pub first_run_s: f64,
    /// Runs completed (restarts included).
    pub runs: usize,
    /// Instructions of its first run.
    pub instructions: f64,
    /// Cycles of its first run.
    pub cycles: f64,
    /// IPC of its first run.
    pub ipc: f64,
    /// IPC alone with every way, from the profile table.
    pub ipc_alone: Option<f64>,
    /// `ipc_alone / ipc`.
    pub slowdown: Option<f64>,
}

/// A plan the controller applied.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AppliedPlan {
    /// The interval it followed (0: at the start).
    pub interval: u64,
    /// The plan, as `Plan` prints it.
    pub plan: String,
}

/// The result of a run.
#[derive(Clone, Debug, Serialize)]
pub struct LinuxRunReport {
    /// The policy.
    pub policy: String,
    /// The platform's name.
    pub platform: String,
    /// The interval, milliseconds.
    pub interval_ms: u64,
    /// Whether the counts were scripted (`--fake-counters`).
    pub fake_counters: bool,
    /// Per app, mix order.
    pub apps: Vec<LinuxAppResult>,
    /// STP, ANTT, unfairness, when every app has a slowdown.
    pub metrics: Option<MixMetrics>,
    /// Intervals run.
    pub intervals: u64,
    /// Every cluster plan applied, in order (a static policy applies one;
    /// an online controller re-plans).
    pub plans: Vec<AppliedPlan>,
    /// Stale groups of dead managers removed at the start.
    pub removed_at_start: Vec<String>,
    /// Every sample, interval-major.
    #[serde(skip)]
    pub samples: Vec<SampleRow>,
}

/// Checks that this machine can run a mix: resctrl, and perf counters
/// unless `fake_counters`. The error lists what is missing, each with its
/// fix, as `cachepart doctor` words it.
pub fn preflight(roots: &Roots, plain_resctrl: bool, fake_counters: bool) -> Result<(), Error> {
    let report = diagnose(roots);
    let mut missing: Vec<String> = Vec::new();
    // a fake tree or an emulated mount: the CPU and kernel checks do not apply
    let emulated = cachepart_linux::resctrl::mount::is_emulated(&roots.proc_root, &roots.resctrl);
    for c in &report.checks {
        let needed = if plain_resctrl || emulated {
            false
        } else {
            c.status == Status::Missing
        };
        let pmu = c.name == "perf PMU" && !fake_counters && c.status != Status::Ok;
        if needed || pmu {
            missing.push(c.to_string());
        }
    }
    if plain_resctrl && !roots.resctrl.join("info").is_dir() {
        missing.push(format!(
            "MISSING  resctrl tree              no {}/info",
            roots.resctrl.display()
        ));
    }
    if !fake_counters
        && pmu_dir(&roots.sys).is_none()
        && !missing.iter().any(|m| m.contains("perf PMU"))
    {
        missing.push("absent   perf PMU                   no hardware counters".into());
    }
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::machine_refused(format_args!(
        "this machine cannot run a mix (nothing was started):\n{}\n(--fake-counters replaces the perf counters with scripted ones; `cachepart doctor` lists every check)",
        missing.join("\n")
    )))
}

impl LinuxRunOptions {
    /// Where the counts come from.
    pub fn counters(&self) -> CounterChoice<'_> {
        CounterChoice::from_flags(self.fake_counters, self.fake_table.as_deref())
    }

    /// Refuses options no run can take, before anything is read or
    /// started: a policy a Linux machine cannot run ([`check_policy`]),
    /// and one that needs the apps' alone curves without `metrics`
    /// (`-m/--metrics`, [`check_alone_curves`]). [`run_mix`] checks them
    /// too; a caller checks first to refuse before making its outputs.
    pub fn check(&self) -> Result<(), Error> {
        check_policy(self.policy, self.counters(), self.allow_msr)?;
        check_alone_curves(self.policy, self.metrics.is_some(), RUN_TABLE)
            .map_err(|e| Error::Usage(format!("--policy {}: {e}", self.policy)))
    }
}

/// How `cachepart run` is given the alone curves, for the message of a
/// policy that needs them.
const RUN_TABLE: TableOption = TableOption {
    reader: "`cachepart run`",
    give: "give -m/--metrics TABLE.csv",
    whose: "every app's",
};

fn alone_curves(mix: &MixFile, metrics: &Path) -> Result<Vec<AppCurves>, Error> {
    let table = MetricsTable::from_path(metrics)?;
    mix.apps
        .iter()
        .map(|a| Ok(table.curves(find_program(&table, a.program(), &a.name)?)))
        .collect()
}

/// Runs the mix in `mix_path` to the end of every app's first run.
pub fn run_mix(mix_path: &Path, opts: &LinuxRunOptions) -> Result<LinuxRunReport, Error> {
    let mix = MixFile::read(mix_path)?;
    opts.check()?;
    let interval = match (opts.interval, &mix.interval) {
        (Some(d), _) => d,
        (None, Some(t)) => parse_interval(t).map_err(|e| Error::config("", "", e))?,
        (None, None) => Duration::from_millis(500),
    };
    let alone = opts
        .metrics
        .as_deref()
        .map(|m| alone_curves(&mix, m))
        .transpose()?;
    preflight(&opts.roots, opts.plain_resctrl, opts.counters().is_fake())?;
    let cpu = CpuModel::read(&opts.roots.proc_root).ok();
    let programs: Vec<(&str, &str)> = mix
        .apps
        .iter()
        .map(|a| (a.name.as_str(), a.program()))
        .collect();
    let counters = counter_source(opts.counters(), &programs, interval, &opts.roots)?;
    let msr = if opts.allow_msr {
        let cpu = cpu.ok_or_else(|| Error::machine_refused("the CPU model is unknown"))?;
        Some(MsrControl::new(&opts.roots.dev, &cpu, true)?)
    } else {
        None
    };
    let apps: Vec<AppSpec> = mix
        .apps
        .iter()
        .map(|a| AppSpec {
            name: a.name.clone(),
            argv: a.argv.clone(),
            core: a.core,
            restart: a.restart,
        })
        .collect();
    let names: Vec<String> = apps.iter().map(|a| a.name.clone()).collect();
    let n = apps.len();
    let config = LinuxConfig {
        roots: opts.roots.clone(),
        plain_resctrl: opts.plain_resctrl,
        interval,
        counters,
        msr,
        alone: alone.clone(),
        interrupt: opts.interrupt.clone(),
    };
    let mut machine = LinuxMachine::start(config, apps).map_err(|e| match e {
        // An app this machine cannot run is the mix file's error.
        cachepart_linux::Error::App { index, name, why } => {
            Error::config(mix_path.display(), format!("app {index} ({name})"), why)
        }
        e => e.into(),
    })?;
    let setup = linux_setup(&machine, interval, mix_path);
    let mut controller =
        linux_controller(opts.policy, mix.sections(), &setup, &RunOptions::default())?;
    let mut samples = Vec::new();
    let mut first = vec![(0.0f64, 0.0f64); n];
    let mut finished = vec![false; n];
    let log = drive(
        &mut machine,
        controller.as_mut(),
        Stop::WhenDone,
        &mut |iv| {
            for s in &iv.samples {
                if !finished[s.app] {
                    first[s.app].0 += s.instructions;
                    first[s.app].1 += s.cycles;
                }
                samples.push(SampleRow {
                    interval: iv.index,
                    end_cycles: iv.end_cycles,
                    app: s.app,
                    name: names[s.app].clone(),
                    sample: s.clone(),
                });
            }
            for e in &iv.events {
                if e.kind == EventKind::Finished {
                    finished[e.app] = true;
                }
            }
            cachepart_policy::Flow::Continue
        },
    )
    .map_err(|e| Error::machine(mix_path.display(), e))?;
    let plan = log.actions.iter().rev().find_map(|a| match &a.action {
        Action::Apply(p) if !p.clusters.is_empty() => Some(p.clone()),
        _ => None,
    });
    let mask_of = |app: usize| {
        plan.as_ref().and_then(|p| {
            p.clusters
                .iter()
                .find(|c| c.apps.contains(&app))
                .map(|c| c.mask.to_string())
        })
    };
    let results: Vec<LinuxAppResult> = (0..n)
        .map(|i| {
            let (ins, cyc) = first[i];
            let ipc = if cyc > 0.0 { ins / cyc } else { 0.0 };
            let ipc_alone = alone.as_ref().and_then(|a| a[i].ipc.last().copied());
            LinuxAppResult {
                name: names[i].clone(),
                core: machine.specs()[i].core,
                mask: mask_of(i),
                first_run_s: machine.first_run(i).map_or(0.0, |d| d.as_secs_f64()),
                runs: machine.runs(i).len(),
                instructions: ins,
                cycles: cyc,
                ipc,
                slowdown: ipc_alone.filter(|_| ipc > 0.0).map(|a| a / ipc),
                ipc_alone,
            }
        })
        .collect();
    let metrics = results
        .iter()
        .map(|r| r.slowdown.zip(r.ipc_alone))
        .collect::<Option<Vec<_>>>()
        .map(|v| {
            let (s, a): (Vec<f64>, Vec<f64>) = v.into_iter().unzip();
            MixMetrics::compute(&s, &a)
        });
    let report = LinuxRunReport {
        policy: opts.policy.to_string(),
        platform: machine.platform().name.clone(),
        interval_ms: interval.as_millis() as u64,
        fake_counters: opts.counters().is_fake(),
        apps: results,
        metrics,
        intervals: log.intervals,
        plans: log
            .actions
            .iter()
            .filter_map(|a| match &a.action {
                Action::Apply(p) if !p.clusters.is_empty() => Some(AppliedPlan {
                    interval: a.interval,
                    plan: p.to_string(),
                }),
                _ => None,
            })
            .collect(),
        removed_at_start: machine.groups().removed_at_start().to_vec(),
        samples,
    };
    machine.shutdown()?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_resctrl_or_pmu_nothing_starts() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        cachepart_linux::fake::proc_tree(&r.join("proc"), false, &r.join("resctrl")).unwrap();
        let roots = Roots {
            proc_root: r.join("proc"),
            sys: r.join("sys"),
            dev: r.join("dev"),
            boot: r.join("boot"),
            resctrl: r.join("resctrl"),
        };
        let e = preflight(&roots, false, false).unwrap_err().to_string();
        assert!(e.contains("MISSING  resctrl mount"), "{e}");
        assert!(e.contains("perf PMU"), "{e}");
        assert!(e.contains("nothing was started"), "{e}");
        let e = preflight(&roots, false, true).unwrap_err().to_string();
        assert!(!e.contains("perf PMU"), "{e}");
    }

    #[test]
    fn a_policy_that_needs_alone_curves_without_metrics_is_refused_naming_the_option() {
        let opts = |policy: &str, metrics: Option<&str>| LinuxRunOptions {
            policy: policy.parse().unwrap(),
            interval: None,
            roots: Roots::default(),
            plain_resctrl: true,
            fake_counters: true,
            fake_table: None,
            allow_msr: true,
            metrics: metrics.map(PathBuf::from),
            interrupt: None,
        };
        for policy in ["lfoc", "ucp", "throttle-online"] {
            let e = opts(policy, None).check().unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("--policy {policy}: {policy} "))
                    && e.contains("give -m/--metrics TABLE.csv"),
                "{e}"
            );
            opts(policy, Some("m.csv")).check().unwrap();
        }
        for policy in ["stock", "equal-part", "lfoc-online"] {
            opts(policy, None).check().unwrap();
        }
        let e = opts("optc-unf", Some("m.csv")).check().unwrap_err();
        assert!(e.to_string().contains("exact solver"), "{e}");
    }
}
