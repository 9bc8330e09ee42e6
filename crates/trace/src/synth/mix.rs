//! The instruction mix of a synthetic generator: which data accesses are
//! stores, and how many instructions pass between accesses.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{Result, TraceError};
use crate::record::Kind;

/// Loads versus stores and data accesses per instruction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct InstructionMix {
    /// Mean data accesses per instruction (0.4 by default), from
    /// [`MIN_ACCESSES_PER_INSTR`] to 64; above 1, some instructions make
    /// several accesses.
    #[serde(default = "default_api")]
    pub accesses_per_instr: f64,
    /// Fraction of accesses that are stores (0.3 by default).
    #[serde(default = "default_stores")]
    pub store_fraction: f64,
    /// Marks the loads of pointer-chase patterns as dependent
    /// ([`Kind::DepLoad`]: each needs the previous load's data); off by
    /// default, so that traces generated before the hint existed stay
    /// byte-identical (the key is left out of the recorded configuration
    /// when off).
    #[serde(default, skip_serializing_if = "is_false")]
    pub dependency_hints: bool,
}

/// The lowest `accesses-per-instr` accepted: one access per 10^12
/// instructions on average. Every gap then fits one `InstrGap` escape
/// (a draw is at most about 37 times the mean, under 2^48), and no real
/// program is sparser.
pub const MIN_ACCESSES_PER_INSTR: f64 = 1e-12;

/// Below this rate a gap is drawn with `ln_1p(-p)`: `(1 - p).ln()` loses
/// `p`'s digits (and is 0 below about 1.1e-16). At and above it the
/// original formula is kept, so that traces of ordinary rates stay
/// byte-identical.
const PRECISE_BELOW: f64 = 1e-6;

fn is_false(v: &bool) -> bool {
    !*v
}

fn default_api() -> f64 {
    0.4
}
fn default_stores() -> f64 {
    0.3
}

impl Default for InstructionMix {
    fn default() -> Self {
        InstructionMix {
            accesses_per_instr: default_api(),
            store_fraction: default_stores(),
            dependency_hints: false,
        }
    }
}

impl InstructionMix {
    pub(crate) fn check(&self) -> Result<()> {
        let a = self.accesses_per_instr;
        if !(a.is_finite() && (MIN_ACCESSES_PER_INSTR..=64.0).contains(&a)) {
            // tiny rates in scientific notation, not forty digits
            let shown = if a != 0.0 && a.abs() < 1e-4 {
                format!("{a:e}")
            } else {
                a.to_string()
            };
            return Err(TraceError::Config(format!(
                "accesses-per-instr {shown} outside [{MIN_ACCESSES_PER_INSTR:e}, 64]"
            )));
        }
        let s = self.store_fraction;
        if !(0.0..=1.0).contains(&s) {
            return Err(TraceError::Config(format!(
                "store-fraction {s} outside [0, 1]"
            )));
        }
        Ok(())
    }

    /// Load or store.
    #[inline]
    pub(crate) fn kind(&self, rng: &mut ChaCha8Rng) -> Kind {
        if rng.gen::<f64>() < self.store_fraction {
            Kind::Store
        } else {
            Kind::Load
        }
    }

    /// Instructions retired since the previous access, counting the one
    /// that makes this access when it is a new instruction; the mean is
    /// `1 / accesses_per_instr`.
    #[inline]
    pub(crate) fn gap(&self, rng: &mut ChaCha8Rng) -> u64 {
        let p = self.accesses_per_instr;
        if p > 1.0 && rng.gen::<f64>() >= 1.0 / p {
            return 0; // another access of the same instruction
        }
        if p >= 1.0 {
            return 1;
        }
        // Trials until the first access-making instruction (geometric).
        let u = 1.0 - rng.gen::<f64>(); // in (0, 1]
        let miss = if p < PRECISE_BELOW {
            (-p).ln_1p()
        } else {
            (1.0 - p).ln()
        };
        ((u.ln() / miss).floor() as u64).saturating_add(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn mean_gap(p: f64, n: u32) -> f64 {
        let mix = InstructionMix {
            accesses_per_instr: p,
            ..InstructionMix::default()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        (0..n).map(|_| mix.gap(&mut rng) as f64).sum::<f64>() / f64::from(n)
    }

    #[test]
    fn tiny_rates_give_their_mean_gap() {
        // (1 - p).ln() was 0 below about 1.1e-16 (every gap 1) and a few
        // percent off near 1e-14 (both below the accepted range now)
        for p in [0.4, 1e-6, 1e-9, 1e-12, 1e-14, 1e-17] {
            let m = mean_gap(p, 20_000) * p;
            assert!((0.95..1.05).contains(&m), "p {p}: mean gap x p = {m}");
        }
    }

    #[test]
    fn rates_below_the_least_are_refused() {
        for p in [1e-13, 1e-17, 1e-300, 0.0, -1.0, 65.0, f64::NAN] {
            let mix = InstructionMix {
                accesses_per_instr: p,
                ..InstructionMix::default()
            };
            let err = mix.check().unwrap_err().to_string();
            assert!(err.contains("outside [1e-12, 64]"), "{err}");
            if p == 1e-17 {
                assert!(err.contains("accesses-per-instr 1e-17 outside"), "{err}");
            }
        }
    }
}
