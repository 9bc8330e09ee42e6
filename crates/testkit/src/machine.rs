//! [`FixedMachine`]: a machine that serves fixed curves and accepts any
//! plan, for policies' tests (it runs no intervals).

use cachepart_machine::{AppCurves, Machine, MachineError, Plan, Platform, Sample};

/// A machine that serves fixed curves and accepts any plan.
pub struct FixedMachine {
    platform: Platform,
    curves: Vec<AppCurves>,
}

impl FixedMachine {
    /// A machine of `ways` ways (no bandwidth limit) serving `curves`.
    pub fn new(curves: Vec<AppCurves>, ways: u32) -> Self {
        FixedMachine {
            platform: Platform::with_ways("test", ways),
            curves,
        }
    }

    /// The same with a bandwidth limit.
    pub fn with_bandwidth(mut self, mbps: f64) -> Self {
        self.platform.max_bandwidth_mbps = Some(mbps);
        self
    }
}

impl Machine for FixedMachine {
    fn platform(&self) -> &Platform {
        &self.platform
    }
    fn alone_curves(&mut self) -> Result<&[AppCurves], MachineError> {
        Ok(&self.curves)
    }
    fn apply(&mut self, _plan: &Plan) -> Result<(), MachineError> {
        Ok(())
    }
    fn run_interval(&mut self) -> Result<Vec<Sample>, MachineError> {
        Err(MachineError::Unsupported("test machine".into()))
    }
}
