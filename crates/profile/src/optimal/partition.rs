//! Strict partitioning (`opt-stp`, `opt-unf`, `opt-antt`): one app per
//! cluster, the best way count for each.
//!
//! The answer is PBBCache's, from the `ucp-slowdown` incumbent
//! ([`dfs`] for `opt-*`, [`best_first`] for
//! `opt-*-bf`), which fixes the tie-breaking: the incumbent if nothing is
//! strictly better, else the first strictly better plan in its search
//! order. Its bound assumes more ways never hurt, so the answer is checked
//! against every way split; should it not be optimal, the first optimal
//! split in lexicographic order (`opt-*`) or the last one (`opt-*-bf`,
//! whose search favours large way counts late) is returned instead.
//!
//! Every split is scored first (by per-app lookups when no bandwidth model
//! couples the apps, [`compositions::scan`]), and the search is replayed
//! only when that does not settle its answer: an optimal incumbent is the
//! answer, and so, for `opt-*` with bounds that never exceed a
//! completion's cost, is the first optimal split (the depth-first search
//! then prunes no optimal leaf).

use super::compositions::{self, Optima};
use super::heuristic::ucp_slowdown;
use super::objective::Objective;
use super::pbbcache::{best_first, dfs, Scorer};
use super::progress::Budget;
use super::tables::Tables;
use super::TieRule;
#[cfg(test)]
use cachepart_units::Kind as _;

/// Way counts per app (mix order) and whether they are proven optimal.
///
/// Every way split is scored first (from per-app lookups when the apps are
/// uncoupled and the splits few, see [`compositions::scan`]). PBBCache's search
/// is then replayed only when its answer is not already known: when the
/// `ucp-slowdown` plan is optimal it is the answer, and for `opt-*` with
/// bounds that never exceed a completion's cost ([`compositions::bounds_exact`])
/// the depth-first search ends on the first optimal split. Uncoupled apps
/// have their depth-first search replayed from lookups
/// ([`compositions::dfs`]).
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
    // The true optimum, by every split: the first and the last optimal one.
    let fast = !t.coupled && compositions::count(t.ways, n) <= compositions::FAST_MAX;
    let sd = if fast {
        compositions::alone_slowdowns(t)
    } else {
        Vec::new()
    };
    let opt = if fast {
        compositions::scan(t, &sd, objective, budget)
    } else {
        scan_exact(&mut s, budget)
    };
    budget.add_nodes(opt.count);
    if opt.complete {
        if n == 1 {
            budget.add_nodes(s.nodes);
            return (vec![t.ways], true);
        }
        // nothing is strictly better than the incumbent: every search keeps it
        if !opt.cost.better(hcost) {
            budget.add_nodes(s.nodes);
            return (heur, true);
        }
        // valid bounds never prune an optimal leaf: DFS ends on the first
        if rule == TieRule::Serial && fast && compositions::bounds_exact(t, &sd) {
            budget.add_nodes(s.nodes);
            return (opt.first, true);
        }
    }
    let (ecost, esol) = if n == 1 {
        (hcost, Some(vec![t.ways]))
    } else {
        match rule {
            TieRule::Serial if fast => {
                let (c, sol, nodes) = compositions::dfs(t, &sd, objective, hcost);
                budget.add_nodes(nodes);
                (c, sol)
            }
            TieRule::Serial => dfs(&mut s, hcost),
            TieRule::BestFirst => best_first(&mut s, hcost),
        }
    };
    let (ecost, esol) = match esol {
        Some(sol) => (ecost, sol),
        None => (hcost, heur),
    };
    budget.add_nodes(s.nodes);
    let best = match rule {
        TieRule::Serial => opt.first,
        TieRule::BestFirst => opt.last,
    };
    if opt.cost.better(ecost) {
        (best, opt.complete)
    } else {
        (esol, opt.complete)
    }
}

/// Scores every split with the exact cost of the whole plan.
fn scan_exact(s: &mut Scorer, budget: &Budget) -> Optima {
    let n = s.t.n;
    let mut opt = Optima::new(n);
    let mut comp = Vec::with_capacity(n);
    let mut count = 0u64;
    let complete = compositions(s.t.ways, n, &mut comp, &mut |c| {
        count += 1;
        if count & 4095 == 0 && budget.expired() {
            return false;
        }
        let cost = s.leaf(c);
        opt.see(cost, c);
        true
    });
    opt.count = count;
    opt.complete = complete;
    opt
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
    use crate::bandwidth::BwModel;
    use crate::mix::Mix;
    use crate::model::ModelConfig;
    use crate::optimal::objective::Cost;
    use cachepart_machine::AppCurves;
    use proptest::prelude::*;

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

    /// The solver as it was before the fast scan: PBBCache's search, then
    /// every split by the exact cost.
    fn solve_reference(
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
        let mut best = (Cost::WORST, Vec::new());
        let mut last = Vec::new();
        let mut comp = Vec::with_capacity(n);
        let complete = compositions(t.ways, n, &mut comp, &mut |c| {
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
        let _ = budget;
        if best.0.better(ecost) {
            (best.1, complete)
        } else {
            (esol, complete)
        }
    }

    /// Random app curves over `ways` ways: `noise` 0 gives monotone
    /// slowdowns, `sens` 0 flat ones (many ties).
    fn curves(ways: usize, sens: f64, mpkc1: f64, base: f64, noise: &[f64]) -> AppCurves {
        let ipc: Vec<f64> = (1..=ways)
            .map(|w| base * (1.0 + sens * (w as f64).ln()) * (1.0 + noise[w - 1]))
            .collect();
        let mpkc: Vec<f64> = (1..=ways)
            .map(|w| mpkc1 / (1.0 + sens * (w as f64 - 1.0)) + 0.05)
            .collect();
        let mpki: Vec<f64> = mpkc.iter().zip(&ipc).map(|(m, i)| m / i).collect();
        let bw: Vec<f64> = mpkc.iter().map(|m| m * 200.0).collect();
        AppCurves::new("r", ipc, mpki, mpkc, bw)
    }

    type AppSeed = (usize, f64, f64, f64, Vec<f64>);

    fn case() -> impl Strategy<Value = (usize, Vec<AppSeed>, f64, u8, u8)> {
        (4usize..=12).prop_flat_map(|ways| {
            (
                Just(ways),
                proptest::collection::vec(
                    (
                        0usize..4,
                        prop_oneof![Just(0.0), 0.0f64..1.5],
                        0.5f64..40.0,
                        0.2f64..3.0,
                        proptest::collection::vec(-0.08f64..0.08, ways),
                    ),
                    1..=ways.min(11),
                ),
                0.3f64..1.2,
                0u8..4,
                0u8..3,
            )
        })
    }

    fn build(ways: usize, seeds: &[AppSeed], noise_kind: u8) -> Mix {
        let mut apps: Vec<AppCurves> = Vec::new();
        for (dup, sens, mpkc1, base, noise) in seeds {
            // a quarter of the apps repeat an earlier one (exact ties)
            if *dup == 0 && !apps.is_empty() {
                let k = (*mpkc1 as usize) % apps.len();
                apps.push(apps[k].clone());
                continue;
            }
            let noise: Vec<f64> = match noise_kind {
                0 => vec![0.0; ways],
                1 => noise.iter().map(|x| x / 8.0).collect(),
                _ => noise.clone(),
            };
            apps.push(curves(ways, *sens, *mpkc1, *base, &noise));
        }
        let mut mix = Mix::from_curves(apps).unwrap();
        for a in &mut mix.apps {
            let mpkc = &a.curves.llcmpkc;
            a.stalls_total = Some(mpkc.iter().map(|m| 0.2 + m / 50.0).collect());
            a.stalls_mem = Some(mpkc.iter().map(|m| m / 60.0).collect());
            a.stalls_store_buf = Some(vec![0.01; ways]);
        }
        mix
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        /// The fast path returns exactly the plan the replayed search returns.
        #[test]
        fn fast_path_equals_reference((ways, seeds, frac, bw, noise_kind) in case()) {
            let mix = build(ways, &seeds, noise_kind);
            let peak: f64 = mix.apps.iter().map(|a| a.curves.bandwidth_mbps[0]).sum();
            let cfg = match bw {
                0 => ModelConfig { bw_model: BwModel::Simple, max_bw_mbps: None },
                1 => ModelConfig { bw_model: BwModel::Simple, max_bw_mbps: Some(frac * peak) },
                2 => ModelConfig { bw_model: BwModel::Simple, max_bw_mbps: Some(10.0 * peak) },
                _ => ModelConfig { bw_model: BwModel::Stalls, max_bw_mbps: Some(frac * peak) },
            };
            let budget = Budget::new(None, None);
            let t = Tables::new(&mix, &cfg, false, &budget).unwrap();
            for o in Objective::all() {
                for rule in [TieRule::Serial, TieRule::BestFirst] {
                    let fast = solve(&t, o, rule, &budget);
                    let slow = solve_reference(&t, o, rule, &budget);
                    prop_assert_eq!(&fast, &slow, "{:?} {:?} bw {} coupled {}", o, rule, bw, t.coupled);
                }
                // the replayed DFS, from the incumbent and from nothing
                if !t.coupled && t.n >= 2 {
                    let sd = compositions::alone_slowdowns(&t);
                    let apps: Vec<u64> = (0..t.n).map(|a| 1u64 << a).collect();
                    let mut s = Scorer::new(&t, &apps, o);
                    let h = ucp_slowdown(&t);
                    let hcost = s.leaf(&h);
                    for default in [hcost, Cost::WORST] {
                        let (c, sol, _) = compositions::dfs(&t, &sd, o, default);
                        let (c0, sol0) = dfs(&mut s, default);
                        prop_assert_eq!((c, sol), (c0, sol0));
                    }
                }
            }
        }
    }

    #[test]
    fn scan_matches_exact_costs() {
        let seeds: Vec<AppSeed> = (0..6)
            .map(|i| {
                let x = i as f64;
                (1, 0.2 * x, 3.0 + 5.0 * x, 0.5 + 0.3 * x, vec![0.01 * x; 11])
            })
            .collect();
        let mix = build(11, &seeds, 2);
        let budget = Budget::new(None, None);
        let t = Tables::new(&mix, &ModelConfig::default(), false, &budget).unwrap();
        let sd = compositions::alone_slowdowns(&t);
        for o in Objective::all() {
            let fast = compositions::scan(&t, &sd, o, &budget);
            let apps: Vec<u64> = (0..6).map(|a| 1u64 << a).collect();
            let mut s = Scorer::new(&t, &apps, o);
            let exact = scan_exact(&mut s, &budget);
            assert_eq!(fast.count, 252);
            assert_eq!(exact.count, 252);
            assert_eq!(fast.cost, exact.cost);
            assert_eq!(fast.first, exact.first);
            assert_eq!(fast.last, exact.last);
        }
    }
}
