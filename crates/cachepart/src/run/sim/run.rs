//! [`run_scenario`]: the scenario's controllers on the one loop of
//! `cachepart-policy` ([`drive`]) over the simulator machine until every
//! app has finished, every sample kept, then the alone runs and the
//! per-app results and mix metrics of the [`SimReport`].

use cachepart_machine::Machine;
use cachepart_policy::{drive, DriveError, Stop};
use cachepart_profile::MixMetrics;

use super::alone::alone_totals;
use super::controllers::Controllers;
use super::report::{AppPrefetch, AppResult, SimReport};
use crate::error::Error;
use crate::output::samples::SampleRow;
use crate::registry::method::{MethodTracker, RunMethod};
use crate::spec::scenario::Scenario;

/// Called after each interval with (interval number, simulated cycles,
/// instructions retired so far by all apps, their total instruction
/// limit if every app has one).
pub type SimProgress<'a> = &'a (dyn Fn(u64, u64, u64, Option<u64>) + Sync);

fn sim_err(scenario: &Scenario, e: impl Into<crate::error::Source>) -> Error {
    Error::simulation(format!("scenario {}", scenario.name), e)
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
    let mut machine = scenario.machine().map_err(|e| sim_err(scenario, e))?;
    // Colors the scenario fixes for its apps.
    if let Some(plan) = scenario.fixed_colors() {
        machine.apply(&plan).map_err(|e| sim_err(scenario, e))?;
    }
    // Each app alone: its totals, and under the restart method the
    // geometric mean of its runs alone (separate simulations, made first
    // so that throttle-online normalises by what the report does).
    let alone = if file.alone {
        Some(alone_totals(scenario).map_err(|e| sim_err(scenario, e))?)
    } else {
        None
    };
    let alone_ipc: Option<Vec<f64>> = alone
        .as_ref()
        .map(|a| a.iter().map(|(t, _)| t.ipc).collect());
    let mut controllers = Controllers::new(scenario, &mut machine, alone_ipc, |e| {
        e.within(&format!("scenario {}", scenario.name))
    })?;
    let mut chain = controllers.chain();
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
        coloring: controllers.coloring.as_ref().map(|c| c.report(&names)),
        lfoc_online: controllers
            .lfoc_online
            .as_ref()
            .map(|o| o.decisions().to_vec()),
        kpart_dynaway: controllers
            .kpart_dynaway
            .as_ref()
            .map(|d| d.decisions().to_vec()),
        dunn_dynamic: controllers
            .dunn_dynamic
            .as_ref()
            .map(|d| d.decisions().to_vec()),
        ucp_online: controllers
            .ucp_online
            .as_ref()
            .map(|u| u.decisions().to_vec()),
        throttle_online: controllers
            .throttle_online
            .as_ref()
            .map(|t| t.decisions().to_vec()),
        prefetch,
        samples,
    })
}
