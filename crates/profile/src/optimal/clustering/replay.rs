//! The replay of PBBCache's serial `optc-*` run (see the parent module's
//! docs), and its per-clustering solve, which the parallel search also uses
//! to pick PBBCache's way counts.

use super::split::best_split;
use super::Found;
use crate::optimal::heuristic::ucp_clusters;
use crate::optimal::objective::{Cost, Objective};
use crate::optimal::pbbcache::{best_first, for_each_clustering, Scorer};
use crate::optimal::progress::Budget;
use crate::optimal::tables::{Scratch, Tables};

/// PBBCache's per-clustering solve from global best `bcost` (`None` for the
/// first clustering): `ucp-slowdown` incumbent if strictly better, then its
/// best-first search. Returns the cost and split it reports, if any.
pub(super) fn pbbcache_solve(
    t: &Tables,
    clusters: &[u64],
    o: Objective,
    bcost: Option<Cost>,
    nodes: &mut u64,
) -> (Cost, Option<Vec<usize>>) {
    let mut s = Scorer::new(t, clusters, o);
    if clusters.len() == 1 {
        let c = s.leaf(&[t.ways]);
        *nodes += s.nodes;
        return (c, Some(vec![t.ways]));
    }
    let usol = ucp_clusters(t, clusters);
    let ucost = s.leaf(&usol);
    let (init, isol) = match bcost {
        Some(b) if !ucost.better(b) => (b, None),
        _ => (ucost, Some(usol)),
    };
    let (c, sol) = best_first(&mut s, init);
    *nodes += s.nodes;
    match sol {
        Some(sol) => (c, Some(sol)),
        None => (init, isol),
    }
}

/// Compositions of `ways` into `k` parts (PBBCache's `nsols`), saturating.
fn n_compositions(ways: usize, k: usize) -> u64 {
    // C(ways - 1, k - 1)
    let (n, r) = ((ways - 1) as u64, (k - 1) as u64);
    let r = r.min(n - r);
    let mut c = 1u64;
    for i in 0..r {
        c = c.saturating_mul(n - i) / (i + 1);
    }
    c
}

/// Replays PBBCache's serial `optc-*` run (see the module docs).
pub(crate) fn emulate(t: &Tables, o: Objective, budget: &Budget) -> (Found, bool) {
    // PBBCache always defers clusterings with >= 20 way splits for optc-stp
    // and reduces them in batches of (engines = 2).
    const BATCH: usize = 2;
    const DEFER_FROM: u64 = 20;
    let batched = |k: usize| o == Objective::Stp && n_compositions(t.ways, k) >= DEFER_FROM;
    let mut total = 0u64;
    for_each_clustering(t.n, t.ways, &mut |_| {
        total += 1;
        true
    });
    budget.add_total(total);

    struct State {
        best: Option<Found>,
        /// Best true optimum seen (first in processing order).
        truth: Option<Found>,
        nodes: u64,
        sc: Scratch,
    }
    let mut st = State {
        best: None,
        truth: None,
        nodes: 0,
        sc: Scratch::default(),
    };
    // One clustering solved against `stale` and reduced against the current best.
    let process = |st: &mut State, clusters: &[u64], stale: Option<Cost>| {
        let current = st.best.as_ref().map(|b| b.cost);
        let limit = match (current, &st.truth) {
            (Some(c), Some(tr)) if tr.cost.better(c) => tr.cost,
            (Some(c), _) => c,
            (None, _) => Cost::WORST,
        };
        let mut nodes = 0;
        let opt = best_split(t, clusters, o, limit, &mut st.sc, &mut nodes);
        st.nodes += nodes;
        if let Some((oc, osol)) = &opt {
            if st.truth.as_ref().is_none_or(|tr| oc.better(tr.cost)) {
                st.truth = Some(Found {
                    clusters: clusters.to_vec(),
                    ways: osol.clone(),
                    cost: *oc,
                });
            }
        }
        let can_improve = match (current, &opt) {
            (None, _) => true,
            (Some(c), Some((oc, _))) => oc.better(c),
            _ => false,
        };
        if !can_improve {
            return;
        }
        let (c, sol) = pbbcache_solve(t, clusters, o, stale, &mut st.nodes);
        if let Some(sol) = sol {
            if current.is_none_or(|cur| c.better(cur)) {
                st.best = Some(Found {
                    clusters: clusters.to_vec(),
                    ways: sol,
                    cost: c,
                });
            }
        }
    };
    let mut tasks: Vec<Vec<u64>> = Vec::new();
    let mut seen = 0u64;
    let mut stopped = false;
    for_each_clustering(t.n, t.ways, &mut |clusters| {
        seen += 1;
        if seen & 63 == 0 {
            budget.add_done(64);
            if budget.expired() {
                stopped = true;
                return false;
            }
        }
        if batched(clusters.len()) {
            tasks.push(clusters.to_vec());
            if tasks.len() >= BATCH {
                let stale = st.best.as_ref().map(|b| b.cost);
                for c in std::mem::take(&mut tasks) {
                    process(&mut st, &c, stale);
                }
            }
        } else {
            let stale = st.best.as_ref().map(|b| b.cost);
            process(&mut st, clusters, stale);
        }
        true
    });
    if !stopped {
        let stale = st.best.as_ref().map(|b| b.cost);
        for c in std::mem::take(&mut tasks) {
            process(&mut st, &c, stale);
        }
    }
    budget.add_nodes(st.nodes);
    let best = st.best.expect("the first clustering always sets the best");
    match st.truth {
        Some(tr) if tr.cost.better(best.cost) => (tr, !stopped),
        _ => (best, !stopped),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composition_counts() {
        assert_eq!(n_compositions(11, 1), 1);
        assert_eq!(n_compositions(11, 2), 10);
        assert_eq!(n_compositions(11, 3), 45);
        assert_eq!(n_compositions(11, 6), 252);
        assert_eq!(n_compositions(11, 11), 1);
    }
}
