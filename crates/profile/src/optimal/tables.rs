//! Per-cluster tables and the exact evaluation of a candidate plan.
//!
//! For every set of apps that may share a cluster (every subset of the mix
//! when clustering) and every way count, this module holds the fractional
//! ways each member holds (the proportional split of
//! [`cachepart_machine::share`]) and cheap aggregates of the members'
//! cache-only slowdowns (sum of 1/slowdown, min, max, sum). The searches
//! bound with the aggregates and confirm with [`Tables::cost`], which
//! computes the slowdowns of a whole plan exactly as [`evaluate`] does
//! (same split order, same interpolation, same bandwidth model, same
//! summation order), so a cost found here is the cost `evaluate` reports.
//!
//! The bandwidth model couples the clusters only if some plan can reach
//! its maximum: for `simple`, the largest total demand of any plan is
//! found exactly by the dynamic programme of [`subset_dp`] (demand is
//! additive over clusters) when the sum of the apps' peak demands does not
//! already settle it.
//!
//! [`evaluate`]: crate::evaluate
//! [`subset_dp`]: super::subset_dp

use super::objective::{cost_of, Cost, Objective};
use super::progress::Budget;
use super::subset_dp::best_by_subsets;
use crate::bandwidth::{self, BwInput, BwModel};
use crate::mix::Mix;
use crate::model::ModelConfig;
use cachepart_machine::share::{interpolate, split_ways};
use rayon::prelude::*;

/// Largest mix for which every subset gets a table (2^n subsets).
pub const MAX_SUBSET_APPS: usize = 20;

/// One cluster of a candidate plan: its apps (bit `i` = app `i`) and ways.
pub(crate) type Part = (u64, usize);

/// Tables of a mix under a model configuration.
pub(crate) struct Tables<'a> {
    pub mix: &'a Mix,
    pub cfg: ModelConfig,
    /// Apps.
    pub n: usize,
    /// Ways of the cache.
    pub ways: usize,
    /// True when the bandwidth model can change some slowdown, which couples
    /// the apps of different clusters.
    pub coupled: bool,
    /// True when every bandwidth factor is at least 1 (the model only slows
    /// apps down), so bounds from cache-only slowdowns hold. `simple` far
    /// above its maximum can give negative factors (its throttled shares
    /// turn negative); it is ruled out unless every plan's total demand `A`
    /// stays below `B n / (n - 1)` (then `A - B < A / n <= sum b^2 / max b`
    /// keeps every share positive).
    pub bounds_hold: bool,
    subsets: Option<Subsets>,
}

/// Split and aggregates of every subset of the mix.
struct Subsets {
    /// Start of each subset's fractions (`ways * |T|` values, way-major).
    offset: Vec<usize>,
    frac: Vec<f64>,
    /// Per `(mask, w)`: index `mask * ways + w - 1`.
    inv_sum: Vec<f64>,
    min: Vec<f64>,
    max: Vec<f64>,
    sum: Vec<f64>,
    /// Total bandwidth demand (MB/s) of the members.
    demand: Vec<f64>,
    /// Per app: smallest and largest cache-only slowdown over every
    /// cluster holding it and every way count.
    app_lo: Vec<f64>,
    app_hi: Vec<f64>,
}

impl<'a> Tables<'a> {
    /// Tables for strict partitioning (single-app clusters only), or for
    /// clustering (`subsets`: every subset, `n <= MAX_SUBSET_APPS`);
    /// `None` if the time limit passed while building them.
    pub fn new(
        mix: &'a Mix,
        cfg: &ModelConfig,
        subsets: bool,
        budget: &Budget,
    ) -> Option<Tables<'a>> {
        let n = mix.len();
        let ways = mix.ways;
        let subsets = if subsets && n <= MAX_SUBSET_APPS {
            Some(Subsets::build(mix, budget)?)
        } else {
            None
        };
        let (coupled, bounds_hold) = match cfg.max_bw_mbps {
            Some(b) if b.is_finite() => match cfg.bw_model {
                BwModel::Stalls => (true, true),
                BwModel::Simple => {
                    let peak: f64 = mix
                        .apps
                        .iter()
                        .map(|a| peak_value(&a.curves.bandwidth_mbps))
                        .sum();
                    // largest total demand of any plan (a margin for sums
                    // taken in another order)
                    let most = match &subsets {
                        _ if peak <= b => peak,
                        Some(s) => {
                            let g = best_by_subsets(
                                n,
                                ways,
                                |m, w| s.demand[m as usize * ways + w - 1],
                                budget,
                            )?;
                            g[((1usize << n) - 1) * (ways + 1) + ways] * (1.0 + 1e-9)
                        }
                        None => peak * (1.0 + 1e-9),
                    };
                    let nf = n as f64;
                    (most > b, n == 1 || most * (nf - 1.0) < b * nf)
                }
            },
            _ => (false, true),
        };
        Some(Tables {
            mix,
            cfg: *cfg,
            n,
            ways,
            coupled,
            bounds_hold,
            subsets,
        })
    }

    /// Fractional ways of the `pos`-th member (in app order) of cluster
    /// `mask` holding `w` ways.
    #[inline]
    pub fn frac(&self, mask: u64, w: usize, pos: usize) -> f64 {
        if mask.count_ones() == 1 {
            return w as f64;
        }
        let s = self.subsets.as_ref().expect("subset tables");
        let m = mask.count_ones() as usize;
        s.frac[s.offset[mask as usize] + (w - 1) * m + pos]
    }

    /// Aggregates of cluster `mask` at `w` ways: (sum 1/s, min s, max s, sum s),
    /// cache-only slowdowns.
    #[inline]
    pub fn agg(&self, mask: u64, w: usize) -> (f64, f64, f64, f64) {
        let s = self.subsets.as_ref().expect("subset tables");
        let i = mask as usize * self.ways + w - 1;
        (s.inv_sum[i], s.min[i], s.max[i], s.sum[i])
    }

    /// Sum of 1/slowdown (cache-only) of cluster `mask` at `1..=ways` ways.
    #[inline]
    pub fn inv_sums(&self, mask: u64) -> &[f64] {
        let s = self.subsets.as_ref().expect("subset tables");
        let i = mask as usize * self.ways;
        &s.inv_sum[i..i + self.ways]
    }

    /// Smallest and largest cache-only slowdown app `a` can have in any
    /// cluster at any way count.
    pub fn app_range(&self, a: usize) -> (f64, f64) {
        let s = self.subsets.as_ref().expect("subset tables");
        (s.app_lo[a], s.app_hi[a])
    }

    /// Cache-only slowdowns of the apps of `parts` (written at their mix
    /// positions) and, when coupled, their bandwidth inputs.
    #[inline]
    fn fill(&self, parts: &[Part], sd: &mut [f64], inputs: &mut [BwInput]) {
        for &(mask, w) in parts {
            let mut bits = mask;
            let mut pos = 0;
            while bits != 0 {
                let a = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let f = self.frac(mask, w, pos);
                pos += 1;
                let app = &self.mix.apps[a];
                sd[a] = interpolate(&app.curves.slowdown, f);
                if self.coupled {
                    inputs[a] = app.bw_input(f);
                }
            }
        }
    }

    /// Slowdowns (with the bandwidth model) of the complete plan `parts`.
    pub fn slowdowns(&self, parts: &[Part], sd: &mut Vec<f64>, inputs: &mut Vec<BwInput>) {
        sd.clear();
        sd.resize(self.n, 0.0);
        inputs.clear();
        inputs.resize(self.n, BwInput::default());
        self.fill(parts, sd, inputs);
        if self.coupled {
            bandwidth::apply(self.cfg.bw_model, self.cfg.max_bw_mbps, inputs, sd);
        }
    }

    /// Exact rounded cost of the complete plan `parts`.
    pub fn cost(&self, parts: &[Part], objective: Objective, scratch: &mut Scratch) -> Cost {
        let Scratch { sd, inputs } = scratch;
        self.slowdowns(parts, sd, inputs);
        cost_of(sd, objective)
    }
}

/// Reusable buffers for [`Tables::cost`].
#[derive(Default)]
pub(crate) struct Scratch {
    sd: Vec<f64>,
    inputs: Vec<BwInput>,
}

/// Largest value a table can take under interpolation (including the
/// extrapolation below one way).
pub(crate) fn peak_value(m: &[f64]) -> f64 {
    let max = m.iter().copied().fold(f64::MIN, f64::max);
    let p0 = if m.len() > 1 { 2.0 * m[0] - m[1] } else { m[0] };
    max.max(p0)
}

impl Subsets {
    /// `None` if the time limit passed first.
    fn build(mix: &Mix, budget: &Budget) -> Option<Subsets> {
        let n = mix.len();
        let ways = mix.ways;
        let count = 1usize << n;
        let mut offset = vec![0usize; count + 1];
        for mask in 0..count {
            offset[mask + 1] = offset[mask] + ways * (mask.count_ones() as usize);
        }
        type Row = (Vec<f64>, Vec<[f64; 5]>, Vec<(usize, f64, f64)>);
        let rows: Vec<Row> = (0..count)
            .into_par_iter()
            .with_min_len(256)
            .map(|mask| {
                if mask == 0 {
                    return (
                        Vec::new(),
                        vec![[0.0, f64::INFINITY, f64::NEG_INFINITY, 0.0, 0.0]; ways],
                        Vec::new(),
                    );
                }
                // the flag at every subset (cheap), the clock now and then;
                // once expired, the remaining rows are skipped (the tables
                // are dropped)
                if budget.was_expired() || (mask & 63 == 0 && budget.expired()) {
                    return (Vec::new(), Vec::new(), Vec::new());
                }
                let members: Vec<usize> = (0..n).filter(|&a| mask >> a & 1 == 1).collect();
                let m = members.len();
                let mut frac = Vec::new();
                if m == 1 {
                    frac = (1..=ways).map(|w| w as f64).collect();
                } else {
                    let curves: Vec<&[f64]> = members
                        .iter()
                        .map(|&a| &mix.apps[a].curves.llcmpkc[..])
                        .collect();
                    split_ways(&curves, ways, &mut frac);
                }
                let mut agg = Vec::with_capacity(ways);
                let mut range: Vec<(usize, f64, f64)> = members
                    .iter()
                    .map(|&a| (a, f64::INFINITY, f64::NEG_INFINITY))
                    .collect();
                for w in 0..ways {
                    let (mut inv, mut lo, mut hi, mut sum, mut bw) =
                        (0.0, f64::INFINITY, f64::NEG_INFINITY, 0.0, 0.0);
                    for (p, &a) in members.iter().enumerate() {
                        let f = frac[w * m + p];
                        let s = interpolate(&mix.apps[a].curves.slowdown, f);
                        bw += interpolate(&mix.apps[a].curves.bandwidth_mbps, f);
                        inv += 1.0 / s;
                        lo = lo.min(s);
                        hi = hi.max(s);
                        sum += s;
                        range[p].1 = range[p].1.min(s);
                        range[p].2 = range[p].2.max(s);
                    }
                    agg.push([inv, lo, hi, sum, bw]);
                }
                (frac, agg, range)
            })
            .collect();
        if budget.was_expired() {
            return None;
        }
        let mut frac = Vec::with_capacity(offset[count]);
        let mut inv_sum = Vec::with_capacity(count * ways);
        let mut min = Vec::with_capacity(count * ways);
        let mut max = Vec::with_capacity(count * ways);
        let mut sum = Vec::with_capacity(count * ways);
        let mut demand = Vec::with_capacity(count * ways);
        let mut app_lo = vec![f64::INFINITY; n];
        let mut app_hi = vec![f64::NEG_INFINITY; n];
        for (f, agg, range) in rows {
            frac.extend_from_slice(&f);
            for (a, lo, hi) in range {
                app_lo[a] = app_lo[a].min(lo);
                app_hi[a] = app_hi[a].max(hi);
            }
            for [a, b, c, d, e] in agg {
                inv_sum.push(a);
                min.push(b);
                max.push(c);
                sum.push(d);
                demand.push(e);
            }
        }
        Some(Subsets {
            offset,
            frac,
            inv_sum,
            min,
            max,
            sum,
            demand,
            app_lo,
            app_hi,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate;
    use cachepart_machine::{AppCurves, Plan};

    fn mix() -> Mix {
        let app = |k: f64| {
            let ipc: Vec<f64> = (1..=6).map(|w| 1.0 + k * (w as f64).ln()).collect();
            let mpkc: Vec<f64> = (1..=6).map(|w| 10.0 * k / w as f64 + 0.5).collect();
            let bw: Vec<f64> = (1..=6).map(|w| 1000.0 * k / w as f64).collect();
            AppCurves::new(&format!("a{k}"), ipc, mpkc.clone(), mpkc, bw)
        };
        Mix::from_curves(vec![app(0.1), app(0.5), app(0.9), app(0.3)]).unwrap()
    }

    #[test]
    fn cost_equals_evaluate() {
        let mix = mix();
        for cfg in [
            ModelConfig::default(),
            ModelConfig {
                bw_model: BwModel::Simple,
                max_bw_mbps: Some(600.0),
            },
        ] {
            let t = Tables::new(&mix, &cfg, true, &Budget::new(None, None)).unwrap();
            assert_eq!(t.coupled, cfg.max_bw_mbps.is_some());
            let parts = [(0b0101u64, 2usize), (0b1010, 4)];
            let plan = Plan::from_clusters([(vec![0, 2], 2), (vec![1, 3], 4)]);
            let ev = evaluate(&mix, &plan, &cfg).unwrap();
            let mut sd = Vec::new();
            let mut inp = Vec::new();
            t.slowdowns(&parts, &mut sd, &mut inp);
            for (a, s) in sd.iter().enumerate() {
                assert_eq!(*s, ev.apps[a].slowdown, "app {a}");
            }
            let c = t.cost(&parts, Objective::Unfairness, &mut Scratch::default());
            assert_eq!(c.0, crate::round3(ev.metrics.unfairness));
        }
    }
}
