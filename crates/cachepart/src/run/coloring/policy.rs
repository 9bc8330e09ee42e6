//! The color policies by name ([`ColorPolicy`]): `coloris-static`,
//! `coloris-dynamic`, `tam-static`, and the allocator each uses by
//! default.

use cachepart_sim::memory::AllocatorKind;
#[cfg(test)]
use cachepart_units::Kind as _;
use serde::Serialize;

/// The color policies.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Serialize,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
    strum::VariantNames,
    strum::EnumMessage,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum ColorPolicy {
    /// COLORIS's per-core sections, fixed.
    ColorisStatic,
    /// COLORIS's sections and Cache Utilization Monitor (Algorithm 1).
    ColorisDynamic,
    /// Tam et al.'s sizing from alone curves.
    TamStatic,
}

impl ColorPolicy {
    /// The allocator the policy uses by default.
    pub fn allocator(self) -> AllocatorKind {
        match self {
            ColorPolicy::TamStatic => AllocatorKind::Tam,
            _ => AllocatorKind::Coloris,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_color_policy_is_found_by_its_name() {
        for p in ColorPolicy::all() {
            assert_eq!(ColorPolicy::from_name(p.name()), Some(p));
        }
        assert_eq!(ColorPolicy::from_name("coloris"), None);
        assert_eq!(
            ColorPolicy::from_name("tam-static").map(ColorPolicy::allocator),
            Some(AllocatorKind::Tam)
        );
    }
}
