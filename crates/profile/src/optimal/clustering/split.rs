//! The best way split of one clustering: its compositions in
//! lexicographic order, pruned by the bounds of [`super::bounds`].

use super::bounds::{clustering_bound, split_bound};
use crate::optimal::objective::{Cost, Objective};
use crate::optimal::partition::compositions;
use crate::optimal::tables::{Part, Scratch, Tables};

/// The best way split of `clusters` that is not strictly worse than
/// `limit` (first in lexicographic order among the best), if any.
pub(crate) fn best_split(
    t: &Tables,
    clusters: &[u64],
    o: Objective,
    limit: Cost,
    sc: &mut Scratch,
    nodes: &mut u64,
) -> Option<(Cost, Vec<usize>)> {
    if let Some(b) = clustering_bound(t, clusters, o) {
        if limit.better(b) {
            return None;
        }
    }
    let mut best: Option<(Cost, Vec<usize>)> = None;
    let mut parts: Vec<Part> = clusters.iter().map(|&c| (c, 0)).collect();
    compositions(t.ways, clusters.len(), &mut Vec::new(), &mut |c| {
        let lim = match &best {
            Some((b, _)) if b.better(limit) => *b,
            _ => limit,
        };
        for (p, &w) in parts.iter_mut().zip(c) {
            p.1 = w;
        }
        if let Some(b) = split_bound(t, &parts, o) {
            if lim.better(b) {
                return true;
            }
        }
        *nodes += 1;
        let cost = t.cost(&parts, o, sc);
        if lim.better(cost) {
            return true;
        }
        if best.as_ref().is_none_or(|(b, _)| cost.better(*b)) {
            best = Some((cost, c.to_vec()));
        }
        true
    });
    best
}
