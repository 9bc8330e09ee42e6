//! Running a [`Scenario`] on the simulator: the controllers of the
//! scenario (a `[coloring]` page-color policy, then a CAT policy that
//! decides the masks from the apps' alone curves) run on the one loop of
//! `cachepart-policy` ([`drive`]) over the simulator machine until every
//! app has finished (every sample kept); each app then runs alone on the
//! same platform for its slowdown, and the result is a [`SimReport`]:
//! per-app totals, slowdowns, the mix metrics (STP, ANTT, unfairness, ...),
//! the samples and the coloring's decisions ([`SimReport::coloring`]).
//!
//! Everything is deterministic for a scenario and seed: the alone runs
//! go in parallel but each is its own simulation.

use cachepart_machine::{AppColors, Machine, Plan};
use cachepart_policy::{drive, Chain, Controller, DriveError, Static, Stop};
use cachepart_profile::MixMetrics;
use cachepart_sim::system::{run_alone, run_alone_for, run_alone_runs, AppTotals, SimMachine};
use rayon::prelude::*;
use serde::Serialize;

use crate::coloring::{ColorController, ColoringReport};
use crate::error::Error;
use crate::experiment::{lfoc, policy_for, RunOptions};
use crate::method::{gmean, MethodTracker, RunMethod};
use crate::online::{dunn_dynamic_for, kpart_dynaway_for, lfoc_online_for, ucp_online_for};
use crate::samples::SampleRow;
use crate::scenario::Scenario;
use crate::Algorithm;

/// Called after each interval with (interval number, simulated cycles,
/// instructions retired so far by all apps, their total instruction
/// limit if every app has one).
pub type SimProgress<'a> = &'a (dyn Fn(u64, u64, u64, Option<u64>) + Sync);

/// One app's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AppResult {
    /// Its core.
    pub core: u32,
    /// Its CAT mask (hex), `all` when unrestricted.
    pub ways: String,
    /// Its page colors at the end (range syntax), `all` when unrestricted.
    pub colors: String,
    /// Its whole-run counters in the mix.
    pub totals: AppTotals,
    /// Its IPC alone with the whole LLC, when alone runs were made.
    pub ipc_alone: Option<f64>,
    /// IPC alone / IPC in the mix; under the restart method, the
    /// geometric mean of its completed runs' times over its time alone.
    pub slowdown: Option<f64>,
    /// Under the restart method: the length of each of its completed runs
    /// in the mix, in cycles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<Vec<u64>>,
    /// Under the restart method: the cycles of one run alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_cycles_alone: Option<f64>,
}

/// The result of a simulated scenario.
#[derive(Clone, Debug, Serialize)]
pub struct SimReport {
    /// The scenario's name.
    pub scenario: String,
    /// The platform's name.
    pub platform: String,
    /// The policy that chose the masks, if any.
    pub policy: Option<String>,
    /// The run methodology, unless the default (to completion).
    #[serde(skip_serializing_if = "RunMethod::is_default")]
    pub method: RunMethod,
    /// The plan it chose.
    pub plan: Option<Plan>,
    /// Per-app results, in scenario order.
    pub apps: Vec<AppResult>,
    /// Mix metrics, when alone runs were made.
    pub metrics: Option<MixMetrics>,
    /// Intervals run.
    pub intervals: u64,
    /// Simulated cycles of the whole run.
    pub simulated_cycles: u64,
    /// The page-color policy's decisions, if one ran.
    pub coloring: Option<ColoringReport>,
    /// Online LFOC's decisions (warm-ups, sampling steps, classes, class
    /// changes, re-plans), if it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lfoc_online: Option<Vec<cachepart_policy::LfocDecision>>,
    /// KPart-Dynaway's profiling steps and plans, if it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kpart_dynaway: Option<Vec<cachepart_policy::kpart_dynaway::DynawayDecision>>,
    /// Dynamic Dunn's re-plans, if it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dunn_dynamic: Option<Vec<cachepart_policy::dunn_dynamic::DunnDecision>>,
    /// Hardware prefetch counts per app (its core's), when the scenario
    /// turned prefetchers on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefetch: Option<Vec<AppPrefetch>>,
    /// UCP's re-partitions on its utility monitors, if it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ucp_online: Option<Vec<cachepart_policy::UcpDecision>>,
    /// Every sample, interval-major.
    #[serde(skip)]
    pub samples: Vec<SampleRow>,
}

fn sim_err(scenario: &Scenario, e: impl std::fmt::Display) -> Error {
    Error::Input(format!("scenario {}: {e}", scenario.name))
}

/// A driver error of the scenario's run. When the scenario's only
/// controller is its CAT policy, the policy's failure (or a plan the
/// machine refuses) names the workload and the algorithm.
fn drive_err(scenario: &Scenario, e: DriveError) -> Error {
    let Some(a) = scenario.policy.filter(|_| scenario.coloring.is_none()) else {
        return sim_err(scenario, e);
    };
    let source = match e {
        DriveError::Controller { source, .. } => source,
        DriveError::Action { source, .. } => source.into(),
        e => return sim_err(scenario, e),
    };
    Error::Policy {
        workload: scenario.name.clone(),
        algorithm: a.to_string(),
        source: Box::new(source),
    }
}

/// Runs `scenario` to the end.
pub fn run_scenario(
    scenario: &Scenario,
    progress: Option<SimProgress<'_>>,
) -> Result<SimReport, Error> {
    let file = &scenario.file;
    let mut machine = SimMachine::new(
        scenario.platform.clone(),
        scenario.apps.clone(),
        file.seed,
        file.interval_cycles,
    )
    .map_err(|e| sim_err(scenario, e))?;
    // Colors the scenario fixes for its apps.
    let fixed: Vec<AppColors> = scenario
        .colors
        .iter()
        .enumerate()
        .filter_map(|(app, c)| c.clone().map(|colors| AppColors { app, colors }))
        .collect();
    if !fixed.is_empty() {
        machine
            .apply(&Plan {
                colors: fixed,
                ..Plan::default()
            })
            .map_err(|e| sim_err(scenario, e))?;
    }
    let mut coloring = match &scenario.coloring {
        None => None,
        Some(c) => {
            machine.set_recolor_config(c.recolor);
            let pinned: Vec<Option<u32>> = file
                .apps
                .iter()
                .zip(&scenario.apps)
                .map(|(f, a)| f.core.is_some().then_some(a.core))
                .collect();
            Some(ColorController::new(c, &pinned).map_err(|e| sim_err(scenario, e))?)
        }
    };
    let opts = RunOptions {
        user_plan: file.plan.clone(),
        lfoc_preset: file.lfoc_preset.unwrap_or_default(),
        ..RunOptions::default()
    };
    let mut online = match scenario.policy {
        Some(Algorithm::LfocOnline) => Some(lfoc_online_for(scenario, lfoc(&opts))?),
        _ => None,
    };
    let mut dunn = match scenario.policy {
        Some(Algorithm::DunnDynamic) => Some(dunn_dynamic_for(scenario)?),
        _ => None,
    };
    let mut dynaway = match scenario.policy {
        Some(Algorithm::KpartDynaway) => Some(kpart_dynaway_for(scenario)?),
        _ => None,
    };
    let mut ucp = match scenario.policy {
        Some(Algorithm::UcpOnline) => {
            let (c, sampled_sets) = ucp_online_for(scenario)?;
            machine.enable_umon(sampled_sets);
            Some(c)
        }
        _ => None,
    };
    let mut policy = match scenario.policy {
        Some(a) if !a.is_online() => Some(Static::new(policy_for(a, &opts)?)),
        _ => None,
    };
    let mut parts: Vec<&mut dyn Controller> = Vec::new();
    if let Some(c) = coloring.as_mut() {
        parts.push(c.as_controller());
    }
    if let Some(p) = policy.as_mut() {
        parts.push(p);
    }
    if let Some(o) = online.as_mut() {
        parts.push(o);
    }
    if let Some(d) = dynaway.as_mut() {
        parts.push(d);
    }
    if let Some(d) = dunn.as_mut() {
        parts.push(d);
    }
    if let Some(u) = ucp.as_mut() {
        parts.push(u);
    }
    let mut chain = Chain::new(parts);
    let names = machine.app_names();
    let limit: Option<u64> = scenario.apps.iter().map(|a| a.instructions).sum();
    let mut samples = Vec::new();
    let mut retired = 0u64;
    let mut tracker = MethodTracker::new(file.method, scenario.apps.len());
    let log = drive(&mut machine, &mut chain, Stop::WhenDone, &mut |iv| {
        for x in &iv.samples {
            retired += x.instructions as u64;
            samples.push(SampleRow {
                interval: iv.index,
                end_cycles: iv.end_cycles,
                app: x.app,
                name: names[x.app].clone(),
                sample: x.clone(),
            });
        }
        if let Some(p) = progress {
            p(iv.index + 1, iv.end_cycles, retired, limit);
        }
        tracker.observe(iv)
    })
    .map_err(|e| drive_err(scenario, e))?;
    drop(chain);
    if let Some(a) = tracker.stuck() {
        return Err(sim_err(
            scenario,
            format!(
                "app {a} ({}) finished: its trace made no progress, so it can not be replayed as the run method needs",
                names[a]
            ),
        ));
    }
    let plan = log.actions.iter().find_map(|a| match (&a.action, a.cause) {
        (cachepart_machine::Action::Apply(p), cachepart_policy::driver::Cause::Start)
            if !p.clusters.is_empty() =>
        {
            Some(p.clone())
        }
        _ => None,
    });
    let prefetch = scenario.platform.prefetchers.run_word.map(|_| {
        scenario
            .apps
            .iter()
            .map(|a| AppPrefetch {
                app: a.name.clone(),
                core: a.core,
                counts: machine.prefetch_stats(a.core as usize).unwrap_or_default(),
            })
            .collect()
    });
    let totals = machine.totals();
    let final_colors: Vec<String> = (0..scenario.apps.len())
        .map(|i| {
            machine
                .app_colors(i)
                .map_or("all".into(), |c| c.to_string())
        })
        .collect();
    let cores: Vec<u32> = (0..scenario.apps.len())
        .map(|i| machine.app_core(i))
        .collect();
    // Each app alone: its totals, and under the restart method the
    // geometric mean of its runs alone.
    let alone: Option<Vec<(AppTotals, Option<f64>)>> = if file.alone {
        Some(
            scenario
                .apps
                .par_iter()
                .map(|a| {
                    // Standalone performance is the app's at full speed
                    // with the run's prefetchers (Zhang et al.'s
                    // normalisation), however the mix throttles it, and
                    // without an idle process.
                    let mut a = a.clone();
                    a.duty = cachepart_machine::Duty::FULL;
                    a.prefetch_word = None;
                    a.idle_quantum = None;
                    a
                })
                .map(|a| match file.method {
                    RunMethod::FixedTime { cycles } => run_alone_for(
                        &scenario.platform,
                        &a,
                        cycles,
                        file.interval_cycles,
                        file.seed,
                    )
                    .map(|t| (t, None)),
                    RunMethod::Restart { completions } => run_alone_runs(
                        &scenario.platform,
                        &a,
                        completions,
                        file.interval_cycles,
                        file.seed,
                    )
                    .map(|(t, runs)| (t, gmean(&runs))),
                    RunMethod::ToCompletion => {
                        run_alone(&scenario.platform, &a, None, file.seed).map(|t| (t, None))
                    }
                })
                .collect::<Result<_, _>>()
                .map_err(|e| sim_err(scenario, e))?,
        )
    } else {
        None
    };
    let masks: Vec<String> = (0..scenario.apps.len())
        .map(|i| {
            let from_plan = plan.as_ref().and_then(|p| {
                p.clusters
                    .iter()
                    .find(|c| c.apps.contains(&i))
                    .map(|c| c.mask)
            });
            match from_plan.or(scenario.apps[i].llc_mask) {
                Some(m) => m.to_hex(),
                None => "all".into(),
            }
        })
        .collect();
    let apps: Vec<AppResult> = totals
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            let ipc_alone = alone.as_ref().map(|a| a[i].0.ipc);
            let restart = matches!(file.method, RunMethod::Restart { .. });
            let run_cycles_alone = alone.as_ref().and_then(|a| a[i].1);
            let slowdown = match (run_cycles_alone, tracker.mean_run_cycles(i)) {
                (Some(alone), Some(shared)) if alone > 0.0 => Some(shared / alone),
                (Some(_), _) => Some(f64::INFINITY),
                (None, _) => ipc_alone.map(|ia| {
                    if t.ipc > 0.0 {
                        ia / t.ipc
                    } else {
                        f64::INFINITY
                    }
                }),
            };
            AppResult {
                core: cores[i],
                ways: masks[i].clone(),
                colors: final_colors[i].clone(),
                totals: t,
                ipc_alone,
                slowdown,
                runs: restart.then(|| tracker.runs()[i].clone()),
                run_cycles_alone,
            }
        })
        .collect();
    let metrics = alone.as_ref().map(|a| {
        let slow: Vec<f64> = apps.iter().map(|r| r.slowdown.unwrap_or(1.0)).collect();
        let ipc: Vec<f64> = a.iter().map(|(t, _)| t.ipc).collect();
        MixMetrics::compute(&slow, &ipc)
    });
    Ok(SimReport {
        scenario: scenario.name.clone(),
        platform: scenario.platform.name.clone(),
        policy: scenario.policy.map(|a| a.to_string()),
        method: file.method,
        plan,
        apps,
        metrics,
        intervals: log.intervals,
        simulated_cycles: log.intervals * file.interval_cycles,
        coloring: coloring.as_ref().map(|c| c.report(&names)),
        lfoc_online: online.as_ref().map(|o| o.decisions().to_vec()),
        kpart_dynaway: dynaway.as_ref().map(|d| d.decisions().to_vec()),
        dunn_dynamic: dunn.as_ref().map(|d| d.decisions().to_vec()),
        ucp_online: ucp.as_ref().map(|u| u.decisions().to_vec()),
        prefetch,
        samples,
    })
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

/// The report as a human table (apps, then the mix metrics).
pub fn to_table(r: &SimReport) -> String {
    let mut rows: Vec<Vec<String>> = vec![[
        "app",
        "core",
        "ways",
        "colors",
        "instructions",
        "cycles",
        "IPC",
        "IPC alone",
        "slowdown",
        "LLC MPKI",
        "LLC miss %",
        "mem MB",
        "LLC KiB at end",
        "recolored",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()];
    for a in &r.apps {
        let t = &a.totals;
        let miss = if t.llc_references > 0 {
            100.0 * t.llc_misses as f64 / t.llc_references as f64
        } else {
            0.0
        };
        rows.push(vec![
            t.name.clone(),
            a.core.to_string(),
            a.ways.clone(),
            a.colors.clone(),
            t.instructions.to_string(),
            format!("{:.0}", t.cycles),
            format!("{:.3}", t.ipc),
            opt(a.ipc_alone, 3),
            opt(a.slowdown, 3),
            format!("{:.2}", t.llc_mpki()),
            format!("{miss:.1}"),
            format!("{:.1}", t.memory_bytes as f64 / 1e6),
            format!("{}", t.llc_occupancy_bytes / 1024),
            t.pages_recolored.to_string(),
        ]);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    let mut out = format!(
        "scenario {} on {}{}: {} intervals, {} cycles\n",
        r.scenario,
        r.platform,
        r.policy
            .as_ref()
            .map(|p| format!(", policy {p}"))
            .unwrap_or_default()
            + &match r.method {
                RunMethod::ToCompletion => String::new(),
                RunMethod::Restart { completions } => {
                    format!(", method restart ({completions} runs of the slowest app)")
                }
                RunMethod::FixedTime { cycles } => format!(", method fixed-time ({cycles} cycles)"),
            },
        r.intervals,
        r.simulated_cycles
    );
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, v)| {
                if c == 0 {
                    format!("{v:<w$}", w = widths[c])
                } else {
                    format!("{v:>w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    if let Some(c) = &r.coloring {
        out.push_str(&format!(
            "coloring {}: {} recoloring decisions\n",
            c.policy,
            c.events.len()
        ));
        for e in &c.events {
            out.push_str(&format!(
                "  interval {} {} ({}): +[{}] -[{}] -> {} ({} pages moved, {} marked)\n",
                e.interval,
                e.name,
                e.reason,
                e.added,
                e.removed,
                e.colors,
                e.pages_moved,
                e.pages_marked
            ));
        }
    }
    if let Some(m) = &r.metrics {
        out.push_str(&format!(
            "STP {:.3}  ANTT {:.3}  unfairness {:.3}  CoV {:.3}  Jain {:.3}  unfairness factor {:.3}  efficiency {:.3}\n",
            m.stp, m.antt, m.unfairness, m.unfairness_cov, m.jain, m.unfairness_factor, m.gmean_speedup
        ));
    }
    out
}

/// The report as CSV: one row per app, the mix metrics repeated.
pub fn to_csv(r: &SimReport) -> String {
    let mut out = String::from(
        "scenario,platform,policy,app,core,ways,instructions,cycles,ipc,ipc_alone,slowdown,llc_references,llc_misses,llc_mpki,memory_stall_cycles,memory_bytes,tlb_misses,context_switches,restarts,llc_occupancy_bytes,stp,antt,unfairness,unfairness_cov,unfairness_factor,efficiency,colors,pages_recolored,page_outs,page_ins,fallbacks,paging_stall_cycles\n",
    );
    let m = r.metrics;
    let f = |v: Option<f64>| v.map_or(String::new(), |x| x.to_string());
    for a in &r.apps {
        let t = &a.totals;
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},\"{}\",{},{},{},{},{}\n",
            r.scenario,
            r.platform,
            r.policy.clone().unwrap_or_default(),
            t.name,
            a.core,
            a.ways,
            t.instructions,
            t.cycles,
            t.ipc,
            f(a.ipc_alone),
            f(a.slowdown),
            t.llc_references,
            t.llc_misses,
            t.llc_mpki(),
            t.memory_stall_cycles,
            t.memory_bytes,
            t.tlb_misses,
            t.context_switches,
            t.restarts,
            t.llc_occupancy_bytes,
            f(m.map(|m| m.stp)),
            f(m.map(|m| m.antt)),
            f(m.map(|m| m.unfairness)),
            f(m.map(|m| m.unfairness_cov)),
            f(m.map(|m| m.unfairness_factor)),
            f(m.map(|m| m.gmean_speedup)),
            a.colors,
            t.pages_recolored,
            t.page_outs,
            t.page_ins,
            t.fallbacks,
            t.paging_stall_cycles,
        ));
    }
    out
}

/// The report as pretty JSON (samples left out: write them with
/// [`crate::samples`]).
pub fn to_json(r: &SimReport) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("reports serialise");
    s.push('\n');
    s
}

/// One app's hardware prefetch counts (those of its core).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AppPrefetch {
    /// The app.
    pub app: String,
    /// Its core.
    pub core: u32,
    /// The core's counts.
    pub counts: cachepart_sim::prefetch::PrefetchStats,
}
