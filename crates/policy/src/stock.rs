//! `stock`: no partitioning; every app may fill every way.

use crate::{Policy, PolicyError};
use cachepart_machine::{Machine, Plan};

/// No partitioning (the stock Linux kernel).
#[derive(Clone, Debug, Default)]
pub struct Stock;

impl Policy for Stock {
    fn name(&self) -> &str {
        "stock"
    }

    fn decide(&mut self, machine: &mut dyn Machine) -> Result<Plan, PolicyError> {
        let ways = machine.platform().ways;
        let n = machine.alone_curves()?.len();
        if n == 0 {
            return Err(PolicyError::EmptyMix);
        }
        Ok(Plan::shared_all(n, ways))
    }
}
