//! The platform a machine models: LLC ways, mask rules and memory bandwidth.

use cachepart_units::MaskRules;
use serde::{Deserialize, Serialize};

/// What a policy may know of the hardware.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Platform {
    /// A short name (`skylake-11w`).
    pub name: String,
    /// Number of LLC ways that masks range over.
    pub ways: u32,
    /// Rules way masks must follow.
    pub mask_rules: MaskRules,
    /// Maximum memory bandwidth in MB/s; `None` disables bandwidth models.
    pub max_bandwidth_mbps: Option<f64>,
}

impl Platform {
    /// A platform with `ways` ways, Intel mask rules (1 bit minimum) and no
    /// bandwidth limit.
    pub fn with_ways(name: &str, ways: u32) -> Self {
        Platform {
            name: name.to_string(),
            ways,
            mask_rules: MaskRules::intel(ways, 1),
            max_bandwidth_mbps: None,
        }
    }
}
