//! Way masks (Intel CAT capacity bitmasks) and the rules resctrl applies to them.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// A capacity bitmask over the ways of a cache: bit `i` set means way `i` may
/// be filled. Printed as resctrl prints it (lower-case hex without `0x`) by
/// `Display`, and as `0x...` by [`WayMask::to_hex`]. Serialized as its
/// `0x...` hex string (every JSON output writes masks so); deserialized
/// from such a string, bare hex as resctrl prints it, or an integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WayMask(pub u64);

impl Serialize for WayMask {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for WayMask {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = WayMask;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a way mask: a hex string (\"0x7ff\") or an integer")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<WayMask, E> {
                Ok(WayMask(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<WayMask, E> {
                u64::try_from(v)
                    .map(WayMask)
                    .map_err(|_| E::custom(format!("way mask {v} is negative")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<WayMask, E> {
                v.parse().map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// What is wrong with a way mask, in the words resctrl itself uses where it
/// has words for it.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum MaskError {
    /// The text is not a hexadecimal number.
    #[error("Non-hex character in the mask {0}")]
    NotHex(String),
    /// The text is hexadecimal but wider than 64 bits: no cache has that
    /// many ways (not a "non-hex character", which it has none of).
    #[error("The mask {0} is wider than 64 bits (a cache has at most 64 ways)")]
    TooWide(String),
    /// The mask's first run of ones is shorter than the hardware minimum
    /// (resctrl counts the first run only, as `cbm_validate` does).
    #[error("Need at least {min} bits in the mask (mask {mask} has {bits})")]
    TooFewBits {
        /// The mask, as written.
        mask: String,
        /// Length of the mask's first run of ones.
        bits: u32,
        /// Minimum bits the hardware accepts.
        min: u32,
    },
    /// The mask is not one contiguous run of ones (Intel requires it).
    #[error("The mask {0} has non-consecutive 1-bits")]
    NonContiguous(String),
    /// The mask names ways that do not exist, or is zero where the
    /// hardware needs at least one way.
    #[error("Mask out of range: {mask} on a cache of {ways} ways (cbm_mask {full})", full = WayMask::contiguous(0, *ways))]
    OutOfRange {
        /// The mask, as written.
        mask: String,
        /// Number of ways of the cache.
        ways: u32,
    },
}

/// The validation rules of a platform's way masks, as resctrl enforces them
/// (`info/L3/cbm_mask`, `min_cbm_bits`, `sparse_masks`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaskRules {
    /// Number of ways (bits of `cbm_mask`).
    pub ways: u32,
    /// Minimum number of set bits (`min_cbm_bits`).
    pub min_bits: u32,
    /// Whether non-contiguous masks are allowed (AMD: yes; Intel: no).
    pub sparse_allowed: bool,
}

impl MaskRules {
    /// Intel rules: contiguous masks of at least `min_bits` bits.
    pub fn intel(ways: u32, min_bits: u32) -> Self {
        MaskRules {
            ways,
            min_bits,
            sparse_allowed: false,
        }
    }

    /// AMD rules (`arch_has_sparse_bitmasks`, `min_cbm_bits` = 0): any
    /// mask within the ways, sparse or empty.
    pub fn amd(ways: u32) -> Self {
        MaskRules {
            ways,
            min_bits: 0,
            sparse_allowed: true,
        }
    }

    /// Checks `mask` against these rules in the order resctrl's
    /// `cbm_validate` does: out of range (above `cbm_mask`, or zero when
    /// `min_bits` > 0), then non-consecutive 1-bits (unless sparse masks
    /// are allowed), then fewer than `min_bits` in the first run of ones.
    pub fn check(&self, mask: WayMask) -> Result<(), MaskError> {
        let text = mask.to_string();
        let above = self.ways < 64 && mask.0 >> self.ways != 0;
        if above || (self.min_bits > 0 && mask.0 == 0) {
            return Err(MaskError::OutOfRange {
                mask: text,
                ways: self.ways,
            });
        }
        if !self.sparse_allowed && mask.0 != 0 && !mask.is_contiguous() {
            return Err(MaskError::NonContiguous(text));
        }
        let first_run = if mask.0 == 0 {
            0
        } else {
            (mask.0 >> mask.0.trailing_zeros()).trailing_ones()
        };
        if first_run < self.min_bits {
            return Err(MaskError::TooFewBits {
                mask: text,
                bits: first_run,
                min: self.min_bits,
            });
        }
        Ok(())
    }
}

impl WayMask {
    /// A contiguous mask of `count` ways starting at way `first`.
    pub fn contiguous(first: u32, count: u32) -> Self {
        if count == 0 {
            return WayMask(0);
        }
        let ones = if count >= 64 {
            u64::MAX
        } else {
            (1u64 << count) - 1
        };
        WayMask(ones << first)
    }

    /// Number of ways in the mask.
    pub fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// True when the set bits form one run (the empty mask is not contiguous).
    pub fn is_contiguous(self) -> bool {
        if self.0 == 0 {
            return false;
        }
        let shifted = self.0 >> self.0.trailing_zeros();
        shifted & (shifted.wrapping_add(1)) == 0
    }

    /// True when the two masks share a way.
    pub fn overlaps(self, other: WayMask) -> bool {
        self.0 & other.0 != 0
    }

    /// The mask as `0x...` (the form PBBCache prints).
    pub fn to_hex(self) -> String {
        format!("{:#x}", self.0)
    }
}

impl fmt::Display for WayMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:x}", self.0)
    }
}

impl FromStr for WayMask {
    type Err = MaskError;
    fn from_str(s: &str) -> Result<Self, MaskError> {
        let t = s.trim();
        let digits = t
            .strip_prefix("0x")
            .or_else(|| t.strip_prefix("0X"))
            .unwrap_or(t);
        // a sign, as u64::from_str_radix (and the kernel's kstrtoul) take it
        let digits = digits.strip_prefix('+').unwrap_or(digits);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(MaskError::NotHex(s.to_string()));
        }
        // Leading zeros do not widen a mask.
        let significant = digits.trim_start_matches('0');
        if significant.len() > 16 {
            return Err(MaskError::TooWide(s.to_string()));
        }
        Ok(WayMask(if significant.is_empty() {
            0
        } else {
            u64::from_str_radix(significant, 16).expect("at most 16 hex digits fit in u64")
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_writes_hex_strings_and_reads_them_or_integers() {
        let m = WayMask(0x7f0);
        assert_eq!(serde_json::to_string(&m).unwrap(), "\"0x7f0\"");
        assert_eq!(serde_json::from_str::<WayMask>("\"0x7f0\"").unwrap(), m);
        assert_eq!(serde_json::from_str::<WayMask>("\"7f0\"").unwrap(), m);
        assert_eq!(serde_json::from_str::<WayMask>("2032").unwrap(), m);
        let e = serde_json::from_str::<WayMask>("\"0xzz\"").unwrap_err();
        assert!(e.to_string().contains("Non-hex character"), "{e}");
        assert!(serde_json::from_str::<WayMask>("-1").is_err());
        assert!(serde_json::from_str::<WayMask>("1.5").is_err());
    }
    use proptest::prelude::*;

    #[test]
    fn parse_and_print() {
        let m: WayMask = "0x7f0".parse().unwrap();
        assert_eq!(m.0, 0x7f0);
        assert_eq!(m.to_string(), "7f0");
        assert_eq!(m.to_hex(), "0x7f0");
        assert!("xyz".parse::<WayMask>().is_err());
        assert!("".parse::<WayMask>().is_err());
    }

    #[test]
    fn overflow_is_too_wide_not_a_non_hex_character() {
        let e = "0x1ffffffffffffffffffff".parse::<WayMask>().unwrap_err();
        assert_eq!(e, MaskError::TooWide("0x1ffffffffffffffffffff".into()));
        assert!(e.to_string().contains("wider than 64 bits"), "{e}");
        // 17 digits, one of them not hex: still a non-hex character
        let e = "0x1fffffffffffffffg".parse::<WayMask>().unwrap_err();
        assert!(matches!(e, MaskError::NotHex(_)), "{e:?}");
        assert!(matches!("-f".parse::<WayMask>(), Err(MaskError::NotHex(_))));
        assert_eq!("+f".parse::<WayMask>().unwrap(), WayMask(0xf));
        // leading zeros do not count
        assert_eq!(
            "0x0000000000000000000ff".parse::<WayMask>().unwrap(),
            WayMask(0xff)
        );
        assert_eq!("0x00".parse::<WayMask>().unwrap(), WayMask(0));
        assert_eq!(
            "ffffffffffffffff".parse::<WayMask>().unwrap(),
            WayMask(u64::MAX)
        );
    }

    #[test]
    fn intel_rules() {
        let r = MaskRules::intel(11, 1);
        assert!(r.check(WayMask(0x7ff)).is_ok());
        assert_eq!(
            r.check(WayMask(0x5)),
            Err(MaskError::NonContiguous("5".into()))
        );
        assert!(matches!(
            r.check(WayMask(0x800)),
            Err(MaskError::OutOfRange { .. })
        ));
        assert!(matches!(
            r.check(WayMask(0)),
            Err(MaskError::OutOfRange { .. })
        ));
        let r2 = MaskRules::intel(20, 2);
        assert!(matches!(
            r2.check(WayMask(0x1)),
            Err(MaskError::TooFewBits {
                bits: 1,
                min: 2,
                ..
            })
        ));
        let amd = MaskRules {
            ways: 16,
            min_bits: 1,
            sparse_allowed: true,
        };
        assert!(amd.check(WayMask(0x5)).is_ok());
        assert!(MaskRules::amd(16).check(WayMask(0)).is_ok());
        assert!(MaskRules::amd(16).check(WayMask(0x8001)).is_ok());
        assert!(MaskRules::amd(16).check(WayMask(0x10000)).is_err());
    }

    /// The messages start with the very words of the kernel's
    /// `cbm_validate` (`info/last_cmd_status`).
    #[test]
    fn resctrl_wording() {
        let intel = MaskRules::intel(11, 2);
        let msg = |m: &str| {
            m.parse::<WayMask>()
                .and_then(|w| intel.check(w))
                .unwrap_err()
                .to_string()
        };
        assert!(msg("xyz").starts_with("Non-hex character in the mask xyz"));
        assert!(msg("0").starts_with("Mask out of range"));
        assert!(msg("fff").starts_with("Mask out of range"));
        assert_eq!(msg("0x505"), "The mask 505 has non-consecutive 1-bits");
        assert!(msg("0x10").starts_with("Need at least 2 bits in the mask"));
        // resctrl counts only the first run: a sparse mask whose first
        // run is short fails even when it has enough bits in all.
        let sparse = MaskRules {
            ways: 16,
            min_bits: 2,
            sparse_allowed: true,
        };
        assert!(matches!(
            sparse.check(WayMask(0b1110_0001)),
            Err(MaskError::TooFewBits {
                bits: 1,
                min: 2,
                ..
            })
        ));
        assert!(sparse.check(WayMask(0b1000_0011)).is_ok());
    }

    proptest! {
        #[test]
        fn contiguous_masks_are_contiguous(first in 0u32..40, count in 1u32..20) {
            let m = WayMask::contiguous(first, count);
            prop_assert!(m.is_contiguous());
            prop_assert_eq!(m.count(), count);
            prop_assert_eq!(m.0.trailing_zeros(), first);
        }

        #[test]
        fn display_roundtrips(v in any::<u64>()) {
            let m = WayMask(v);
            prop_assert_eq!(m.to_string().parse::<WayMask>().unwrap(), m);
        }
    }
}
