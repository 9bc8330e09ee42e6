//! The exact optimum of the table-driven model: the best strict
//! partitioning (`opt-stp`, `opt-unf`, `opt-antt`) or the best clustering
//! with way counts (`optc-stp`, `optc-unf`, `optc-antt`) of a mix.
//!
//! Objectives are compared as PBBCache compares them, rounded to three
//! decimals ([`Objective`]); rounding makes ties common, and among tied
//! plans the solvers return the one PBBCache's serial search returns:
//!
//! * `opt-*`: the `ucp-slowdown` plan if nothing is strictly better, else
//!   the first strictly better plan of PBBCache's depth-first search
//!   ([`TieRule::Serial`]) or of its best-first search (`opt-*-bf`,
//!   [`TieRule::BestFirst`]).
//! * `optc-*`, up to [`EMULATE_MAX_APPS`] apps: PBBCache's serial run
//!   replayed (its clustering order, its batches for `optc-stp`, its
//!   per-clustering best-first search from `ucp-slowdown`).
//! * `optc-*` above that: the first optimal clustering in PBBCache's
//!   enumeration order, with the way counts its best-first search picks
//!   (for `optc-stp` without a saturating bandwidth model, found by an
//!   exact search that knows the best value below every partial
//!   clustering).
//! * With an incumbent ([`SolveOptions::incumbent`], LFOC's plan for
//!   `optc-*-bf`): the incumbent itself, unchanged, when nothing is strictly
//!   better.
//!
//! Whenever PBBCache's bound (which assumes more ways never hurt) would
//! have missed the optimum, the optimum is returned anyway: the
//! lexicographically smallest optimal way vector for `opt-*`, the largest
//! for `opt-*-bf`. Results do not depend on the number of threads.
//!
//! ```no_run
//! use cachepart_profile::optimal::{solve, Objective, SolveOptions, Structure};
//! # fn f(mix: &cachepart_profile::Mix) -> Result<(), cachepart_profile::ProfileError> {
//! let cfg = cachepart_profile::ModelConfig::default();
//! let sol = solve(mix, &cfg, Structure::Clustering, Objective::Unfairness, &SolveOptions::default())?;
//! println!("{} ({} nodes, {:.3} s)", sol.plan, sol.explored_nodes, sol.seconds);
//! # Ok(()) }
//! ```

mod bruteforce;
mod clustering;
mod completion;
mod compositions;
mod heuristic;
mod objective;
mod partition;
mod pbbcache;
mod progress;
mod subset_dp;
mod tables;

pub use bruteforce::brute_force;
pub use clustering::EMULATE_MAX_APPS;
pub use compositions::count as composition_count;
pub use objective::Objective;
pub use progress::Progress;
pub use tables::MAX_SUBSET_APPS as MAX_CLUSTERING_APPS;

use crate::error::ProfileError;
use crate::mix::Mix;
use crate::model::{evaluate, ModelConfig};
use bruteforce::{apps_of, plan_cost};
use cachepart_machine::Plan;
use progress::Budget;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tables::Tables;

/// What the plan may look like; its names are the solver prefixes (`opt`,
/// `optc`).
#[cachepart_units::kind]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Structure {
    /// One app per cluster (`opt-*`).
    #[strum(serialize = "opt")]
    Partitioning,
    /// Apps may share clusters (`optc-*`).
    #[strum(serialize = "optc")]
    Clustering,
}

impl Structure {
    /// The solver prefix: `opt` or `optc`.
    pub fn prefix(self) -> &'static str {
        self.into()
    }
}

/// Which of PBBCache's searches decides between tied plans.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TieRule {
    /// The serial solvers (`opt-*`, `optc-*`).
    #[default]
    Serial,
    /// The best-first solvers (`opt-*-bf`, `optc-*-bf`). For clustering
    /// this differs from [`TieRule::Serial`] only through the incumbent
    /// ([`SolveOptions::incumbent`]).
    BestFirst,
}

impl TieRule {
    /// The solver-name suffix: empty or `-bf`.
    pub fn suffix(self) -> &'static str {
        match self {
            TieRule::Serial => "",
            TieRule::BestFirst => "-bf",
        }
    }
}

/// How to run a solve.
#[derive(Clone, Copy, Default)]
pub struct SolveOptions<'a> {
    /// Stop after this long and return the best plan found
    /// ([`Solution::proven_optimal`] is then false).
    pub time_limit: Option<Duration>,
    /// Worker threads (`None`: rayon's global pool). The result does not
    /// depend on it.
    pub threads: Option<usize>,
    /// Called now and then (at most every 100 ms) with the work done.
    pub progress: Option<&'a (dyn Fn(Progress) + Sync)>,
    /// Which search's choice among tied plans to reproduce.
    pub tie_rule: TieRule,
    /// A plan to return unchanged when no plan is strictly better (PBBCache
    /// starts `optc-*-bf` from LFOC's plan). It must be a valid plan of the
    /// mix with disjoint masks, one app per cluster for
    /// [`Structure::Partitioning`].
    pub incumbent: Option<&'a Plan>,
}

/// The answer of a solve.
#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    /// The plan: one cluster per cluster, contiguous masks from way 0.
    pub plan: Plan,
    /// False when the time limit stopped the search first.
    pub proven_optimal: bool,
    /// Nodes explored (tree nodes, clusterings and way splits evaluated).
    pub explored_nodes: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Rejects mixes the solvers cannot handle.
pub(crate) fn check(mix: &Mix, structure: Structure) -> Result<(), ProfileError> {
    let n = mix.len();
    if n == 0 {
        return Err(ProfileError::Invalid("the mix has no app".into()));
    }
    if mix.ways == 0 || mix.ways > 64 {
        return Err(ProfileError::Invalid(format!(
            "{} ways: the solvers handle 1 to 64",
            mix.ways
        )));
    }
    match structure {
        Structure::Partitioning if n > mix.ways => Err(ProfileError::Invalid(format!(
            "strict partitioning of {n} apps needs at least {n} ways, the cache has {}",
            mix.ways
        ))),
        Structure::Clustering if n > tables::MAX_SUBSET_APPS => {
            Err(ProfileError::Invalid(format!(
                "optimal clustering supports at most {} apps, the mix has {n}",
                tables::MAX_SUBSET_APPS
            )))
        }
        _ => Ok(()),
    }
}

/// Finds the plan that optimises `objective` (see the module docs).
pub fn solve(
    mix: &Mix,
    cfg: &ModelConfig,
    structure: Structure,
    objective: Objective,
    opts: &SolveOptions,
) -> Result<Solution, ProfileError> {
    check(mix, structure)?;
    // Surfaces model errors (e.g. missing stall columns) before searching.
    evaluate(mix, &Plan::shared_all(mix.len(), mix.ways as u32), cfg)?;
    let incumbent = match opts.incumbent {
        Some(plan) => Some((plan, check_incumbent(mix, cfg, structure, objective, plan)?)),
        None => None,
    };
    let run = || -> Result<Solution, ProfileError> {
        let budget = Budget::new(opts.time_limit, opts.progress);
        let (plan, proven) = match structure {
            Structure::Partitioning => {
                let t = Tables::new(mix, cfg, false, &budget).expect("no subset tables");
                let (ways, proven) = partition::solve(&t, objective, opts.tie_rule, &budget);
                let w: Vec<u32> = ways.iter().map(|&w| w as u32).collect();
                (Plan::from_way_counts(&w), proven)
            }
            Structure::Clustering => match Tables::new(mix, cfg, true, &budget) {
                Some(t) => {
                    let (found, proven) = clustering::solve(&t, objective, &budget);
                    let plan = Plan::from_clusters(
                        found
                            .clusters
                            .iter()
                            .zip(&found.ways)
                            .map(|(&m, &w)| (apps_of(m), w as u32)),
                    );
                    (plan, proven)
                }
                // out of time before the search could start
                None => (Plan::shared_all(mix.len(), mix.ways as u32), false),
            },
        };
        let plan = match incumbent {
            Some((inc, inc_cost)) if !plan_cost(mix, &plan, cfg, objective)?.better(inc_cost) => {
                inc.clone()
            }
            _ => plan,
        };
        budget.report(true);
        Ok(Solution {
            plan,
            proven_optimal: proven && !budget.was_expired(),
            explored_nodes: budget.nodes.load(Ordering::Relaxed),
            seconds: budget.seconds(),
        })
    };
    match opts.threads {
        Some(k) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(k.max(1))
                .build()
                .map_err(|e| ProfileError::Invalid(format!("cannot start {k} threads: {e}")))?;
            pool.install(run)
        }
        None => run(),
    }
}

/// Checks that `plan` may be returned for `structure` and gives its cost.
fn check_incumbent(
    mix: &Mix,
    cfg: &ModelConfig,
    structure: Structure,
    objective: Objective,
    plan: &Plan,
) -> Result<objective::Cost, ProfileError> {
    let cost = plan_cost(mix, plan, cfg, objective)
        .map_err(|e| ProfileError::Invalid(format!("the incumbent plan is not valid: {e}")))?;
    if !plan.is_disjoint() {
        return Err(ProfileError::Invalid(
            "the incumbent plan has overlapping masks".into(),
        ));
    }
    if structure == Structure::Partitioning && plan.clusters.iter().any(|c| c.apps.len() != 1) {
        return Err(ProfileError::Invalid(
            "the incumbent plan is not a strict partitioning (one app per cluster)".into(),
        ));
    }
    Ok(cost)
}
