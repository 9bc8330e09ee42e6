//! The invariants of a static policy's plan, checked by the policy crate's
//! invariant suite over every static policy: the plan is valid for the
//! platform, its clusters are disjoint where the policy is strict, all the
//! ways are used where the policy promises it, and the same input gives the
//! same plan.

use cachepart_machine::{Plan, Platform};

/// What a policy promises beyond a valid plan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Promises {
    /// Clusters never share a way.
    pub disjoint: bool,
    /// The clusters' masks add up to every way of the cache.
    pub all_ways: bool,
    /// At most this many clusters.
    pub max_clusters: Option<usize>,
}

/// Checks `plan` for `apps` apps on `platform` against `promises`; the
/// first broken invariant, in words.
pub fn check_plan(
    plan: &Plan,
    apps: usize,
    platform: &Platform,
    promises: Promises,
) -> Result<(), String> {
    plan.validate(apps, &platform.mask_rules)
        .map_err(|e| format!("invalid plan: {e}"))?;
    if promises.disjoint && !plan.is_disjoint() {
        return Err(format!("clusters overlap: {plan:?}"));
    }
    if promises.all_ways {
        let total: u32 = plan.clusters.iter().map(|c| c.mask.0.count_ones()).sum();
        if total != platform.ways {
            return Err(format!("{total} ways used of {}: {plan:?}", platform.ways));
        }
    }
    if let Some(max) = promises.max_clusters {
        if plan.clusters.len() > max {
            return Err(format!("{} clusters, at most {max}", plan.clusters.len()));
        }
    }
    Ok(())
}

/// Checks that two decisions on the same input gave the same plan.
pub fn check_deterministic(first: &Plan, second: &Plan) -> Result<(), String> {
    if first == second {
        Ok(())
    } else {
        Err(format!("same input, two plans: {first:?} then {second:?}"))
    }
}
