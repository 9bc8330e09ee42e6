//! The table-driven model: what a plan gives each app of a mix.
//!
//! Each way of the cache is handed to the apps whose cluster mask holds it,
//! split in proportion to their miss rates ([`cachepart_machine::share`]);
//! for disjoint clusters this is exactly PBBCache's shared-cluster model, and
//! an app alone in its cluster simply holds its cluster's ways. Every metric
//! column is then read off the app's table at its (fractional) size, and the
//! bandwidth model scales the slowdowns.

use crate::bandwidth::{self, BwInput, BwModel};
use crate::error::ProfileError;
use crate::metrics::MixMetrics;
use crate::mix::Mix;
use cachepart_machine::share::{interpolate, read_at_position};
use cachepart_machine::{Plan, ShareModel};
use cachepart_units::{MaskRules, WayMask};
use serde::{Deserialize, Serialize};

/// The least maximum bandwidth the model takes, MB/s. Below it the
/// bandwidth models' factors run past what a float holds (`inf`, `NaN`) or
/// lose every digit, and no memory system is that slow.
pub const MIN_MAX_BW_MBPS: f64 = 1.0;

/// Model settings: the bandwidth model and the maximum bandwidth.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelConfig {
    /// Which bandwidth model.
    pub bw_model: BwModel,
    /// Maximum bandwidth in MB/s; `None` = unlimited (no bandwidth effect).
    pub max_bw_mbps: Option<f64>,
}

impl ModelConfig {
    /// Checks the settings: the maximum bandwidth, when given, must be a
    /// finite number of MB/s of at least [`MIN_MAX_BW_MBPS`] (`None` is
    /// unlimited). The CLI and the Python module both call this, so they
    /// refuse the same values with the same words.
    pub fn check(&self) -> Result<(), ProfileError> {
        if let Some(b) = self.max_bw_mbps {
            if !(b.is_finite() && b >= MIN_MAX_BW_MBPS) {
                return Err(ProfileError::BadOption {
                    option: "max-bw",
                    value: format!("{b:?}"),
                    expected: format!(
                        "expected a finite bandwidth of at least {MIN_MAX_BW_MBPS:?} MB/s \
                         (leave it out for unlimited)"
                    ),
                });
            }
        }
        Ok(())
    }
}

/// What one app gets under a plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AppOutcome {
    /// Index in the mix.
    pub app: usize,
    /// Program name.
    pub name: String,
    /// Index of the app's cluster in the plan.
    pub cluster: usize,
    /// The cluster's way mask.
    pub mask: WayMask,
    /// Ways of the cluster.
    pub cluster_ways: u32,
    /// The (fractional) ways the app is estimated to hold.
    pub effective_ways: f64,
    /// Slowdown from the cache alone.
    pub slowdown_nobw: f64,
    /// Slowdown with the bandwidth model.
    pub slowdown: f64,
    /// Estimated bandwidth demand in MB/s.
    pub bandwidth_mbps: f64,
}

/// A plan's outcome for a mix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// One entry per app, in mix order.
    pub apps: Vec<AppOutcome>,
    /// Mix metrics from the bandwidth-model slowdowns.
    pub metrics: MixMetrics,
}

/// Fractional ways each app holds under `plan` (which must be valid).
pub fn effective_ways(mix: &Mix, plan: &Plan) -> Vec<f64> {
    let n = mix.len();
    let curve = |a: usize| match plan.share_model {
        ShareModel::Llcmpkc => &mix.apps[a].curves.llcmpkc[..],
        ShareModel::Llcmpki => &mix.apps[a].curves.llcmpki[..],
    };
    let mut idx = vec![0.0f64; n];
    let union = plan.clusters.iter().fold(0u64, |m, c| m | c.mask.0);
    let mut holders: Vec<usize> = Vec::with_capacity(n);
    let mut v: Vec<f64> = Vec::with_capacity(n);
    for bit in 0..64 {
        if union >> bit & 1 == 0 {
            continue;
        }
        holders.clear();
        for c in &plan.clusters {
            if c.mask.0 >> bit & 1 == 1 {
                holders.extend_from_slice(&c.apps);
            }
        }
        if holders.len() == 1 {
            idx[holders[0]] += 1.0;
            continue;
        }
        v.clear();
        v.extend(holders.iter().map(|&a| read_at_position(curve(a), idx[a])));
        let sum: f64 = v.iter().sum();
        for (k, &a) in holders.iter().enumerate() {
            idx[a] += if sum > 0.0 {
                v[k] / sum
            } else {
                1.0 / holders.len() as f64
            };
        }
    }
    idx
}

/// Evaluates `plan` on `mix`.
pub fn evaluate(mix: &Mix, plan: &Plan, cfg: &ModelConfig) -> Result<Evaluation, ProfileError> {
    let rules = MaskRules {
        ways: mix.ways as u32,
        min_bits: 1,
        sparse_allowed: true,
    };
    plan.validate(mix.len(), &rules)?;
    cfg.check()?;
    let frac = effective_ways(mix, plan);
    let cluster_of = plan.cluster_of(mix.len());
    let mut slowdown = Vec::with_capacity(mix.len());
    let mut inputs = Vec::with_capacity(mix.len());
    for (a, app) in mix.apps.iter().enumerate() {
        let f = frac[a];
        let c = &app.curves;
        slowdown.push(interpolate(&c.slowdown, f));
        inputs.push(app.bw_input(f));
    }
    if cfg.bw_model == BwModel::Stalls
        && cfg.max_bw_mbps.is_some()
        && mix
            .apps
            .iter()
            .any(|a| a.stalls_total.is_none() || a.stalls_mem.is_none())
    {
        return Err(ProfileError::Invalid(
            "the stalls bandwidth model needs stalls_total and stalls_l3_miss (or stalls_ldm_pending) columns in the metrics table".into(),
        ));
    }
    let nobw = slowdown.clone();
    bandwidth::apply(cfg.bw_model, cfg.max_bw_mbps, &inputs, &mut slowdown);
    let ipc_alone: Vec<f64> = mix
        .apps
        .iter()
        .map(|a| *a.curves.ipc.last().unwrap_or(&1.0))
        .collect();
    let metrics = MixMetrics::compute(&slowdown, &ipc_alone);
    check_finite(mix, &frac, &nobw, &slowdown, &inputs, &metrics)?;
    let apps = mix
        .apps
        .iter()
        .enumerate()
        .map(|(a, app)| {
            let ci = cluster_of[a].expect("validated");
            let mask = plan.clusters[ci].mask;
            AppOutcome {
                app: a,
                name: app.name.clone(),
                cluster: ci,
                mask,
                cluster_ways: mask.count(),
                effective_ways: frac[a],
                slowdown_nobw: nobw[a],
                slowdown: slowdown[a],
                bandwidth_mbps: inputs[a].demand,
            }
        })
        .collect();
    Ok(Evaluation { apps, metrics })
}

/// Refuses an evaluation whose numbers left the finite range (an overflow
/// on extreme table values), so that no `inf` or `NaN` is ever reported as
/// a result.
fn check_finite(
    mix: &Mix,
    frac: &[f64],
    nobw: &[f64],
    slowdown: &[f64],
    inputs: &[BwInput],
    m: &MixMetrics,
) -> Result<(), ProfileError> {
    for (a, app) in mix.apps.iter().enumerate() {
        for (what, v) in [
            ("effective ways", frac[a]),
            ("bandwidth", inputs[a].demand),
            ("slowdown without the bandwidth model", nobw[a]),
            ("slowdown", slowdown[a]),
        ] {
            if !v.is_finite() {
                return Err(ProfileError::NotFinite {
                    what: format!("app {}: {what}", app.name),
                    value: v,
                });
            }
        }
    }
    for (what, v) in [
        ("stp", m.stp),
        ("antt", m.antt),
        ("unfairness", m.unfairness),
        ("unfairness_cov", m.unfairness_cov),
        ("unfairness_factor", m.unfairness_factor),
        ("jain", m.jain),
        ("gmean_speedup", m.gmean_speedup),
        ("gmean_ipc", m.gmean_ipc),
        ("hmean_speedup", m.hmean_speedup),
    ] {
        if !v.is_finite() {
            return Err(ProfileError::NotFinite {
                what: format!("mix {}", what),
                value: v,
            });
        }
    }
    Ok(())
}

/// For tests: app `a` (1 miss per kilo-cycle, no stall cycles at all) and
/// app `b` (30, half its cycles stalled on memory, 0.4 on L2 misses) over
/// three ways, every stall column present, under the `stalls` model at
/// 500 MB/s.
#[cfg(test)]
pub(crate) fn zero_and_half_stall_mix() -> (Mix, ModelConfig) {
    let app = |name: &str, mpkc: f64, l2_miss: f64| {
        let mut c = cachepart_machine::AppCurves::new(
            name,
            vec![1.0, 1.2, 1.3],
            vec![mpkc; 3],
            vec![mpkc; 3],
            vec![2000.0; 3],
        );
        c.stalls_l2_miss = Some(vec![l2_miss; 3]);
        c
    };
    let mut mix = Mix::from_curves(vec![app("a", 1.0, 0.0), app("b", 30.0, 0.4)]).unwrap();
    for (a, stalls) in mix.apps.iter_mut().zip([0.0, 0.5]) {
        a.stalls_total = Some(vec![stalls; 3]);
        a.stalls_mem = Some(vec![stalls / 2.0; 3]);
        a.stalls_store_buf = Some(vec![0.0; 3]);
    }
    let cfg = ModelConfig {
        bw_model: crate::bandwidth::BwModel::Stalls,
        max_bw_mbps: Some(500.0),
    };
    (mix, cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_refuses_bandwidths_that_are_not_positive_and_finite() {
        for b in [-5.0, 0.0, 5e-324, 1e-100, 0.999, f64::NAN, f64::INFINITY] {
            let cfg = ModelConfig {
                bw_model: BwModel::Simple,
                max_bw_mbps: Some(b),
            };
            let e = cfg.check().unwrap_err().to_string();
            assert!(
                e.starts_with("max-bw ") && e.contains("at least 1.0 MB/s"),
                "{e}"
            );
        }
        assert!(ModelConfig::default().check().is_ok());
        let ok = ModelConfig {
            bw_model: BwModel::Stalls,
            max_bw_mbps: Some(1.0),
        };
        assert!(ok.check().is_ok());
    }

    fn two_apps(bw: f64) -> Mix {
        let app = |name: &str, bw: f64| {
            cachepart_machine::AppCurves::new(
                name,
                vec![1.0, 1.2, 1.3],
                vec![3.0, 2.0, 1.0],
                vec![3.0, 2.0, 1.0],
                vec![bw; 3],
            )
        };
        Mix::from_curves(vec![app("a", 300.0), app("b", bw)]).unwrap()
    }

    /// Both apps sharing all three ways.
    fn shared(_mix: &Mix) -> Plan {
        Plan::from_clusters([(vec![0, 1], 3)])
    }

    /// A maximum bandwidth below the least the model takes is refused by
    /// `evaluate` itself (where before `1e-100` printed `inf` and `NaN`).
    #[test]
    fn evaluate_refuses_a_tiny_maximum() {
        let mix = two_apps(7000.0);
        for b in [1e-100, 5e-324] {
            let cfg = ModelConfig {
                bw_model: BwModel::Simple,
                max_bw_mbps: Some(b),
            };
            let e = evaluate(&mix, &shared(&mix), &cfg).unwrap_err().to_string();
            assert!(e.starts_with("max-bw ") && e.contains("at least"), "{e}");
        }
        let cfg = ModelConfig {
            bw_model: BwModel::Simple,
            max_bw_mbps: Some(MIN_MAX_BW_MBPS),
        };
        let ev = evaluate(&mix, &shared(&mix), &cfg).unwrap();
        assert!(ev
            .apps
            .iter()
            .all(|a| a.slowdown.is_finite() && a.slowdown >= a.slowdown_nobw));
    }

    /// Values so large that the model's arithmetic overflows are an error
    /// naming the quantity, never an `inf` or `NaN` result.
    #[test]
    fn an_overflow_is_an_error_not_a_result() {
        let mix = two_apps(1e308);
        for model in [BwModel::Simple, BwModel::Stalls] {
            let cfg = ModelConfig {
                bw_model: model,
                max_bw_mbps: Some(1000.0),
            };
            let mut m = mix.clone();
            for a in &mut m.apps {
                a.stalls_total = Some(vec![1.0; 3]);
                a.stalls_mem = Some(vec![0.5; 3]);
            }
            let e = evaluate(&m, &shared(&m), &cfg).unwrap_err();
            assert!(
                matches!(e, ProfileError::NotFinite { .. }),
                "{model:?}: {e}"
            );
            let e = e.to_string();
            assert!(e.contains("app b") || e.contains("mix "), "{e}");
        }
    }

    /// An app whose table has no stall cycles is not slowed by the
    /// `stalls` model, whatever share of the cache it gets: before, below
    /// one way its stall columns were read as 1e-6 each, so it looked
    /// entirely memory-bound (a 36x slowdown on PBBCache's table), while
    /// at one way or more it got factor 1.
    #[test]
    fn zero_stalls_stay_zero_below_one_way() {
        let (mix, cfg) = zero_and_half_stall_mix();
        let ev = evaluate(&mix, &shared(&mix), &cfg).unwrap();
        let a = &ev.apps[0];
        assert!(a.effective_ways < 1.0, "{a:?}");
        assert_eq!(a.slowdown, a.slowdown_nobw, "{a:?}");
        assert!(ev.apps[1].slowdown > ev.apps[1].slowdown_nobw, "{ev:?}");
        // the same app alone in one way: factor 1 too
        let alone = Plan::from_clusters([(vec![0], 1), (vec![1], 2)]);
        let ev = evaluate(&mix, &alone, &cfg).unwrap();
        assert_eq!(ev.apps[0].slowdown, ev.apps[0].slowdown_nobw);
    }
}
