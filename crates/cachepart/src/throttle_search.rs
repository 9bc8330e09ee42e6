//! Zhang et al.'s best-fairness search for execution throttling: a
//! scenario is run under every duty-cycle setting (and then, for the
//! hybrid method, under prefetcher settings), and the setting with the
//! lowest unfairness factor wins.
//!
//! The paper: "we manually try all possible policy decisions ... and
//! report the result for the policy decision yielding the best fairness.
//! Since the parameter search space when combining duty cycle modulation
//! and prefetcher configuration is large, we explore it in a genetic
//! fashion. Specifically, we first select default and a few duty cycle
//! modulation settings that achieve reasonably good fairness and then
//! tune their prefetchers."
//!
//! Here:
//!
//! 1. The scenario runs once as written, with its alone runs: the apps'
//!    standalone performance (at full speed, with the run's prefetchers)
//!    that every candidate is normalised to.
//! 2. **Duty cycles:** every per-app setting in which at least one app
//!    runs at full speed (slowing every app at once only loses time):
//!    `s^n - (s-1)^n` runs for `n` apps and `s` steps (15 for a pair in
//!    eighths).
//! 3. **Hybrid** (with `prefetchers`): the default and the `keep` best
//!    duty settings, each with every per-app prefetcher word that differs
//!    from the run's word in at most one of the platform's prefetchers.
//!
//! Candidates are ranked by unfairness factor (CoV of normalised
//! performance), ties by efficiency (geometric mean of normalised
//! performance), then by search order, so the result is deterministic.
//! Runs are independent and spread over threads.

use cachepart_machine::Duty;
use cachepart_profile::MixMetrics;
use cachepart_sim::prefetch::Kind;
use rayon::prelude::*;
use serde::Serialize;

use crate::error::Error;
use crate::method::{gmean, RunMethod};
use crate::scenario::Scenario;
use crate::sim_run::{run_scenario, SimReport};

/// How far the search goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchOptions {
    /// Also tune prefetchers (the hybrid method).
    pub prefetchers: bool,
    /// Duty settings, besides the default, whose prefetchers are tuned.
    pub keep: usize,
    /// Refuse a search of more runs than this.
    pub max_runs: usize,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            prefetchers: false,
            keep: 3,
            max_runs: 512,
        }
    }
}

/// One setting tried.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Candidate {
    /// Which step found it: `default`, `duty` or `hybrid`.
    pub stage: &'static str,
    /// Each app's duty cycle.
    pub duty: Vec<Duty>,
    /// Each app's prefetcher word (MSR 0x1A4 layout), when prefetchers
    /// are on.
    pub prefetchers: Vec<Option<u64>>,
    /// Each app's slowdown against its standalone run.
    pub slowdowns: Vec<f64>,
    /// CoV of normalised performance (lower is fairer).
    pub unfairness_factor: f64,
    /// Geometric mean of normalised performance.
    pub efficiency: f64,
}

/// What a search found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchReport {
    /// The scenario's name.
    pub scenario: String,
    /// The platform's name.
    pub platform: String,
    /// The apps' names.
    pub apps: Vec<String>,
    /// The scenario as written (every app at full speed, the run's
    /// prefetchers).
    pub default: Candidate,
    /// The fairest duty-cycle setting.
    pub best_duty: Candidate,
    /// The fairest hybrid setting, when prefetchers were tuned.
    pub best_hybrid: Option<Candidate>,
    /// Every candidate, in search order.
    pub candidates: Vec<Candidate>,
}

/// Standalone performance of one app: IPC alone, and under the restart
/// method the cycles of one run alone.
struct Alone {
    ipc: f64,
    run_cycles: Option<f64>,
}

fn slowdowns(report: &SimReport, alone: &[Alone], method: RunMethod) -> Vec<f64> {
    report
        .apps
        .iter()
        .zip(alone)
        .map(|(r, a)| match (method, a.run_cycles, &r.runs) {
            (RunMethod::Restart { .. }, Some(alone), Some(runs)) if alone > 0.0 => {
                gmean(runs).map_or(f64::INFINITY, |g| g / alone)
            }
            _ if r.totals.ipc > 0.0 => a.ipc / r.totals.ipc,
            _ => f64::INFINITY,
        })
        .collect()
}

fn candidate(
    stage: &'static str,
    duty: Vec<Duty>,
    prefetchers: Vec<Option<u64>>,
    slow: Vec<f64>,
) -> Candidate {
    let m = MixMetrics::compute(&slow, &vec![1.0; slow.len()]);
    Candidate {
        stage,
        duty,
        prefetchers,
        slowdowns: slow,
        unfairness_factor: m.unfairness_factor,
        efficiency: m.gmean_speedup,
    }
}

/// Every vector of `n` picks from `options`, in lexicographic order.
fn product<T: Clone>(options: &[T], n: usize) -> Vec<Vec<T>> {
    (0..n).fold(vec![Vec::new()], |acc, _| {
        acc.into_iter()
            .flat_map(|v| {
                options.iter().map(move |o| {
                    let mut v = v.clone();
                    v.push(o.clone());
                    v
                })
            })
            .collect()
    })
}

/// Every per-app duty vector over `levels` with at least one app at full
/// speed, in lexicographic order.
fn duty_vectors(levels: &[Duty], n: usize) -> Vec<Vec<Duty>> {
    let mut out = product(levels, n);
    out.retain(|v| v.iter().any(|d| d.is_full()));
    out
}

/// Every per-app word vector where each app's word is `base` or `base`
/// with one of `kinds` flipped.
fn word_vectors(base: u64, kinds: &[Kind], n: usize) -> Vec<Vec<Option<u64>>> {
    let options: Vec<Option<u64>> = std::iter::once(base)
        .chain(kinds.iter().map(|k| base ^ k.bit()))
        .map(Some)
        .collect();
    product(&options, n)
}

fn too_many(what: &str, runs: usize, max: usize) -> Error {
    Error::Input(format!(
        "the {what} search needs {runs} runs, more than the limit of {max} (raise it, or use fewer apps)"
    ))
}

/// Runs the search on `scenario`.
pub fn search(scenario: &Scenario, opts: &SearchOptions) -> Result<SearchReport, Error> {
    let whence = &scenario.name;
    let Some(modulation) = scenario.platform.clock_modulation else {
        return Err(Error::Input(format!(
            "scenario {whence}: platform {} has no duty-cycle modulation (no [clock-modulation] section)",
            scenario.platform.name
        )));
    };
    let run_word = scenario.platform.prefetchers.run_word;
    if opts.prefetchers && run_word.is_none() {
        return Err(Error::Input(format!(
            "scenario {whence}: prefetchers: the hybrid search tunes prefetchers, but the scenario runs without them (set prefetchers = \"platform\")"
        )));
    }
    if scenario.apps.len() < 2 {
        return Err(Error::Input(format!(
            "scenario {whence}: app: fairness needs at least two apps"
        )));
    }
    if let Some(i) = scenario
        .apps
        .iter()
        .position(|a| !a.duty.is_full() || a.prefetch_word.is_some())
    {
        return Err(Error::Input(format!(
            "scenario {whence}: app[{i}] ({}): the search sets duty cycles and prefetchers itself; remove the app's duty and prefetchers",
            scenario.apps[i].name
        )));
    }
    let n = scenario.apps.len();
    let levels = Duty::all(modulation.steps).map_err(|e| Error::Input(e.to_string()))?;
    let duties = duty_vectors(&levels, n);
    let kinds = scenario.platform.prefetchers.kinds();
    let words = run_word.map(|w| word_vectors(w, &kinds, n));
    let hybrid_runs = if opts.prefetchers {
        words.as_ref().map_or(0, Vec::len) * (opts.keep + 1)
    } else {
        0
    };
    let total = duties.len() + hybrid_runs;
    if total > opts.max_runs {
        return Err(too_many("throttling", total, opts.max_runs));
    }

    // The scenario as written, with its alone runs.
    let mut base = scenario.clone();
    base.file.alone = true;
    let first = run_scenario(&base, None)?;
    let alone: Vec<Alone> = first
        .apps
        .iter()
        .map(|a| Alone {
            ipc: a.ipc_alone.unwrap_or(0.0),
            run_cycles: a.run_cycles_alone,
        })
        .collect();
    let method = scenario.file.method;
    let full = vec![Duty::FULL; n];
    let default = candidate(
        "default",
        full.clone(),
        vec![run_word; n],
        slowdowns(&first, &alone, method),
    );
    let run = |stage: &'static str, duty: &[Duty], words: &[Option<u64>]| {
        let mut s = scenario.clone();
        s.file.alone = false;
        for (a, (&d, &w)) in s.apps.iter_mut().zip(duty.iter().zip(words)) {
            a.duty = d;
            a.prefetch_word = w.filter(|&w| Some(w) != run_word);
        }
        run_scenario(&s, None).map(|r| {
            candidate(
                stage,
                duty.to_vec(),
                words.to_vec(),
                slowdowns(&r, &alone, method),
            )
        })
    };
    let same_words = vec![run_word; n];
    let mut candidates: Vec<Candidate> = duties
        .par_iter()
        .map(|d| {
            if d == &full {
                Ok(Candidate {
                    stage: "duty",
                    ..default.clone()
                })
            } else {
                run("duty", d, &same_words)
            }
        })
        .collect::<Result<_, _>>()?;
    let best_duty = best(&candidates).clone();
    let best_hybrid = match (&words, opts.prefetchers) {
        (Some(words), true) => {
            let mut ranked: Vec<&Candidate> = candidates.iter().collect();
            ranked.sort_by(|a, b| rank(a, b));
            let mut starts: Vec<Vec<Duty>> = vec![full.clone()];
            for c in ranked {
                if starts.len() > opts.keep {
                    break;
                }
                if !starts.contains(&c.duty) {
                    starts.push(c.duty.clone());
                }
            }
            let jobs: Vec<(&Vec<Duty>, &Vec<Option<u64>>)> = starts
                .iter()
                .flat_map(|d| words.iter().map(move |w| (d, w)))
                .collect();
            let hybrid: Vec<Candidate> = jobs
                .par_iter()
                .map(|(d, w)| run("hybrid", d, w))
                .collect::<Result<_, _>>()?;
            let b = best(&hybrid).clone();
            candidates.extend(hybrid);
            Some(b)
        }
        _ => None,
    };
    Ok(SearchReport {
        scenario: scenario.name.clone(),
        platform: scenario.platform.name.clone(),
        apps: scenario.apps.iter().map(|a| a.name.clone()).collect(),
        default,
        best_duty,
        best_hybrid,
        candidates,
    })
}

fn rank(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    a.unfairness_factor
        .total_cmp(&b.unfairness_factor)
        .then(b.efficiency.total_cmp(&a.efficiency))
}

/// The fairest candidate (the first of equals).
fn best(c: &[Candidate]) -> &Candidate {
    c.iter()
        .reduce(|x, y| if rank(y, x).is_lt() { y } else { x })
        .expect("a search has candidates")
}

fn settings(c: &Candidate) -> String {
    c.duty
        .iter()
        .zip(&c.prefetchers)
        .map(|(d, w)| match w {
            Some(w) => format!("{d} pf={w:#x}"),
            None => d.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The report as a table: the default, the best duty-cycle and hybrid
/// settings, then every candidate.
pub fn to_table(r: &SearchReport) -> String {
    let mut out = format!(
        "scenario {} on {}: apps {}\n",
        r.scenario,
        r.platform,
        r.apps.join(", ")
    );
    let line = |label: &str, c: &Candidate| {
        format!(
            "{label:<12} unfairness factor {:.4}  efficiency {:.4}  [{}]  slowdowns {}\n",
            c.unfairness_factor,
            c.efficiency,
            settings(c),
            c.slowdowns
                .iter()
                .map(|s| format!("{s:.3}"))
                .collect::<Vec<_>>()
                .join(" ")
        )
    };
    out.push_str(&line("default", &r.default));
    out.push_str(&line("duty cycle", &r.best_duty));
    if let Some(h) = &r.best_hybrid {
        out.push_str(&line("hybrid", h));
    }
    out.push_str(&format!("\n{} candidates:\n", r.candidates.len()));
    for c in &r.candidates {
        out.push_str(&line(c.stage, c));
    }
    out
}

/// The candidates as CSV, one row per candidate and app.
pub fn to_csv(r: &SearchReport) -> String {
    let mut out = String::from(
        "scenario,candidate,stage,app,duty,prefetchers,slowdown,unfairness_factor,efficiency\n",
    );
    for (i, c) in r.candidates.iter().enumerate() {
        for (a, name) in r.apps.iter().enumerate() {
            out.push_str(&format!(
                "{},{i},{},{name},{},{},{},{},{}\n",
                r.scenario,
                c.stage,
                c.duty[a],
                c.prefetchers[a].map_or(String::new(), |w| format!("{w:#x}")),
                c.slowdowns[a],
                c.unfairness_factor,
                c.efficiency
            ));
        }
    }
    out
}

/// The report as JSON.
pub fn to_json(r: &SearchReport) -> String {
    serde_json::to_string_pretty(r).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_spaces() {
        let levels = Duty::all(8).unwrap();
        let d = duty_vectors(&levels, 2);
        assert_eq!(d.len(), 15);
        assert!(d.iter().all(|v| v.iter().any(|x| x.is_full())));
        assert_eq!(duty_vectors(&levels, 3).len(), 512 - 343);
        let w = word_vectors(0x4, &[Kind::L2Streamer, Kind::L1NextLine], 2);
        assert_eq!(w.len(), 9);
        assert!(w.contains(&vec![Some(0x5), Some(0x0)]));
    }
}
