//! The parallel branch and bound over PBBCache's enumeration tree (see the
//! parent module's docs): incumbent, exact STP search where it applies,
//! then the bounded walk of the tree's subtrees on rayon's threads.

use super::incumbent::{dp_incumbent, improve};
use super::node_bounds::NodeBounds;
use super::replay::pbbcache_solve;
use super::split::best_split;
use super::Found;
use crate::optimal::completion::first_optimal_stp;
use crate::optimal::objective::{Cost, Objective};
use crate::optimal::progress::Budget;
use crate::optimal::tables::{Part, Scratch, Tables};
#[cfg(test)]
use cachepart_units::Kind as _;
use rayon::prelude::*;
use std::sync::Mutex;

/// The best cost any thread has found (for pruning only).
struct SharedBest(Mutex<Cost>);

impl SharedBest {
    fn get(&self) -> Cost {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn offer(&self, c: Cost) {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if c.better(*g) {
            *g = c;
        }
    }
}

struct Search<'s, 't, 'a> {
    t: &'s Tables<'a>,
    o: Objective,
    nb: &'s NodeBounds,
    global: &'s SharedBest,
    budget: &'s Budget<'s>,
    _p: std::marker::PhantomData<&'t ()>,
}

struct Local {
    best: Option<Found>,
    sc: Scratch,
    nodes: u64,
    stopped: bool,
}

impl Search<'_, '_, '_> {
    fn limit(&self, local: &Local) -> Cost {
        let g = self.global.get();
        match &local.best {
            Some(b) if !g.better(b.cost) => b.cost,
            _ => g,
        }
    }

    fn walk(&self, app: isize, blocks: &mut Vec<u64>, local: &mut Local) {
        if local.stopped {
            return;
        }
        local.nodes += 1;
        // the flag at every node (cheap), the clock now and then
        if self.budget.was_expired() || (local.nodes & 1023 == 0 && self.budget.expired()) {
            local.stopped = true;
            return;
        }
        if app < 0 {
            let limit = self.limit(local);
            let mut nodes = 0;
            if let Some((c, w)) =
                best_split(self.t, blocks, self.o, limit, &mut local.sc, &mut nodes)
            {
                if local.best.as_ref().is_none_or(|b| c.better(b.cost)) {
                    self.global.offer(c);
                    local.best = Some(Found {
                        clusters: blocks.clone(),
                        ways: w,
                        cost: c,
                    });
                }
            }
            local.nodes += nodes;
            return;
        }
        let k = app as usize + 1;
        if let Some(b) = self.nb.bound(self.t, self.o, blocks, k) {
            if self.limit(local).better(b) {
                return;
            }
        }
        let bit = 1u64 << app;
        for i in 0..blocks.len() {
            blocks[i] |= bit;
            self.walk(app - 1, blocks, local);
            blocks[i] &= !bit;
        }
        if blocks.len() < self.t.ways {
            blocks.insert(0, bit);
            self.walk(app - 1, blocks, local);
            blocks.remove(0);
        }
    }
}

/// Prefixes of the enumeration tree at which the search splits into
/// parallel subtrees, in enumeration order: (blocks, next app to place).
fn prefixes(n: usize, ways: usize, placed: usize) -> Vec<Vec<u64>> {
    fn rec(app: isize, stop: isize, blocks: &mut Vec<u64>, ways: usize, out: &mut Vec<Vec<u64>>) {
        if app < stop {
            out.push(blocks.clone());
            return;
        }
        let bit = 1u64 << app;
        for i in 0..blocks.len() {
            blocks[i] |= bit;
            rec(app - 1, stop, blocks, ways, out);
            blocks[i] &= !bit;
        }
        if blocks.len() < ways {
            blocks.insert(0, bit);
            rec(app - 1, stop, blocks, ways, out);
            blocks.remove(0);
        }
    }
    let mut out = Vec::new();
    let mut blocks = vec![1u64 << (n - 1)];
    rec(
        n as isize - 2,
        (n - placed) as isize,
        &mut blocks,
        ways,
        &mut out,
    );
    out
}

/// Parallel branch and bound over PBBCache's enumeration tree (module docs).
pub(crate) fn fast(t: &Tables, o: Objective, budget: &Budget) -> (Found, bool) {
    fast_with(t, o, budget, true)
}

/// [`fast`], optionally without the exact STP search of `completion.rs`
/// (`exact = false`: the general branch and bound, for tests).
fn fast_with(t: &Tables, o: Objective, budget: &Budget, exact: bool) -> (Found, bool) {
    let n = t.n;
    let mut sc = Scratch::default();
    // Incumbent: the DP plan when available, else the better of one shared
    // cluster and the first clustering's PBBCache solve.
    let mut incumbent: Option<Found> = None;
    let mut consider = |parts: Vec<Part>, sc: &mut Scratch| {
        let cost = t.cost(&parts, o, sc);
        if incumbent.as_ref().is_none_or(|b| cost.better(b.cost)) {
            incumbent = Some(Found {
                clusters: parts.iter().map(|p| p.0).collect(),
                ways: parts.iter().map(|p| p.1).collect(),
                cost,
            });
        }
    };
    let all = (1u64 << n) - 1;
    consider(vec![(all, t.ways)], &mut sc);
    let mut dp = None;
    if let Some((parts, table)) = dp_incumbent(t, o, budget) {
        consider(parts, &mut sc);
        if o == Objective::Stp && exact {
            // The exact search knows every subtree's value (completion.rs).
            let (found, done) = first_optimal_stp(t, &table, budget);
            match found {
                Some(best) => return (with_pbbcache_ways(t, o, best, budget), done),
                None if !done => {
                    return (incumbent.expect("the DP plan is an incumbent"), false);
                }
                None => {} // not expected: fall back to the general search
            }
        }
        dp = Some(table);
    }
    let mut stp_dp = None;
    if o == Objective::Unfairness && !t.coupled {
        if let Some((parts, table)) = dp_incumbent(t, Objective::Stp, budget) {
            consider(parts, &mut sc);
            stp_dp = Some(table);
        }
    }
    let mut incumbent = incumbent.expect("one cluster is always a plan");
    improve(t, o, &mut incumbent, budget);
    let global = SharedBest(Mutex::new(incumbent.cost));
    let mut nb = NodeBounds::new(t, o, dp.as_ref(), budget);
    if let Some(table) = &stp_dp {
        nb.second = Some(Box::new(NodeBounds::new(
            t,
            Objective::Stp,
            Some(table),
            budget,
        )));
    }
    let placed = n.min(6);
    let roots = prefixes(n, t.ways, placed);
    budget.add_total(roots.len() as u64);
    let search = Search {
        t,
        o,
        nb: &nb,
        global: &global,
        budget,
        _p: std::marker::PhantomData,
    };
    let results: Vec<Local> = roots
        .into_par_iter()
        .map(|mut blocks| {
            let mut local = Local {
                best: None,
                sc: Scratch::default(),
                nodes: 0,
                stopped: false,
            };
            search.walk(n as isize - 1 - placed as isize, &mut blocks, &mut local);
            budget.add_done(1);
            local
        })
        .collect();
    let mut best: Option<Found> = None;
    let mut stopped = false;
    for r in results {
        budget.add_nodes(r.nodes);
        stopped |= r.stopped;
        if let Some(f) = r.best {
            if best.as_ref().is_none_or(|b| f.cost.better(b.cost)) {
                best = Some(f);
            }
        }
    }
    let best = match best {
        Some(b) if !incumbent.cost.better(b.cost) => b,
        _ => return (incumbent, false),
    };
    (with_pbbcache_ways(t, o, best, budget), !stopped)
}

/// `best` with the way counts PBBCache's per-clustering search picks for
/// its clustering, when they are optimal too.
fn with_pbbcache_ways(t: &Tables, o: Objective, best: Found, budget: &Budget) -> Found {
    let mut nodes = 0;
    let (c, sol) = pbbcache_solve(t, &best.clusters, o, None, &mut nodes);
    budget.add_nodes(nodes);
    match sol {
        Some(ways) if c == best.cost => Found { ways, ..best },
        _ => best,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optimal::clustering::{emulate, EMULATE_MAX_APPS};
    /// The parallel search finds the same optimum as the replay of
    /// PBBCache (checked against brute force in `tests/optimal_oracle.rs`).
    #[test]
    fn fast_search_agrees_with_replay() {
        use crate::bandwidth::BwModel;
        use crate::model::ModelConfig;
        use cachepart_machine::AppCurves;
        let mut x = 12345u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 10_000) as f64 / 10_000.0
        };
        for case in 0..12 {
            let n = 3 + case % 5;
            let ways = 5 + case % 4;
            let apps: Vec<AppCurves> = (0..n)
                .map(|i| {
                    let sens = rnd() * 1.2;
                    let base = 0.3 + 2.0 * rnd();
                    let m1 = 1.0 + 30.0 * rnd();
                    let ipc: Vec<f64> = (1..=ways)
                        .map(|w| {
                            base * (1.0 + sens * (w as f64).ln()) * (1.0 + 0.1 * (rnd() - 0.5))
                        })
                        .collect();
                    let mpkc: Vec<f64> = (1..=ways)
                        .map(|w| m1 / (1.0 + sens * (w as f64 - 1.0)) + 0.05)
                        .collect();
                    let bw: Vec<f64> = mpkc.iter().map(|m| m * 150.0).collect();
                    AppCurves::new(&format!("a{i}"), ipc, mpkc.clone(), mpkc, bw)
                })
                .collect();
            let mix = crate::Mix::from_curves(apps).unwrap();
            let peak: f64 = mix.apps.iter().map(|a| a.curves.bandwidth_mbps[0]).sum();
            for max_bw in [None, Some(0.6 * peak)] {
                let cfg = ModelConfig {
                    bw_model: BwModel::Simple,
                    max_bw_mbps: max_bw,
                };
                let t = Tables::new(&mix, &cfg, true, &Budget::new(None, None)).unwrap();
                for o in Objective::all() {
                    let b = Budget::new(None, None);
                    let (e, pe) = emulate(&t, o, &b);
                    let (f, pf) = fast(&t, o, &b);
                    assert!(pe && pf);
                    assert_eq!(e.cost, f.cost, "case {case} {max_bw:?} {}", o.name());
                }
            }
        }
    }

    /// Random apps over `ways` ways (some duplicated, for ties).
    fn random_mix(n: usize, ways: usize, seed: u64) -> crate::Mix {
        use cachepart_machine::AppCurves;
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 10_000) as f64 / 10_000.0
        };
        let mut apps: Vec<AppCurves> = Vec::new();
        for i in 0..n {
            if i > 0 && rnd() < 0.2 {
                let j = (rnd() * i as f64) as usize;
                apps.push(apps[j].clone());
                continue;
            }
            let sens = rnd() * 1.2;
            let base = 0.3 + 2.0 * rnd();
            let m1 = 1.0 + 30.0 * rnd();
            let ipc: Vec<f64> = (1..=ways)
                .map(|w| base * (1.0 + sens * (w as f64).ln()) * (1.0 + 0.1 * (rnd() - 0.5)))
                .collect();
            let mpkc: Vec<f64> = (1..=ways)
                .map(|w| m1 / (1.0 + sens * (w as f64 - 1.0)) + 0.05)
                .collect();
            let bw: Vec<f64> = mpkc.iter().map(|m| m * 150.0).collect();
            apps.push(AppCurves::new(
                &format!("a{i}"),
                ipc,
                mpkc.clone(),
                mpkc,
                bw,
            ));
        }
        crate::Mix::from_curves(apps).unwrap()
    }

    /// The exact STP search (`completion.rs`) returns exactly the plan of
    /// the general branch and bound, which it replaces; under a bandwidth
    /// maximum only the sum of peaks exceeds, the exact coupling check
    /// lets it run and the plan is still the same.
    #[test]
    fn exact_stp_search_matches_general_search() {
        use crate::bandwidth::BwModel;
        use crate::model::ModelConfig;
        let mut exact_uncoupled = 0;
        for case in 0..24u64 {
            let n = 6 + (case % 5) as usize;
            let ways = [11, 8, 6][(case % 3) as usize];
            let mix = random_mix(n, ways, case + 1);
            let peak: f64 = mix
                .apps
                .iter()
                .map(|a| crate::optimal::tables::peak_value(&a.curves.bandwidth_mbps))
                .sum();
            for max_bw in [None, Some(0.9 * peak), Some(0.5 * peak)] {
                let cfg = ModelConfig {
                    bw_model: BwModel::Simple,
                    max_bw_mbps: max_bw,
                };
                let b = Budget::new(None, None);
                let t = Tables::new(&mix, &cfg, true, &b).unwrap();
                if max_bw.is_some() && !t.coupled {
                    exact_uncoupled += 1;
                }
                let (e, pe) = fast_with(&t, Objective::Stp, &b, true);
                let (g, pg) = fast_with(&t, Objective::Stp, &b, false);
                assert!(pe && pg);
                let what = format!("case {case} n {n} ways {ways} {max_bw:?}");
                assert_eq!(e.cost, g.cost, "{what}");
                assert_eq!(e.clusters, g.clusters, "{what}");
                assert_eq!(e.ways, g.ways, "{what}");
                if n <= EMULATE_MAX_APPS {
                    assert_eq!(emulate(&t, Objective::Stp, &b).0.cost, e.cost, "{what}");
                }
            }
        }
        assert!(
            exact_uncoupled > 0,
            "the exact coupling check was not exercised"
        );
    }

    #[test]
    fn prefixes_cover_the_tree_in_order() {
        let p = prefixes(4, 11, 2);
        assert_eq!(p, vec![vec![0b1100], vec![0b0100, 0b1000]]);
        assert_eq!(prefixes(6, 11, 6).len(), 203);
    }
}
