//! The oracle: every clustering and every way split, each plan scored by
//! [`evaluate`] itself. Exponential; for tests on small mixes.

use super::objective::{Cost, Objective};
use super::partition::compositions;
use super::pbbcache::for_each_clustering;
use super::Structure;
use crate::error::ProfileError;
use crate::metrics::round3;
use crate::mix::Mix;
use crate::model::{evaluate, ModelConfig};
use cachepart_machine::Plan;

/// The cost `evaluate` gives `plan`.
pub(crate) fn plan_cost(
    mix: &Mix,
    plan: &Plan,
    cfg: &ModelConfig,
    o: Objective,
) -> Result<Cost, ProfileError> {
    let m = evaluate(mix, plan, cfg)?.metrics;
    Ok(match o {
        Objective::Stp => Cost(-round3(m.stp), 0.0),
        Objective::Unfairness => Cost(round3(m.unfairness), -round3(m.stp)),
        Objective::Antt => Cost(round3(m.antt), -round3(m.stp)),
    })
}

/// Apps of a cluster bit set, ascending.
pub(crate) fn apps_of(mask: u64) -> Vec<usize> {
    (0..64).filter(|a| mask >> a & 1 == 1).collect()
}

/// An optimal plan by exhaustive search (the first optimal one met).
pub fn brute_force(
    mix: &Mix,
    cfg: &ModelConfig,
    structure: Structure,
    objective: Objective,
) -> Result<Plan, ProfileError> {
    super::check(mix, structure)?;
    let n = mix.len();
    let ways = mix.ways;
    let mut best: Option<(Cost, Plan)> = None;
    let mut err = None;
    let mut try_plan = |plan: Plan| match plan_cost(mix, &plan, cfg, objective) {
        Ok(c) => {
            if best.as_ref().is_none_or(|(b, _)| c.better(*b)) {
                best = Some((c, plan));
            }
            true
        }
        Err(e) => {
            err = Some(e);
            false
        }
    };
    match structure {
        Structure::Partitioning => {
            compositions(ways, n, &mut Vec::new(), &mut |c| {
                let w: Vec<u32> = c.iter().map(|&w| w as u32).collect();
                try_plan(Plan::from_way_counts(&w))
            });
        }
        Structure::Clustering => {
            for_each_clustering(n, ways, &mut |clusters| {
                compositions(ways, clusters.len(), &mut Vec::new(), &mut |c| {
                    try_plan(Plan::from_clusters(
                        clusters
                            .iter()
                            .zip(c)
                            .map(|(&m, &w)| (apps_of(m), w as u32)),
                    ))
                })
            });
        }
    }
    if let Some(e) = err {
        return Err(e);
    }
    best.map(|b| b.1)
        .ok_or_else(|| ProfileError::Invalid("no feasible plan".into()))
}
