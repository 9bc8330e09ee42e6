//! `whirlpool` and `whirlpool-c`: no partitioning, with the split of the
//! shared cache estimated from MPKI (Whirlpool) or MPKC (Whirlpool-C).
//! On machines that measure rather than estimate, both equal `stock`.

use crate::{Policy, PolicyError};
use cachepart_machine::{Machine, Plan, ShareModel};

/// Unpartitioned sharing with a chosen estimate of the split.
#[derive(Clone, Debug)]
pub struct Whirlpool {
    /// The curve the split is estimated from.
    pub share_model: ShareModel,
}

impl Policy for Whirlpool {
    fn name(&self) -> &str {
        match self.share_model {
            ShareModel::Llcmpki => "whirlpool",
            ShareModel::Llcmpkc => "whirlpool-c",
        }
    }

    fn decide(&mut self, machine: &mut dyn Machine) -> Result<Plan, PolicyError> {
        let ways = machine.platform().ways;
        let n = machine.app_count()?;
        if n == 0 {
            return Err(PolicyError::EmptyMix);
        }
        let mut plan = Plan::shared_all(n, ways);
        plan.share_model = self.share_model;
        Ok(plan)
    }
}
