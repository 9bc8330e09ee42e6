//! A candidate of the search: one setting of every app, the slowdowns its
//! run gives against the apps' standalone runs, and the ranking that picks
//! the fairest (unfairness factor, then efficiency, then search order).

use cachepart_machine::Duty;
use cachepart_profile::MixMetrics;
use cachepart_sim::system::IdleQuantum;
use cachepart_units::IdSet;
use serde::Serialize;

use crate::registry::method::{gmean, RunMethod};
use crate::run::sim::SimReport;

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

/// Standalone performance of one app: IPC alone, and under the restart
/// method the cycles of one run alone.
pub(super) struct Alone {
    pub(super) ipc: f64,
    pub(super) run_cycles: Option<f64>,
}

/// Each app's slowdown in `report` against its standalone run.
pub(super) fn slowdowns(report: &SimReport, alone: &[Alone], method: RunMethod) -> Vec<f64> {
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
pub(super) struct Setting {
    pub(super) duty: Vec<Duty>,
    pub(super) words: Vec<Option<u64>>,
    pub(super) quantum: Vec<Option<IdleQuantum>>,
    pub(super) colors: Vec<Option<IdSet>>,
}

/// The candidate of `set`, found by `stage`, from its slowdowns.
pub(super) fn candidate(stage: &'static str, set: &Setting, slow: Vec<f64>) -> Candidate {
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

/// Fairer first: lower unfairness factor, then higher efficiency.
pub(super) fn rank(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    a.unfairness_factor
        .total_cmp(&b.unfairness_factor)
        .then(b.efficiency.total_cmp(&a.efficiency))
}

/// The fairest candidate (the first of equals).
pub(super) fn best(c: &[Candidate]) -> &Candidate {
    c.iter()
        .reduce(|x, y| if rank(y, x).is_lt() { y } else { x })
        .expect("a search has candidates")
}
