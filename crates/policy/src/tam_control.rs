//! Tam et al.'s static page-color sizing (WIOSCA'07) as a controller:
//! when started it measures each app alone over color counts (the
//! machine's alone curves on [`Axis::Colors`]), interpolates each app's
//! miss-rate or stall-rate curve between the measured counts, splits the
//! colors with [`size_partitions`] and gives the apps contiguous color
//! ranges in mix order. It never changes them.
//!
//! The sweep measures every `step`-th count from 1 up to
//! `colors - (apps - 1)` (each other app needs a color) and that largest
//! count ([`sweep_counts`]); values in between are linear
//! ([`interpolate_counts`]).

use cachepart_machine::{Action, Axis, Machine, Plan};
use cachepart_units::IdSet;
use serde::{Deserialize, Serialize};

use crate::controller::Controller;
use crate::error::PolicyError;
use crate::tam_sizing::size_partitions;

/// The curve Tam's sizing minimises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TamCurve {
    /// LLC misses per kilo-instruction (MRC).
    MissRate,
    /// Memory-stall cycles per billion cycles (SRC).
    StallRate,
}

/// The color counts measured: every `step`-th from 1, and `max`.
pub fn sweep_counts(max: u32, step: u32) -> Vec<u32> {
    let mut v: Vec<u32> = (1..=max).step_by(step.max(1) as usize).collect();
    if v.last() != Some(&max) {
        v.push(max);
    }
    v
}

/// Values at `1..=max` from values `pts` at `counts` (increasing, first
/// 1, last `max`), linear in between.
pub fn interpolate_counts(counts: &[u32], pts: &[f64], max: u32) -> Vec<f64> {
    (1..=max)
        .map(|k| {
            let j = counts.partition_point(|&s| s < k);
            match (counts.get(j), j.checked_sub(1)) {
                (Some(&s), _) if s == k => pts[j],
                (Some(&s1), Some(i)) => {
                    let s0 = counts[i];
                    let f = f64::from(k - s0) / f64::from(s1 - s0);
                    pts[i] + f * (pts[j] - pts[i])
                }
                _ => pts.last().copied().unwrap_or(0.0),
            }
        })
        .collect()
}

/// Tam's static sizing on the controller loop.
pub struct TamStatic {
    curve: TamCurve,
    colors: u32,
    apps: usize,
    step: u32,
    curves: Vec<Vec<f64>>,
    initial: Vec<IdSet>,
}

impl TamStatic {
    /// Sizes `apps` apps over `colors` colors on `curve`, measuring every
    /// `step`-th color count.
    pub fn new(curve: TamCurve, colors: u32, apps: usize, step: u32) -> Result<Self, PolicyError> {
        let bad = |name: &str, value: String, expected: String| PolicyError::BadParameter {
            policy: "tam-static".into(),
            name: name.into(),
            value,
            expected,
        };
        if apps == 0 {
            return Err(PolicyError::EmptyMix);
        }
        if apps as u64 > u64::from(colors) {
            return Err(bad(
                "colors",
                colors.to_string(),
                format!("a color per app ({apps} apps)"),
            ));
        }
        if step == 0 || step > colors {
            return Err(bad("sweep-step", step.to_string(), format!("1..={colors}")));
        }
        Ok(TamStatic {
            curve,
            colors,
            apps,
            step,
            curves: Vec::new(),
            initial: Vec::new(),
        })
    }

    /// Each app's curve over `1..=colors - (apps - 1)` colors (after the
    /// start).
    pub fn curves(&self) -> &[Vec<f64>] {
        &self.curves
    }

    /// Each app's colors (after the start).
    pub fn initial(&self) -> &[IdSet] {
        &self.initial
    }
}

impl Controller for TamStatic {
    fn name(&self) -> &str {
        "tam-static"
    }

    fn start(&mut self, machine: &mut dyn Machine) -> Result<Vec<Action>, PolicyError> {
        let max = self.colors - (self.apps as u32 - 1);
        let counts = sweep_counts(max, self.step);
        let axis = Axis::Colors {
            counts: counts.clone(),
        };
        let alone = machine.alone_curves_on(&axis)?;
        if alone.len() != self.apps {
            return Err(PolicyError::MissingData {
                policy: "tam-static".into(),
                what: format!(
                    "alone curves of its {} apps (the machine has {})",
                    self.apps,
                    alone.len()
                ),
            });
        }
        let mut curves = Vec::with_capacity(self.apps);
        for c in alone {
            let pts: Vec<f64> = match self.curve {
                TamCurve::MissRate => c.llcmpki.clone(),
                TamCurve::StallRate => c
                    .stalls_memory
                    .as_ref()
                    .ok_or_else(|| PolicyError::MissingData {
                        policy: "tam-static".into(),
                        what: "memory-stall fractions alone (a stall-rate curve)".into(),
                    })?
                    .iter()
                    .map(|f| f * 1e9)
                    .collect(),
            };
            curves.push(interpolate_counts(&counts, &pts, max));
        }
        let sizes = size_partitions(&curves, self.colors, 1)?;
        let mut next = 0u32;
        self.initial = sizes
            .into_iter()
            .map(|s| {
                let set: IdSet = (next..next + s).collect();
                next += s;
                set
            })
            .collect();
        self.curves = curves;
        Ok(vec![Action::Apply(Plan::from_colors(self.initial.clone()))])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_and_interpolation() {
        assert_eq!(sweep_counts(10, 4), vec![1, 5, 9, 10]);
        assert_eq!(sweep_counts(3, 1), vec![1, 2, 3]);
        let v = interpolate_counts(&[1, 5, 9, 10], &[10.0, 6.0, 2.0, 1.0], 10);
        assert_eq!(v, vec![10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]);
    }

    #[test]
    fn bad_parameters() {
        assert!(TamStatic::new(TamCurve::MissRate, 2, 3, 1).is_err());
        assert!(TamStatic::new(TamCurve::MissRate, 8, 3, 0).is_err());
        assert!(TamStatic::new(TamCurve::MissRate, 8, 0, 1).is_err());
        assert!(TamStatic::new(TamCurve::StallRate, 8, 3, 8).is_ok());
    }
}
