//! Strict partitioning (`opt-stp`, `opt-unf`, `opt-antt`): one app per
//! cluster, the best way count for each.
//!
//! PBBCache's search is replayed first from the `ucp-slowdown` incumbent
//! ([`pbbcache::dfs`] for `opt-*`, [`pbbcache::best_first`] for
//! `opt-*-bf`), which fixes the tie-breaking: its answer is the incumbent
//! if nothing is strictly better, else the first strictly better plan in
//! its search order. Its bound assumes more ways never hurt, so the answer
//! is then checked against every way split; should it not be optimal, the
//! first optimal split in lexicographic order (`opt-*`) or the last one
//! (`opt-*-bf`, whose search favours large way counts late) is returned
//! instead.

use super::heuristic::ucp_slowdown;
use super::objective::{Cost, Objective};
use super::pbbcache::{best_first, dfs, Scorer};
use super::progress::Budget;
use super::tables::Tables;
use super::TieRule;

/// Way counts per app (mix order) and whether they are proven optimal.
pub(crate) fn solve(
    t: &Tables,
    objective: Objective,
    rule: TieRule,
    budget: &Budget,
) -> (Vec<usize>, bool) {
    let n = t.n;
    let apps: Vec<u64> = (0..n).map(|a| 1u64 << a).collect();
    let mut s = Scorer::new(t, &apps, objective);
    let heur = ucp_slowdown(t);
    let hcost = s.leaf(&heur);
    let (ecost, esol) = if n == 1 {
        (hcost, Some(vec![t.ways]))
    } else {
        match rule {
            TieRule::Serial => dfs(&mut s, hcost),
            TieRule::BestFirst => best_first(&mut s, hcost),
        }
    };
    let (ecost, esol) = match esol {
        Some(sol) => (ecost, sol),
        None => (hcost, heur),
    };
    budget.add_nodes(s.nodes);
    // The true optimum, by every split: the first and the last optimal one.
    let mut best = (Cost::WORST, Vec::new());
    let mut last = Vec::new();
    let mut comp = Vec::with_capacity(n);
    let mut count = 0u64;
    let complete = compositions(t.ways, n, &mut comp, &mut |c| {
        count += 1;
        if count & 4095 == 0 && budget.expired() {
            return false;
        }
        let cost = s.leaf(c);
        if cost.better(best.0) {
            best = (cost, c.to_vec());
            last.clear();
            last.extend_from_slice(c);
        } else if !best.0.better(cost) {
            last.clear();
            last.extend_from_slice(c);
        }
        true
    });
    if rule == TieRule::BestFirst {
        best.1 = last;
    }
    budget.add_nodes(count);
    if !complete {
        return if best.0.better(ecost) {
            (best.1, false)
        } else {
            (esol, false)
        };
    }
    if best.0.better(ecost) {
        (best.1, true)
    } else {
        (esol, true)
    }
}

/// Calls `f` on every composition of `ways` into `parts` positive parts, in
/// lexicographic order; returns false if `f` stopped it.
pub(crate) fn compositions(
    ways: usize,
    parts: usize,
    buf: &mut Vec<usize>,
    f: &mut dyn FnMut(&[usize]) -> bool,
) -> bool {
    if parts == 0 {
        return ways == 0 && f(buf);
    }
    if parts == 1 {
        if ways == 0 {
            return true;
        }
        buf.push(ways);
        let go = f(buf);
        buf.pop();
        return go;
    }
    for a in 1..=ways.saturating_sub(parts - 1) {
        buf.push(a);
        let go = compositions(ways - a, parts - 1, buf, f);
        buf.pop();
        if !go {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compositions_in_order() {
        let mut all = Vec::new();
        compositions(4, 2, &mut Vec::new(), &mut |c| {
            all.push(c.to_vec());
            true
        });
        assert_eq!(all, vec![vec![1, 3], vec![2, 2], vec![3, 1]]);
        let mut k = 0;
        compositions(11, 6, &mut Vec::new(), &mut |_| {
            k += 1;
            true
        });
        assert_eq!(k, 252);
    }
}
