//! PBBCache's own exact searches, restated so that ties are broken as it
//! breaks them (`shared/data/pbbcache/MODEL.md` section 6).
//!
//! * [`for_each_clustering`]: its enumeration of set partitions (the
//!   partitions of apps `1..` first, then app 0 inserted into each block in
//!   order, then as a new singleton block in front).
//! * [`dfs`]: the depth-first branch and bound of `opt-*` over way counts.
//! * [`best_first`]: the best-first branch and bound it runs per clustering.
//!
//! Bounds are PBBCache's: every unassigned cluster is evaluated at its
//! maximum possible ways (the bound assumes more ways never hurts; the
//! callers check the result against the true optimum and never rely on it
//! for optimality). For unfairness the minimum slowdown of a partial plan is
//! taken over the first `len(prefix)` apps of the plan, as PBBCache does.

use super::objective::{cost_of, Cost, Objective};
use super::tables::{Part, Scratch, Tables};
use crate::metrics::round3;

/// Calls `f` on every clustering of `n` apps into at most `ways` clusters,
/// in PBBCache's order; clusters are in PBBCache's list order. Stops when
/// `f` returns false.
pub(crate) fn for_each_clustering(n: usize, ways: usize, f: &mut dyn FnMut(&[u64]) -> bool) {
    if n == 0 || ways == 0 {
        return;
    }
    let mut blocks = vec![1u64 << (n - 1)];
    place(n as isize - 2, &mut blocks, ways, f);
}

fn place(
    app: isize,
    blocks: &mut Vec<u64>,
    ways: usize,
    f: &mut dyn FnMut(&[u64]) -> bool,
) -> bool {
    if app < 0 {
        return f(blocks);
    }
    let bit = 1u64 << app;
    for i in 0..blocks.len() {
        blocks[i] |= bit;
        let go = place(app - 1, blocks, ways, f);
        blocks[i] &= !bit;
        if !go {
            return false;
        }
    }
    if blocks.len() < ways {
        blocks.insert(0, bit);
        let go = place(app - 1, blocks, ways, f);
        blocks.remove(0);
        if !go {
            return false;
        }
    }
    true
}

/// Costs of candidate way counts for one clustering, PBBCache style.
pub(crate) struct Scorer<'t, 'a> {
    pub t: &'t Tables<'a>,
    pub clusters: &'t [u64],
    pub objective: Objective,
    parts: Vec<Part>,
    scratch: Scratch,
    sd: Vec<f64>,
    inputs: Vec<crate::bandwidth::BwInput>,
    /// Leaves and bounds evaluated.
    pub nodes: u64,
}

impl<'t, 'a> Scorer<'t, 'a> {
    pub fn new(t: &'t Tables<'a>, clusters: &'t [u64], objective: Objective) -> Self {
        Scorer {
            t,
            clusters,
            objective,
            parts: Vec::with_capacity(clusters.len()),
            scratch: Scratch::default(),
            sd: Vec::new(),
            inputs: Vec::new(),
            nodes: 0,
        }
    }

    /// Exact cost of complete way counts `sol`.
    pub fn leaf(&mut self, sol: &[usize]) -> Cost {
        self.nodes += 1;
        self.parts.clear();
        self.parts
            .extend(self.clusters.iter().copied().zip(sol.iter().copied()));
        self.t.cost(&self.parts, self.objective, &mut self.scratch)
    }

    /// PBBCache's bound of prefix `sol` with `rem` ways left.
    pub fn bound(&mut self, sol: &[usize], rem: usize) -> Cost {
        self.nodes += 1;
        let k = self.clusters.len();
        let left = k - sol.len();
        let fill = rem - (left - 1);
        self.parts.clear();
        for (i, &c) in self.clusters.iter().enumerate() {
            self.parts
                .push((c, if i < sol.len() { sol[i] } else { fill }));
        }
        self.t
            .slowdowns(&self.parts, &mut self.sd, &mut self.inputs);
        match self.objective {
            Objective::Unfairness => {
                let stp: f64 = self.sd.iter().map(|s| 1.0 / s).sum();
                let max = self.sd.iter().copied().fold(f64::MIN, f64::max);
                // first len(sol) apps of the plan, clusters in order
                let mut min = f64::MAX;
                let mut taken = 0;
                'outer: for &c in self.clusters {
                    let mut bits = c;
                    while bits != 0 {
                        if taken == sol.len() {
                            break 'outer;
                        }
                        let a = bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        min = min.min(self.sd[a]);
                        taken += 1;
                    }
                }
                Cost(round3(max / min), -round3(stp))
            }
            o => cost_of(&self.sd, o),
        }
    }
}

/// `opt-*` (serial): depth-first over way counts, children in increasing
/// order, pruning a child iff the incumbent is strictly better than its
/// bound, replacing the incumbent only on strictly better leaves. Starts
/// from `default` (the incumbent's cost); returns the best cost and way
/// counts found strictly better than it, if any.
pub(crate) fn dfs(s: &mut Scorer, default: Cost) -> (Cost, Option<Vec<usize>>) {
    let ways = s.t.ways;
    let mut partial = Vec::with_capacity(s.clusters.len());
    dfs_aux(s, default, ways, &mut partial)
}

fn dfs_aux(
    s: &mut Scorer,
    default: Cost,
    nw: usize,
    partial: &mut Vec<usize>,
) -> (Cost, Option<Vec<usize>>) {
    let k = s.clusters.len();
    let level = partial.len();
    if level == k - 1 {
        let mut sol = partial.clone();
        sol.push(nw);
        return (s.leaf(&sol), Some(sol));
    }
    if nw == k - level {
        let mut sol = partial.clone();
        sol.resize(sol.len() + nw, 1);
        return (s.leaf(&sol), Some(sol));
    }
    let mut best = default;
    let mut best_sol = None;
    for a in 1..=nw - (k - level - 1) {
        partial.push(a);
        let rem = nw - a;
        let b = s.bound(partial, rem);
        if best.better(b) {
            partial.pop();
            continue;
        }
        let (c, sol) = dfs_aux(s, best, rem, partial);
        partial.pop();
        if let Some(sol) = sol {
            if c.better(best) {
                best = c;
                best_sol = Some(sol);
            }
        }
    }
    (best, best_sol)
}

/// The sequential best-first search PBBCache runs on each clustering:
/// nodes sorted ascending by PBBCache's value of their bound (inserted
/// before equal keys), popped from the front; children pruned iff the
/// incumbent is strictly better than their bound; after a strictly better
/// leaf, nodes are dropped from the back while their bound is not strictly
/// better than the incumbent.
pub(crate) fn best_first(s: &mut Scorer, default: Cost) -> (Cost, Option<Vec<usize>>) {
    let k = s.clusters.len();
    let ways = s.t.ways;
    let o = s.objective;
    let key = |c: Cost| c.raw_key(o);
    let mut queue: Vec<(Vec<usize>, (f64, f64))> = vec![(Vec::new(), (f64::NEG_INFINITY, 0.0))];
    let mut best = default;
    let mut best_sol = None;
    while !queue.is_empty() {
        let (mut ps, _) = queue.remove(0);
        let nw = ways - ps.iter().sum::<usize>();
        let level = ps.len();
        let leaf = if level == k - 1 {
            ps.push(nw);
            Some(s.leaf(&ps))
        } else if nw == k - level {
            ps.resize(ps.len() + nw, 1);
            Some(s.leaf(&ps))
        } else {
            for a in 1..=nw - (k - level - 1) {
                let mut child = ps.clone();
                child.push(a);
                let b = s.bound(&child, nw - a);
                if best.better(b) {
                    continue;
                }
                let kb = key(b);
                let at = queue.partition_point(|(_, kq)| lt(*kq, kb));
                queue.insert(at, (child, kb));
            }
            None
        };
        if let Some(c) = leaf {
            if c.better(best) {
                best = c;
                best_sol = Some(ps);
                while let Some((_, kq)) = queue.last() {
                    let better = match o {
                        Objective::Stp => kq.0 > -best.0,
                        _ => lt(*kq, (best.0, best.1)),
                    };
                    if better {
                        break;
                    }
                    queue.pop();
                }
            }
        }
    }
    (best, best_sol)
}

#[inline]
fn lt(a: (f64, f64), b: (f64, f64)) -> bool {
    a.0 < b.0 || (a.0 == b.0 && a.1 < b.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enumeration_order_matches_pbbcache() {
        // PBBCache's generator on [0, 1, 2]
        let mut seen = Vec::new();
        for_each_clustering(3, 11, &mut |c| {
            seen.push(c.to_vec());
            true
        });
        assert_eq!(
            seen,
            vec![
                vec![0b111],
                vec![0b001, 0b110],
                vec![0b011, 0b100],
                vec![0b010, 0b101],
                vec![0b001, 0b010, 0b100],
            ]
        );
        // Bell numbers, and the cap on clusters
        let count = |n, w| {
            let mut k = 0u64;
            for_each_clustering(n, w, &mut |_| {
                k += 1;
                true
            });
            k
        };
        assert_eq!(count(6, 11), 203);
        assert_eq!(count(8, 11), 4140);
        assert_eq!(count(4, 2), 8); // S(4,1) + S(4,2)
    }
}
