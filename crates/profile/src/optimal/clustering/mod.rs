//! Clustering (`optc-stp`, `optc-unf`, `optc-antt`): which apps share a
//! cluster, and the ways of each cluster.
//!
//! Two searches give the same optimum; they differ in how ties are broken.
//!
//! * Up to [`EMULATE_MAX_APPS`] apps, PBBCache's serial run is replayed
//!   ([`emulate`]): clusterings in its order (for `stp` with its batches of
//!   two deferred clusterings of three or more clusters, which it always
//!   uses for `optc-stp`), each solved by its best-first search from its
//!   `ucp-slowdown` incumbent, the global best replaced only on strictly
//!   better costs. Clusterings that cannot beat the current best (checked
//!   exactly, with cheap bounds first) are skipped, which changes nothing.
//!   If PBBCache's bound (which assumes more ways never hurt) would have
//!   lost the optimum, the first optimal clustering is returned instead.
//! * Above, a parallel branch and bound over PBBCache's enumeration tree
//!   ([`fast`]): the incumbent comes from a dynamic programme over subsets
//!   when the objective is additive over clusters (STP or ANTT, bandwidth
//!   not saturating); node bounds relax each partial clustering per
//!   cluster; it returns the first optimal clustering in PBBCache's
//!   enumeration order (ignoring its batching), whatever the thread count,
//!   with the way counts PBBCache's best-first search picks for it. For
//!   `stp` without a saturating bandwidth model the same clustering is
//!   found by the exact depth-first search of `completion.rs`, which knows
//!   the best value of every subtree and so walks almost straight to it.
//!
//! Bounds under a coupling bandwidth model (saturating `simple`, or
//! `stalls`) use cache-only slowdowns and so assume the bandwidth model
//! never speeds an app up (factors >= 1); no bound is used for unfairness
//! then, and none at all where `simple` may give negative factors
//! ([`Tables::bounds_hold`]).
//!
//! The files: [`replay`] (the serial replay), [`search`] (the parallel
//! branch and bound), [`incumbent`] (its starting plan: the subset DP and
//! local search), [`node_bounds`] (its per-node bounds), [`bounds`] (the
//! bounds of one clustering and one way split) and [`split`] (the best way
//! split of one clustering).

mod bounds;
mod incumbent;
mod node_bounds;
mod replay;
mod search;
mod split;

pub(crate) use incumbent::Dp;
pub(crate) use replay::emulate;
pub(crate) use search::fast;
pub(crate) use split::best_split;

use super::objective::Cost;
use super::objective::Objective;
use super::progress::Budget;
use super::tables::Tables;

/// Largest mix solved by replaying PBBCache's own search.
pub const EMULATE_MAX_APPS: usize = 8;

/// Slack for bounds computed with another summation order than the exact cost.
const EPS: f64 = 1e-9;

/// A clustering with its way counts.
#[derive(Clone, Debug)]
pub(crate) struct Found {
    /// Clusters (bit `i` = app `i`), in PBBCache's list order.
    pub clusters: Vec<u64>,
    /// Ways per cluster.
    pub ways: Vec<usize>,
    /// Exact cost.
    pub cost: Cost,
}

/// Solves; returns the plan and whether it is proven optimal.
pub(crate) fn solve(t: &Tables, o: Objective, budget: &Budget) -> (Found, bool) {
    if t.n <= EMULATE_MAX_APPS {
        emulate(t, o, budget)
    } else {
        fast(t, o, budget)
    }
}
