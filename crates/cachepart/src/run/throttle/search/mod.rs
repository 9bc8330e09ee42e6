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
//! 4. **Scheduling quantum** (with `quantum`): the paper's software
//!    comparison, one app at a time with an idle process of each length
//!    ([`crate::run::throttle::quantum`]).
//! 5. **Page coloring** (with `coloring`): the ideal static partition,
//!    every split of the platform's page colors
//!    ([`crate::run::throttle::coloring`]).
//!
//! Candidates are ranked by unfairness factor (CoV of normalised
//! performance), ties by efficiency (geometric mean of normalised
//! performance), then by search order, so the result is deterministic.
//! Runs are independent and spread over threads.
//!
//! `check.rs` checks the options against the scenario before anything
//! runs, `space.rs` builds the duty-cycle and prefetcher-word vectors and
//! [`crate::output::throttle_search`] writes the report as a table, CSV or
//! JSON.

use cachepart_machine::Duty;
use cachepart_profile::MixMetrics;
use cachepart_sim::memory::{ColorLayout, FRAME_BYTES};
use cachepart_sim::system::IdleQuantum;
use cachepart_units::IdSet;
use rayon::prelude::*;
use serde::Serialize;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::Error;
use crate::registry::method::{gmean, RunMethod};
use crate::run::alone::SweepProgress;
use crate::run::sim::{run_scenario, SimReport};
use crate::run::throttle::coloring::{color_splits, split_count};
use crate::run::throttle::quantum::{quantum_vectors, DEFAULT_RUN_CYCLES, IDLE_PERCENT};
use crate::spec::scenario::Scenario;

mod check;
mod space;

use check::check;
use space::{duty_vectors, word_vectors};

/// How far the search goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchOptions {
    /// Also tune prefetchers (the hybrid method).
    pub prefetchers: bool,
    /// Duty settings, besides the default, whose prefetchers are tuned.
    pub keep: usize,
    /// Refuse a search of more runs than this.
    pub max_runs: usize,
    /// Also try scheduling-quantum adjustment with an idle process.
    pub quantum: bool,
    /// The run length of a turn under quantum adjustment, cycles.
    pub quantum_run_cycles: u64,
    /// Also try every static page-coloring split (the ideal partition).
    pub coloring: bool,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            prefetchers: false,
            keep: 3,
            max_runs: 512,
            quantum: false,
            quantum_run_cycles: DEFAULT_RUN_CYCLES,
            coloring: false,
        }
    }
}

/// One setting tried.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Candidate {
    /// Which step found it: `default`, `duty`, `hybrid`, `quantum` or
    /// `coloring`.
    pub stage: &'static str,
    /// Each app's duty cycle.
    pub duty: Vec<Duty>,
    /// Each app's prefetcher word (MSR 0x1A4 layout), when prefetchers
    /// are on.
    pub prefetchers: Vec<Option<u64>>,
    /// Each app's idle process (quantum adjustment), if any.
    pub quantum: Vec<Option<IdleQuantum>>,
    /// Each app's page colors (range syntax), if restricted.
    pub colors: Vec<Option<String>>,
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
    /// The fairest quantum setting, when quantum adjustment was tried.
    pub best_quantum: Option<Candidate>,
    /// The fairest static color split, when page coloring was tried.
    pub best_coloring: Option<Candidate>,
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

/// One setting of every app: what a candidate run changes in the
/// scenario.
#[derive(Clone, Debug, PartialEq)]
struct Setting {
    duty: Vec<Duty>,
    words: Vec<Option<u64>>,
    quantum: Vec<Option<IdleQuantum>>,
    colors: Vec<Option<IdSet>>,
}

fn candidate(stage: &'static str, set: &Setting, slow: Vec<f64>) -> Candidate {
    let m = MixMetrics::compute(&slow, &vec![1.0; slow.len()]);
    Candidate {
        stage,
        duty: set.duty.clone(),
        prefetchers: set.words.clone(),
        quantum: set.quantum.clone(),
        colors: set
            .colors
            .iter()
            .map(|c| c.as_ref().map(IdSet::to_string))
            .collect(),
        slowdowns: slow,
        unfairness_factor: m.unfairness_factor,
        efficiency: m.gmean_speedup,
    }
}

fn too_many(what: &str, runs: usize, max: usize) -> Error {
    Error::Usage(format!(
        "the {what} search needs {runs} runs, more than the limit of {max} (raise it, or use fewer apps)"
    ))
}

/// The platform's page colors (4 KiB frames over its LLC).
fn platform_colors(scenario: &Scenario) -> Result<u32, Error> {
    let geometry = scenario
        .platform
        .llc
        .geometry()
        .map_err(|e| Error::config("", "platform.llc", e))?;
    let layout = ColorLayout::new(&geometry, FRAME_BYTES)
        .map_err(|e| Error::config("", "platform.llc", e))?;
    Ok(u32::try_from(layout.colors()).unwrap_or(u32::MAX))
}

/// Runs the search on `scenario`.
pub fn search(scenario: &Scenario, opts: &SearchOptions) -> Result<SearchReport, Error> {
    search_with(scenario, opts, None)
}

/// [`search`], telling `progress` (runs done, runs in all) after each
/// simulation; the count in all is known before the first run (the
/// hybrid stage may run fewer when duty settings tie).
pub fn search_with(
    scenario: &Scenario,
    opts: &SearchOptions,
    progress: Option<SweepProgress<'_>>,
) -> Result<SearchReport, Error> {
    let (steps, colors) = check(scenario, opts)?;
    let run_word = scenario.platform.prefetchers.run_word;
    let n = scenario.apps.len();
    let levels = Duty::all(steps).map_err(|e| Error::config("", "", e))?;
    let duties = duty_vectors(&levels, n);
    let kinds = scenario.platform.prefetchers.kinds();
    let words = run_word.map(|w| word_vectors(w, &kinds, n));
    let hybrid_runs = if opts.prefetchers {
        words.as_ref().map_or(0, Vec::len) * (opts.keep + 1)
    } else {
        0
    };
    let quantum_runs = if opts.quantum {
        n * IDLE_PERCENT.len()
    } else {
        0
    };
    let coloring_runs = colors.map_or(0, |c| split_count(c, n));
    let total = duties
        .len()
        .saturating_add(hybrid_runs)
        .saturating_add(quantum_runs)
        .saturating_add(coloring_runs);
    if total > opts.max_runs {
        return Err(too_many("throttling", total, opts.max_runs));
    }

    // The scenario as written (with its alone runs), then `total` more.
    let all = total + 1;
    let done = AtomicUsize::new(0);
    let tick = || {
        let d = done.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(p) = progress {
            p(d.min(all), all);
        }
    };
    let mut base = scenario.clone();
    base.file.alone = true;
    let first = run_scenario(&base, None)?;
    tick();
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
    let plain = Setting {
        duty: full.clone(),
        words: vec![run_word; n],
        quantum: vec![None; n],
        colors: vec![None; n],
    };
    let default = candidate("default", &plain, slowdowns(&first, &alone, method));
    let run = |stage: &'static str, set: &Setting| {
        let mut s = scenario.clone();
        s.file.alone = false;
        for (i, a) in s.apps.iter_mut().enumerate() {
            a.duty = set.duty[i];
            a.prefetch_word = set.words[i].filter(|&w| Some(w) != run_word);
            a.idle_quantum = set.quantum[i];
        }
        s.colors = set.colors.clone();
        let r = run_scenario(&s, None);
        tick();
        r.map(|r| candidate(stage, set, slowdowns(&r, &alone, method)))
    };
    let mut candidates: Vec<Candidate> = duties
        .par_iter()
        .map(|d| {
            if d == &full {
                tick();
                Ok(Candidate {
                    stage: "duty",
                    ..default.clone()
                })
            } else {
                run(
                    "duty",
                    &Setting {
                        duty: d.clone(),
                        ..plain.clone()
                    },
                )
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
            let jobs: Vec<Setting> = starts
                .iter()
                .flat_map(|d| {
                    words.iter().map(|w| Setting {
                        duty: d.clone(),
                        words: w.clone(),
                        ..plain.clone()
                    })
                })
                .collect();
            Some(stage(&mut candidates, &jobs, |s| run("hybrid", s))?)
        }
        _ => None,
    };
    let best_quantum = if opts.quantum {
        let jobs: Vec<Setting> = quantum_vectors(n, opts.quantum_run_cycles)
            .into_iter()
            .map(|q| Setting {
                quantum: q,
                ..plain.clone()
            })
            .collect();
        Some(stage(&mut candidates, &jobs, |s| run("quantum", s))?)
    } else {
        None
    };
    let best_coloring = match colors {
        Some(c) => {
            let jobs: Vec<Setting> = color_splits(c, n)
                .into_iter()
                .map(|sets| Setting {
                    colors: sets.into_iter().map(Some).collect(),
                    ..plain.clone()
                })
                .collect();
            Some(stage(&mut candidates, &jobs, |s| run("coloring", s))?)
        }
        None => None,
    };
    Ok(SearchReport {
        scenario: scenario.name.clone(),
        platform: scenario.platform.name.clone(),
        apps: scenario.apps.iter().map(|a| a.name.clone()).collect(),
        default,
        best_duty,
        best_hybrid,
        best_quantum,
        best_coloring,
        candidates,
    })
}

/// Runs `jobs` in parallel, appends them to `candidates` in job order and
/// returns the fairest of them.
fn stage(
    candidates: &mut Vec<Candidate>,
    jobs: &[Setting],
    run: impl Fn(&Setting) -> Result<Candidate, Error> + Sync + Send,
) -> Result<Candidate, Error> {
    let found: Vec<Candidate> = jobs.par_iter().map(run).collect::<Result<_, _>>()?;
    if found.is_empty() {
        return Err(Error::config(
            "",
            "",
            "the search stage has no setting to try (too few page colors for the apps?)",
        ));
    }
    let b = best(&found).clone();
    candidates.extend(found);
    Ok(b)
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
