//! resctrl's sharing modes between control groups: a group in
//! `exclusive` mode owns its ways, so no other group's mask may overlap
//! them.
//!
//! [`check_exclusive`] checks a whole set of groups the way resctrl checks
//! each schemata write against the groups already there (`parse_cbm`):
//! a mask that overlaps an exclusive group fails with "Overlaps with
//! exclusive group"; an exclusive group whose mask overlaps any other
//! group fails with "Overlaps with other group". Groups are checked in
//! order, each against those before it, and the error names both.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::waymask::WayMask;

/// A control group's sharing mode (resctrl's `mode` file).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GroupMode {
    /// Ways may be shared with other groups (resctrl's default).
    #[default]
    Shareable,
    /// No other group may use these ways.
    Exclusive,
}

/// Two groups whose masks overlap where one of them is exclusive.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum OverlapError {
    /// `group`'s mask overlaps the exclusive group `other`.
    #[error("Overlaps with exclusive group: {group} (mask {mask}) and exclusive {other} (mask {other_mask}) share ways {shared}")]
    WithExclusive {
        /// The group being checked.
        group: String,
        /// Its mask.
        mask: WayMask,
        /// The exclusive group it overlaps.
        other: String,
        /// That group's mask.
        other_mask: WayMask,
        /// The ways both masks hold.
        shared: WayMask,
    },
    /// The exclusive `group`'s mask overlaps the (shareable) `other`.
    #[error("Overlaps with other group: exclusive {group} (mask {mask}) and {other} (mask {other_mask}) share ways {shared}")]
    WithOther {
        /// The exclusive group being checked.
        group: String,
        /// Its mask.
        mask: WayMask,
        /// The group it overlaps.
        other: String,
        /// That group's mask.
        other_mask: WayMask,
        /// The ways both masks hold.
        shared: WayMask,
    },
}

/// Checks that no mask overlaps an exclusive group's. `groups` are
/// (name, mask, mode), checked in order, each against the ones before it.
pub fn check_exclusive(groups: &[(&str, WayMask, GroupMode)]) -> Result<(), OverlapError> {
    for (i, &(name, mask, mode)) in groups.iter().enumerate() {
        for &(other, other_mask, other_mode) in &groups[..i] {
            let shared = WayMask(mask.0 & other_mask.0);
            if shared.0 == 0 {
                continue;
            }
            let (group, other) = (name.to_string(), other.to_string());
            if other_mode == GroupMode::Exclusive {
                return Err(OverlapError::WithExclusive {
                    group,
                    mask,
                    other,
                    other_mask,
                    shared,
                });
            }
            if mode == GroupMode::Exclusive {
                return Err(OverlapError::WithOther {
                    group,
                    mask,
                    other,
                    other_mask,
                    shared,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use GroupMode::{Exclusive, Shareable};

    #[test]
    fn exclusive_groups_own_their_ways() {
        let ok = [
            ("p0", WayMask(0x3), Exclusive),
            ("p1", WayMask(0xfc), Shareable),
            ("p2", WayMask(0xf0), Shareable),
        ];
        assert!(check_exclusive(&ok).is_ok());
        let e = check_exclusive(&[
            ("p0", WayMask(0x3), Exclusive),
            ("p1", WayMask(0x1), Shareable),
        ])
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Overlaps with exclusive group: p1 (mask 1) and exclusive p0 (mask 3) share ways 1"
        );
        let e = check_exclusive(&[
            ("default", WayMask(0xff), Shareable),
            ("p0", WayMask(0x3), Exclusive),
        ])
        .unwrap_err();
        assert!(e.to_string().starts_with("Overlaps with other group"));
        assert!(e.to_string().contains("p0") && e.to_string().contains("default"));
        // Two shareable groups may overlap.
        assert!(check_exclusive(&[
            ("a", WayMask(0xff), Shareable),
            ("b", WayMask(0xff), Shareable)
        ])
        .is_ok());
    }
}
