//! [`ScriptedMachine`]: a machine for testing online controllers. Each
//! app follows a script of phases (from an interval on, a [`Behaviour`]);
//! each interval's sample is computed from the ways the plan in force
//! gives the app (its cluster's ways, split evenly among the apps in it),
//! so a controller's plans change what it measures.

use cachepart_machine::{
    AppCurves, AppEvent, Axis, EventKind, Interval, Machine, MachineError, Plan, Platform,
    Responder, Sample,
};

/// Cycles of one interval.
pub const INTERVAL_CYCLES: f64 = 1e6;
/// Bytes of one LLC way (reported occupancy is effective ways times this).
pub const WAY_BYTES: f64 = 1024.0 * 1024.0;

/// How an app behaves in a phase.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Behaviour {
    /// Fits in its private caches: IPC 1, 0.5 LLC misses per kilo-cycle,
    /// a 2% miss rate, 2% of cycles stalled.
    Light,
    /// Streams: IPC 0.5 whatever its ways, 30 misses per kilo-cycle, 95%
    /// miss rate, half its cycles stalled.
    Streaming,
    /// Cache-sensitive: IPC `0.2 + 0.1 min(ways, 6)` (it stops growing at
    /// 6 ways), `max(25 - 4 ways, 1)` misses per kilo-cycle, 50% miss rate,
    /// 30% stalled.
    Sensitive,
}

/// A machine whose apps follow `phases[app]`: (first interval, behaviour),
/// sorted by interval. Every app starts at interval 0 and never finishes.
pub struct ScriptedMachine {
    platform: Platform,
    phases: Vec<Vec<(u64, Behaviour)>>,
    plan: Plan,
    index: u64,
}

impl ScriptedMachine {
    /// A machine with `ways` LLC ways running the scripted apps.
    pub fn new(ways: u32, phases: Vec<Vec<(u64, Behaviour)>>) -> ScriptedMachine {
        let n = phases.len();
        ScriptedMachine {
            platform: Platform::with_ways("scripted", ways),
            phases,
            plan: Plan::shared_all(n, ways),
            index: 0,
        }
    }

    /// The plan in force.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    fn behaviour(&self, app: usize) -> Behaviour {
        self.phases[app]
            .iter()
            .rev()
            .find(|(from, _)| *from <= self.index)
            .map_or(Behaviour::Light, |p| p.1)
    }

    /// The ways an app effectively holds: its cluster's, split evenly.
    pub fn ways_of(&self, app: usize) -> f64 {
        self.plan
            .clusters
            .iter()
            .find(|c| c.apps.contains(&app))
            .map_or(0.0, |c| f64::from(c.mask.count()) / c.apps.len() as f64)
    }

    fn sample(&self, app: usize) -> Sample {
        let e = self.ways_of(app);
        let (ipc, mpkc, miss_rate, stall) = match self.behaviour(app) {
            Behaviour::Light => (1.0, 0.5, 0.02, 0.02),
            Behaviour::Streaming => (0.5, 30.0, 0.95, 0.5),
            Behaviour::Sensitive => (0.2 + 0.1 * e.min(6.0), (25.0 - 4.0 * e).max(1.0), 0.5, 0.3),
        };
        let misses = mpkc * INTERVAL_CYCLES / 1000.0;
        Sample {
            app,
            instructions: ipc * INTERVAL_CYCLES,
            cycles: INTERVAL_CYCLES,
            llc_references: misses / miss_rate,
            llc_misses: misses,
            l2_miss_stall_cycles: stall * INTERVAL_CYCLES,
            llc_occupancy_bytes: e * WAY_BYTES,
            ran: true,
            ..Sample::default()
        }
    }
}

impl Machine for ScriptedMachine {
    fn platform(&self) -> &Platform {
        &self.platform
    }
    fn alone_curves_on(&mut self, _: &Axis) -> Result<&[AppCurves], MachineError> {
        Err(MachineError::Unsupported(
            "a scripted machine has no alone curves".into(),
        ))
    }
    fn apply(&mut self, plan: &Plan) -> Result<(), MachineError> {
        plan.validate(self.phases.len(), &self.platform.mask_rules)
            .map_err(|e| MachineError::Unsupported(e.to_string()))?;
        self.plan = plan.clone();
        Ok(())
    }
    fn run_interval(&mut self, _: Responder<'_>) -> Result<Interval, MachineError> {
        let samples = (0..self.phases.len()).map(|a| self.sample(a)).collect();
        let events = if self.index == 0 {
            (0..self.phases.len())
                .map(|app| AppEvent {
                    app,
                    kind: EventKind::Started,
                    at_cycles: 0,
                    core: None,
                })
                .collect()
        } else {
            Vec::new()
        };
        self.index += 1;
        Ok(Interval {
            index: self.index - 1,
            end_cycles: self.index * INTERVAL_CYCLES as u64,
            samples,
            events,
        })
    }
}
