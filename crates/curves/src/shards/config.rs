//! SHARDS parameters ([`ShardsConfig`], [`Sampling`]), their defaults and
//! checks, and the sampling thresholds and hash keys they give.

use serde::{Deserialize, Serialize};

use crate::error::{CurveError, Result};
use crate::hash::mix64;

/// How lines are sampled.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Sampling {
    /// A fixed sampling rate in `(0, 1]`.
    #[serde(rename_all = "kebab-case")]
    FixedRate {
        /// Fraction of lines sampled.
        rate: f64,
    },
    /// At most `max_lines` tracked lines, lowering the rate as needed.
    #[serde(rename_all = "kebab-case")]
    FixedSize {
        /// Largest number of sampled lines tracked at once.
        max_lines: usize,
        /// Rate at the start, in `(0, 1]`.
        initial_rate: f64,
    },
}

/// SHARDS parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ShardsConfig {
    /// Fixed rate or fixed size.
    pub sampling: Sampling,
    /// Divide by the true reference count (`SHARDS_adj`); on by default.
    /// Off only for plain SHARDS (no reference sample: `exact_below_lines`
    /// 0, or an initial rate of 1): with a reference sample the estimate
    /// does not depend on it (see [`ShardsConfig::check`]).
    pub adjust: bool,
    /// Salt of the line hash: the line number is xor-ed with
    /// `mix64(salt)` before hashing, so every salt, 0, 1, 2..., samples
    /// an unrelated set of lines (0 by default). With two stages it picks
    /// the second stage's sample within the base sample.
    pub salt: u64,
    /// Salt of the base stage (rates at or below [`BASE_RATE`]): another
    /// base salt draws another base sample. A sample index serves only its
    /// own base salt; 0 by default.
    #[serde(default)]
    pub base_salt: u64,
    /// `C`: the misses of caches of at most `C` lines come from a
    /// sample of *references* (not lines), whose exact distances below `C`
    /// are found by looking back over the recent line references; the
    /// line sample gives the curve's shape above `C`
    /// ([`DEFAULT_EXACT_BELOW`] lines for fixed rate; 0, plain SHARDS, the
    /// default for fixed size).
    #[serde(default = "default_exact_below")]
    pub exact_below_lines: u32,
    /// The reference sample's rate as a fraction of the line sample's
    /// (initial) rate, in `(0, 1]` ([`DEFAULT_REFERENCE_FRACTION`] by
    /// default). At line rate 1 there is no reference sample: the line
    /// sample is exact.
    #[serde(default = "default_reference_fraction")]
    pub reference_fraction: f64,
}

/// The default [`ShardsConfig::reference_fraction`]: a tenth, so that at
/// `R = 0.01` one reference in a thousand is looked back for.
pub const DEFAULT_REFERENCE_FRACTION: f64 = 0.1;

fn default_reference_fraction() -> f64 {
    DEFAULT_REFERENCE_FRACTION
}

/// The default [`ShardsConfig::exact_below_lines`] of fixed-rate sampling:
/// 256 lines (16 KiB of 64-byte lines), above SHARDS' resolution of
/// `1 / R` lines at `R = 0.01`.
pub const DEFAULT_EXACT_BELOW: u32 = 256;

/// Largest [`ShardsConfig::exact_below_lines`].
pub const MAX_EXACT_BELOW: u32 = 1 << 16;

/// The base sample's line rate: fixed-rate sampling at or below it (or
/// fixed-size sampling from an initial rate at or below it) samples lines
/// in two stages, the first of which a [`crate::ShardsIndex`] stores.
pub const BASE_RATE: f64 = 1.0 / 32.0;

/// The base sample's reference-sample rate: reference samples at rates
/// (line rate times [`ShardsConfig::reference_fraction`]) at or below it
/// are drawn in two stages.
pub const BASE_REF_RATE: f64 = BASE_RATE / 10.0;

/// Tag of the base stage's line hash.
const BASE_SALT: u64 = 0x4241_5345_4c49_4e45;
/// Tag of the base stage's record hash.
const BASE_REF_SALT: u64 = 0x4241_5345_5245_4653;

/// The key xor-ed into line numbers for a (second-stage) salt.
pub(crate) fn line_key(salt: u64) -> u64 {
    mix64(salt)
}

/// The base stage's keys (lines, records) for a base salt.
pub(crate) fn base_keys(base_salt: u64) -> (u64, u64) {
    (
        mix64(base_salt ^ BASE_SALT),
        mix64(base_salt ^ BASE_REF_SALT),
    )
}

fn default_exact_below() -> u32 {
    DEFAULT_EXACT_BELOW
}

impl ShardsConfig {
    /// Fixed-rate sampling at `rate`, adjusted, salt 0.
    pub fn fixed_rate(rate: f64) -> Self {
        ShardsConfig {
            sampling: Sampling::FixedRate { rate },
            adjust: true,
            salt: 0,
            base_salt: 0,
            exact_below_lines: DEFAULT_EXACT_BELOW,
            reference_fraction: DEFAULT_REFERENCE_FRACTION,
        }
    }

    /// Fixed-size sampling of at most `max_lines` lines from rate 1,
    /// adjusted, salt 0, plain (no reference sample: at its initial rate
    /// of 1 it would look back for every reference).
    pub fn fixed_size(max_lines: usize) -> Self {
        ShardsConfig {
            sampling: Sampling::FixedSize {
                max_lines,
                initial_rate: 1.0,
            },
            adjust: true,
            salt: 0,
            base_salt: 0,
            exact_below_lines: 0,
            reference_fraction: DEFAULT_REFERENCE_FRACTION,
        }
    }

    /// The same configuration with another salt.
    pub fn with_salt(mut self, salt: u64) -> Self {
        self.salt = salt;
        self
    }

    /// The same configuration with another base salt.
    pub fn with_base_salt(mut self, base_salt: u64) -> Self {
        self.base_salt = base_salt;
        self
    }

    /// The same configuration with another reference-sample fraction.
    pub fn with_reference_fraction(mut self, fraction: f64) -> Self {
        self.reference_fraction = fraction;
        self
    }

    /// The same configuration with exact distances below `lines` lines
    /// (0: plain SHARDS).
    pub fn with_exact_below(mut self, lines: u32) -> Self {
        self.exact_below_lines = lines;
        self
    }

    /// The same configuration with the adjustment on or off.
    pub fn with_adjust(mut self, yes: bool) -> Self {
        self.adjust = yes;
        self
    }

    /// Checks the parameters: rates in `(0, 1]`, a positive `max_lines`,
    /// `exact_below_lines` at most [`MAX_EXACT_BELOW`], and `adjust` off
    /// only without a reference sample. With one, the miss ratios up to
    /// `C` lines are its own counts' ratios and the line sample's curve
    /// above `C` is scaled to agree with them at `C`, so the scale that
    /// `adjust` sets cancels: turning it off would change nothing.
    pub fn check(&self) -> Result<()> {
        let (rate, max) = match self.sampling {
            Sampling::FixedRate { rate } => (rate, usize::MAX),
            Sampling::FixedSize {
                max_lines,
                initial_rate,
            } => (initial_rate, max_lines),
        };
        if !(rate > 0.0 && rate <= 1.0) {
            return Err(CurveError::Sampling(format!(
                "rate {rate}: expected 0 < rate <= 1"
            )));
        }
        if max == 0 {
            return Err(CurveError::Sampling("max-lines must be positive".into()));
        }
        let f = self.reference_fraction;
        if !(f > 0.0 && f <= 1.0) {
            return Err(CurveError::Sampling(format!(
                "reference-fraction {f}: expected 0 < fraction <= 1"
            )));
        }
        if self.exact_below_lines > MAX_EXACT_BELOW {
            return Err(CurveError::Sampling(format!(
                "exact-below-lines {}: expected at most {MAX_EXACT_BELOW}",
                self.exact_below_lines
            )));
        }
        if !self.adjust && self.exact_below_lines > 0 && rate < 1.0 {
            return Err(CurveError::Sampling(format!(
                "adjust = false (no SHARDS_adj) is for plain SHARDS (exact-below-lines 0, or \
                 rate 1); with exact-below-lines {C} the miss ratios up to {C} lines come from \
                 the reference sample and the larger ones are scaled to agree with them at {C}, \
                 so the adjustment cancels and turning it off would change nothing",
                C = self.exact_below_lines
            )));
        }
        Ok(())
    }
}

/// The largest hash sampled at `rate`.
pub(crate) fn threshold(rate: f64) -> u64 {
    if rate >= 1.0 {
        u64::MAX
    } else {
        ((rate * 2f64.powi(64)) as u64).saturating_sub(1)
    }
}

/// The rate of a threshold (hashes `0..=t` are sampled).
pub(crate) fn rate_of(t: u64) -> f64 {
    (t as f64 + 1.0) / 2f64.powi(64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Options;
    use crate::shards::Shards;

    #[test]
    fn config_defaults_and_checks() {
        let cfg: ShardsConfig = serde_json::from_str(
            r#"{"sampling": {"mode": "fixed-rate", "rate": 0.01}, "adjust": true, "salt": 3}"#,
        )
        .unwrap();
        assert_eq!(cfg, ShardsConfig::fixed_rate(0.01).with_salt(3));
        assert_eq!(cfg.exact_below_lines, DEFAULT_EXACT_BELOW);
        assert_eq!(ShardsConfig::fixed_size(10).exact_below_lines, 0);
        let too_big = ShardsConfig::fixed_rate(0.01).with_exact_below(MAX_EXACT_BELOW + 1);
        assert!(Shards::new(&Options::default(), &too_big).is_err());
        let bad = ShardsConfig::fixed_rate(0.01).with_reference_fraction(0.0);
        assert!(Shards::new(&Options::default(), &bad).is_err());
        assert_eq!(cfg.reference_fraction, DEFAULT_REFERENCE_FRACTION);
    }

    #[test]
    fn no_adjust_is_for_plain_shards() {
        // With the reference sample the adjustment cancels: refused,
        // rather than silently ignored.
        let spliced = ShardsConfig::fixed_rate(0.01).with_adjust(false);
        let e = spliced.check().unwrap_err().to_string();
        assert!(
            e.contains("adjust = false") && e.contains("exact-below-lines 256"),
            "{e}"
        );
        assert!(Shards::new(&Options::default(), &spliced).is_err());
        assert!(spliced.with_exact_below(0).check().is_ok());
        // Fixed size from rate 1 has no reference sample.
        let plain = ShardsConfig {
            exact_below_lines: 256,
            ..ShardsConfig::fixed_size(100).with_adjust(false)
        };
        assert!(plain.check().is_ok());
    }
}
