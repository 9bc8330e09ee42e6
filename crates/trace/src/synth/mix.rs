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
    /// Mean data accesses per instruction (0.4 by default); above 1, some
    /// instructions make several accesses.
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
        if !(a.is_finite() && a > 0.0 && a <= 64.0) {
            return Err(TraceError::Config(format!(
                "accesses-per-instr {a} outside (0, 64]"
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
        (u.ln() / (1.0 - p).ln()).floor() as u64 + 1
    }
}
