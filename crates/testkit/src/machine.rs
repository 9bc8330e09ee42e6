//! [`FixedMachine`]: a machine that serves fixed curves and accepts any
//! plan, for policies' tests (it runs no intervals).

use cachepart_machine::{
    AppCurves, Axis, Interval, Machine, MachineError, Plan, Platform, Responder,
};

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
    fn alone_curves_on(&mut self, axis: &Axis) -> Result<&[AppCurves], MachineError> {
        match axis {
            Axis::Ways => Ok(&self.curves),
            Axis::Colors { .. } => Err(MachineError::Unsupported("colors".into())),
        }
    }
    fn apply(&mut self, _plan: &Plan) -> Result<(), MachineError> {
        Ok(())
    }
    fn run_interval(&mut self, _: Responder<'_>) -> Result<Interval, MachineError> {
        Err(MachineError::Unsupported("test machine".into()))
    }
}
