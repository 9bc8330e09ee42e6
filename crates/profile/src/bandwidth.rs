//! Bandwidth models: how memory-bandwidth contention adds to the cache-only
//! slowdown (MODEL.md section 2).
//!
//! * `simple`: when the summed demand exceeds the maximum `B`, bandwidth is
//!   throttled as KPart models it (the heaviest users lose most) and each
//!   app slows by demand / share.
//! * `stalls`: Morad et al.'s queueing fixed point gives each app's share;
//!   the slowdown factor is applied only to the memory-bound fraction of the
//!   app's stall cycles.
//!
//! # Valid domains and saturation
//!
//! Both models take a maximum bandwidth `B > 0` (finite, and through
//! [`crate::ModelConfig::check`] at least [`crate::MIN_MAX_BW_MBPS`]; `None`
//! means unlimited) and non-negative demands
//! (the metrics table refuses negative ones). Outside the domain where
//! their equations hold they saturate by a documented rule, so that a
//! lower `B` never speeds an app up and a factor is never below 1:
//!
//! * `simple`: with `T` the summed demand, `dmax` the largest and
//!   `S = sum d_i^2 / dmax`, the heaviest app keeps the fraction
//!   `x = (B + S - T) / S` of its demand. The equations hold for `x > 0`,
//!   that is `B > T - S`; below, the heaviest app's share would be zero or
//!   negative (negative slowdowns). Saturation: `x` is at least
//!   [`SIMPLE_MIN_KEPT`] times the proportional fraction `B / T`, which is
//!   positive and grows with `B`.
//! * `stalls`: Morad's fixed point needs normalised demands `d_i = demand /
//!   B` in `(0, 1)`. Apps with zero demand use no bandwidth and keep factor
//!   1 (they are left out of the fixed point). When the largest demand
//!   reaches [`STALLS_MAX_DEMAND`], the fixed point is solved for the
//!   demands scaled down together until the largest is at that cap, and
//!   each app's queueing delay is its true demand over that share,
//!   `d_i / u_i`: below that `B`, every delay grows as `1 / B`.
//!   Known limit: near saturation (largest normalised demand above about
//!   1/2, summed shares near 1) Morad's fixed point gives the heaviest app
//!   a growing share of the bandwidth, so its own delay can shrink as `B`
//!   drops; the property tests check monotonicity up to a largest demand
//!   of 1/2 and finite factors of at least 1 everywhere.

use serde::{Deserialize, Serialize};

/// Which bandwidth model applies.
#[cachepart_units::kind]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BwModel {
    /// KPart-style proportional throttling above the maximum.
    #[default]
    #[strum(message = "KPart-style throttling above the maximum bandwidth")]
    Simple,
    /// Queueing fixed point applied to the memory-bound stall fraction.
    #[strum(message = "Queueing model applied to memory stall cycles")]
    Stalls,
}

/// Per-app inputs of a bandwidth model at the app's assigned size.
#[derive(Clone, Copy, Debug, Default)]
pub struct BwInput {
    /// Bandwidth demand in MB/s.
    pub demand: f64,
    /// `stalls_total` at that size (stalls model only).
    pub stalls_total: f64,
    /// Memory-bound stalls (`stalls_l3_miss + stalls_store_buf`) at that size.
    pub stalls_mem: f64,
}

/// Multiplies each `slowdown[i]` by the bandwidth factor of app `i`.
/// `max_bw = None` (an infinite maximum) leaves slowdowns unchanged.
pub fn apply(model: BwModel, max_bw: Option<f64>, inputs: &[BwInput], slowdown: &mut [f64]) {
    let Some(b) = max_bw else { return };
    if !b.is_finite() {
        return;
    }
    match model {
        BwModel::Simple => apply_simple(b, inputs, slowdown),
        BwModel::Stalls => apply_stalls(b, inputs, slowdown),
    }
}

/// `simple`: the least fraction of the proportional share `B / T` that the
/// heaviest app keeps, where the KPart equations would leave it nothing.
pub const SIMPLE_MIN_KEPT: f64 = 0.01;

/// `stalls`: normalised demands are capped here to solve Morad's fixed
/// point, whose equations hold for demands below 1.
pub const STALLS_MAX_DEMAND: f64 = 0.99;

fn apply_simple(b: f64, inputs: &[BwInput], slowdown: &mut [f64]) {
    let total: f64 = inputs.iter().map(|i| i.demand).sum();
    if total <= b {
        return;
    }
    let bmax = inputs.iter().map(|i| i.demand).fold(0.0, f64::max);
    if bmax <= 0.0 {
        return;
    }
    let s: f64 = inputs.iter().map(|i| i.demand * i.demand).sum::<f64>() / bmax;
    let x = ((b + s - total) / s).max(SIMPLE_MIN_KEPT * b / total);
    for (i, inp) in inputs.iter().enumerate() {
        // 1 - r (1 - x), written so that it does not cancel to 0 when x is
        // tiny (for the heaviest app, r = 1, it is exactly x)
        let r = inp.demand / bmax;
        slowdown[i] /= (1.0 - r) + r * x;
    }
}

/// Solves Morad's fixed point for normalised demands `d` (demand / max):
/// `u_i^2 (1 - 1/d_i) + u_i (1 - U)(1 - 1/d_i) + 1 - U = 0` with
/// `U = sum u_i`. For a given `U`, each equation has one positive root
/// `u_i(U)`; the physical solution (the one Newton's method reaches from the
/// demand point, as PBBCache's sympy solve does) is the zero of
/// `g(U) = sum u_i(U) - U` on `(0, min(1, sum d))`, found by bisection to
/// full precision. Returns `None` when some demand is not in `(0, 1)`.
pub fn morad_shares(d: &[f64]) -> Option<Vec<f64>> {
    if d.iter().any(|&x| !(x > 0.0 && x < 1.0)) {
        return None;
    }
    if d.is_empty() {
        return Some(Vec::new());
    }
    if d.len() == 1 {
        return Some(d.to_vec());
    }
    // k_i = 1/|c_i| with c_i = 1 - 1/d_i < 0
    let k: Vec<f64> = d.iter().map(|&x| 1.0 / (1.0 / x - 1.0)).collect();
    let share = |big_u: f64, ki: f64| {
        let a = 1.0 - big_u;
        let t = a * ki;
        2.0 * t / (a + (a * a + 4.0 * t).sqrt())
    };
    let g = |big_u: f64| k.iter().map(|&ki| share(big_u, ki)).sum::<f64>() - big_u;
    let mut lo = 0.0f64;
    let mut hi = d.iter().sum::<f64>().min(1.0);
    if g(hi) > 0.0 {
        return None;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if g(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let big_u = 0.5 * (lo + hi);
    Some(k.iter().map(|&ki| share(big_u, ki)).collect())
}

fn apply_stalls(b: f64, inputs: &[BwInput], slowdown: &mut [f64]) {
    let d: Vec<f64> = inputs.iter().map(|i| i.demand / b).collect();
    // apps that use no bandwidth take no part in the fixed point
    let users: Vec<usize> = (0..d.len()).filter(|&i| d[i] > 0.0).collect();
    let dmax = users.iter().map(|&i| d[i]).fold(0.0, f64::max);
    // at the cap, the demands scaled down together: computed from the
    // demands themselves, so that a tiny `B` (d = inf) cannot make them NaN
    let top = users.iter().map(|&i| inputs[i].demand).fold(0.0, f64::max);
    let capped: Vec<f64> = users
        .iter()
        .map(|&i| {
            if dmax >= STALLS_MAX_DEMAND {
                STALLS_MAX_DEMAND * (inputs[i].demand / top)
            } else {
                d[i]
            }
        })
        .collect();
    let Some(shares) = morad_shares(&capped) else {
        return;
    };
    let mut u = vec![0.0; d.len()];
    for (k, &i) in users.iter().enumerate() {
        u[i] = shares[k];
    }
    for (i, inp) in inputs.iter().enumerate() {
        if inp.stalls_total <= 0.0 || u[i] <= 0.0 {
            continue;
        }
        let old = d[i] / u[i];
        let mem = inp.stalls_mem.min(inp.stalls_total);
        slowdown[i] *= (inp.stalls_total + mem * (old - 1.0)) / inp.stalls_total;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn simple_below_max_is_identity() {
        let inp = [BwInput {
            demand: 10.0,
            ..Default::default()
        }; 3];
        let mut s = [1.0, 2.0, 3.0];
        apply(BwModel::Simple, Some(100.0), &inp, &mut s);
        assert_eq!(s, [1.0, 2.0, 3.0]);
        apply(BwModel::Simple, None, &inp, &mut s);
        assert_eq!(s, [1.0, 2.0, 3.0]);
    }

    #[test]
    fn simple_throttles_to_max() {
        let demands = [30.0, 10.0, 20.0];
        let inp: Vec<BwInput> = demands
            .iter()
            .map(|&d| BwInput {
                demand: d,
                ..Default::default()
            })
            .collect();
        let mut s = [1.0; 3];
        apply(BwModel::Simple, Some(40.0), &inp, &mut s);
        // shares = demand / factor must sum to the maximum
        let shares: f64 = demands.iter().zip(&s).map(|(d, f)| d / f).sum();
        assert!((shares - 40.0).abs() < 1e-9, "{shares}");
        assert!(s[0] > s[2] && s[2] > s[1]);
    }

    fn inputs(demands: &[f64], stalls: &[(f64, f64)]) -> Vec<BwInput> {
        demands
            .iter()
            .zip(stalls)
            .map(|(&d, &(total, mem))| BwInput {
                demand: d,
                stalls_total: total,
                stalls_mem: mem,
            })
            .collect()
    }

    fn factors(model: BwModel, b: f64, inp: &[BwInput]) -> Vec<f64> {
        let mut s = vec![1.0; inp.len()];
        apply(model, Some(b), inp, &mut s);
        s
    }

    #[test]
    fn simple_saturates_instead_of_going_negative() {
        // T = 3000, S = (1000^2 + 2000^2) / 2000 = 2500: the equations hold
        // for B > 500 only
        let inp = inputs(&[1000.0, 2000.0], &[(0.0, 0.0); 2]);
        for b in [499.0, 100.0, 1.0, 1e-9] {
            let f = factors(BwModel::Simple, b, &inp);
            assert!(f.iter().all(|&x| x.is_finite() && x >= 1.0), "{b}: {f:?}");
        }
        let low = factors(BwModel::Simple, 1.0, &inp);
        let lower = factors(BwModel::Simple, 0.5, &inp);
        assert!(lower[1] > low[1], "{low:?} {lower:?}");
    }

    #[test]
    fn stalls_slows_apps_that_ask_for_more_than_the_maximum() {
        let inp = inputs(&[5000.0, 3000.0, 0.0], &[(100.0, 50.0); 3]);
        let unlimited = [1.0; 3];
        for b in [1.0, 1000.0, 4000.0] {
            let f = factors(BwModel::Stalls, b, &inp);
            assert!(f[0] > unlimited[0] && f[1] > unlimited[1], "{b}: {f:?}");
            assert_eq!(f[2], 1.0, "no demand, no slowdown");
        }
        let at_1 = factors(BwModel::Stalls, 1.0, &inp);
        let at_1000 = factors(BwModel::Stalls, 1000.0, &inp);
        let at_10000 = factors(BwModel::Stalls, 10000.0, &inp);
        assert!(at_1[0] > at_1000[0] && at_1000[0] > at_10000[0]);
    }

    /// At the least maximum the model takes (1 MB/s) and far below it,
    /// the heaviest app's `simple` factor is its demand over its kept
    /// share, not a cancellation to `inf`; `stalls` still slows apps down
    /// (before, a denormal `B` made its demands NaN and dropped the
    /// penalty altogether).
    #[test]
    fn tiny_maxima_give_finite_growing_factors() {
        let inp = inputs(&[319.0, 7200.0], &[(0.3, 0.1), (0.9, 0.6)]);
        let mut last = [1.0, 1.0];
        for b in [crate::MIN_MAX_BW_MBPS, 1e-3, 1e-10, 1e-100, 1e-300] {
            let f = factors(BwModel::Simple, b, &inp);
            assert!(f.iter().all(|&x| x.is_finite() && x >= 1.0), "{b}: {f:?}");
            assert!(f[1] > last[1], "{b}: {f:?} after {last:?}");
            last = [f[0], f[1]];
        }
        for b in [crate::MIN_MAX_BW_MBPS, 1e-100, 5e-324] {
            let f = factors(BwModel::Stalls, b, &inp);
            assert!(f[0] > 1.0 && f[1] > 1.0, "{b}: {f:?}");
        }
    }

    fn arb_mix() -> impl Strategy<Value = Vec<BwInput>> {
        proptest::collection::vec((0.0f64..20000.0, 1.0f64..1e9, 0.0f64..1.0), 1..8).prop_map(|v| {
            v.into_iter()
                .map(|(d, total, frac)| BwInput {
                    demand: d,
                    stalls_total: total,
                    stalls_mem: total * frac,
                })
                .collect()
        })
    }

    proptest! {
        /// `simple`: a lower maximum never speeds an app up, and no factor
        /// is below 1 or infinite.
        #[test]
        fn simple_is_monotone_in_the_limit(
            inp in arb_mix(),
            b1 in 1.0f64..50000.0,
            ratio in 0.0f64..1.0,
        ) {
            let b0 = b1 * ratio.max(1e-6);
            let hi = factors(BwModel::Simple, b1, &inp);
            let lo = factors(BwModel::Simple, b0, &inp);
            for i in 0..inp.len() {
                prop_assert!(hi[i].is_finite() && hi[i] >= 1.0, "{i}: {hi:?}");
                prop_assert!(lo[i].is_finite() && lo[i] >= 1.0, "{i}: {lo:?}");
                prop_assert!(lo[i] >= hi[i], "app {i}: B {b0} gives {lo:?}, B {b1} gives {hi:?}");
            }
        }

        /// `stalls`: factors are finite and at least 1 at every maximum,
        /// and a lower maximum never speeds an app up while the largest
        /// normalised demand stays at most 1/2 (closer to saturation,
        /// Morad's fixed point itself gives the heaviest app a growing
        /// share: see the module docs).
        #[test]
        fn stalls_is_monotone_in_the_limit(
            inp in arb_mix(),
            b1 in 1.0f64..50000.0,
            ratio in 0.0f64..1.0,
        ) {
            let b0 = b1 * ratio.max(1e-6);
            let hi = factors(BwModel::Stalls, b1, &inp);
            let lo = factors(BwModel::Stalls, b0, &inp);
            for i in 0..inp.len() {
                prop_assert!(hi[i].is_finite() && hi[i] >= 1.0 - 1e-12, "{i}: {hi:?}");
                prop_assert!(lo[i].is_finite() && lo[i] >= 1.0 - 1e-12, "{i}: {lo:?}");
            }
            let dmax = inp.iter().map(|x| x.demand).fold(0.0, f64::max);
            if dmax / b0 <= 0.5 {
                for i in 0..inp.len() {
                    prop_assert!(lo[i] >= hi[i] * (1.0 - 1e-9), "app {i}: B {b0} gives {lo:?}, B {b1} gives {hi:?}");
                }
            }
        }
    }

    #[test]
    fn morad_solution_satisfies_equations() {
        let d = [0.05, 0.1, 0.02];
        let u = morad_shares(&d).unwrap();
        let big_u: f64 = u.iter().sum();
        for i in 0..3 {
            let a = 1.0 - 1.0 / d[i];
            let r = a * u[i] * u[i] + a * u[i] * (1.0 - big_u) + 1.0 - big_u;
            assert!(r.abs() < 1e-9, "{r}");
        }
    }
}
