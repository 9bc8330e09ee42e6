//! Bandwidth models: how memory-bandwidth contention adds to the cache-only
//! slowdown (MODEL.md section 2).
//!
//! * `simple`: when the summed demand exceeds the maximum `B`, bandwidth is
//!   throttled as KPart models it (the heaviest users lose most) and each
//!   app slows by demand / share.
//! * `stalls`: Morad et al.'s queueing fixed point gives each app's share;
//!   the slowdown factor is applied only to the memory-bound fraction of the
//!   app's stall cycles.

use serde::{Deserialize, Serialize};

/// Which bandwidth model applies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BwModel {
    /// KPart-style proportional throttling above the maximum.
    #[default]
    Simple,
    /// Queueing fixed point applied to the memory-bound stall fraction.
    Stalls,
}

impl BwModel {
    /// Kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            BwModel::Simple => "simple",
            BwModel::Stalls => "stalls",
        }
    }

    /// Parses a kebab-case name.
    pub fn from_name(s: &str) -> Option<BwModel> {
        match s {
            "simple" => Some(BwModel::Simple),
            "stalls" => Some(BwModel::Stalls),
            _ => None,
        }
    }
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
    let x = (b + s - total) / s;
    for (i, inp) in inputs.iter().enumerate() {
        slowdown[i] /= 1.0 - (inp.demand / bmax) * (1.0 - x);
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
    let Some(u) = morad_shares(&d) else { return };
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
