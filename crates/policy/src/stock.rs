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
        let n = machine.app_count()?;
        if n == 0 {
            return Err(PolicyError::EmptyMix);
        }
        Ok(Plan::shared_all(n, ways))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_machine::{AppCurves, Axis, Interval, MachineError, Platform, Responder};

    /// A machine that knows its mix but refuses to measure: its alone
    /// curves would cost one alone run per way count on the simulator.
    struct Unmeasured(Platform);

    impl Machine for Unmeasured {
        fn platform(&self) -> &Platform {
            &self.0
        }
        fn app_count(&mut self) -> Result<usize, MachineError> {
            Ok(3)
        }
        fn alone_curves_on(&mut self, _: &Axis) -> Result<&[AppCurves], MachineError> {
            Err(MachineError::Unsupported("alone curves".into()))
        }
        fn apply(&mut self, _: &Plan) -> Result<(), MachineError> {
            Ok(())
        }
        fn run_interval(&mut self, _: Responder<'_>) -> Result<Interval, MachineError> {
            Err(MachineError::Unsupported("intervals".into()))
        }
    }

    #[test]
    fn stock_needs_only_the_app_count() {
        let mut m = Unmeasured(Platform::with_ways("test", 11));
        let plan = Stock.decide(&mut m).unwrap();
        assert_eq!(plan, Plan::shared_all(3, 11));
        let plan = crate::EqualPart.decide(&mut m).unwrap();
        assert_eq!(plan.clusters.len(), 3);
    }
}
