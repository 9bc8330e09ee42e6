//! [`ProfileMachine`]: the table-driven model behind the machine interface.

use crate::error::ProfileError;
use crate::mix::Mix;
use crate::model::{evaluate, Evaluation, ModelConfig};
use cachepart_machine::share::interpolate;
use cachepart_machine::{
    AppCurves, Axis, Interval, Machine, MachineError, Plan, Platform, Responder, Sample,
};

/// Cycles in one interval of [`ProfileMachine::run_interval`] (1 s at 1 GHz).
pub const INTERVAL_CYCLES: f64 = 1e9;

/// A mix run on the analytical model. Intervals are steady-state: every
/// interval under the same plan gives the same sample.
#[derive(Clone, Debug)]
pub struct ProfileMachine {
    platform: Platform,
    mix: Mix,
    config: ModelConfig,
    curves: Vec<AppCurves>,
    plan: Plan,
    intervals: u64,
}

impl ProfileMachine {
    /// A machine for `mix`; the plan starts as no partitioning (all apps share
    /// all ways).
    pub fn new(mix: Mix, config: ModelConfig) -> ProfileMachine {
        let ways = mix.ways as u32;
        let mut platform = Platform::with_ways("profile", ways);
        platform.max_bandwidth_mbps = config.max_bw_mbps;
        let curves = mix.apps.iter().map(|a| a.curves.clone()).collect();
        let plan = Plan::shared_all(mix.len(), ways);
        ProfileMachine {
            platform,
            mix,
            config,
            curves,
            plan,
            intervals: 0,
        }
    }

    /// The mix.
    pub fn mix(&self) -> &Mix {
        &self.mix
    }

    /// The model settings.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// The plan in force.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The model's prediction for the plan in force.
    pub fn evaluation(&self) -> Result<Evaluation, ProfileError> {
        evaluate(&self.mix, &self.plan, &self.config)
    }
}

impl Machine for ProfileMachine {
    fn platform(&self) -> &Platform {
        &self.platform
    }

    fn alone_curves_on(&mut self, axis: &Axis) -> Result<&[AppCurves], MachineError> {
        match axis {
            Axis::Ways => Ok(&self.curves),
            Axis::Colors { .. } => Err(MachineError::Unsupported(
                "alone curves over page colors: the table-driven model knows way counts only"
                    .into(),
            )),
        }
    }

    fn apply(&mut self, plan: &Plan) -> Result<(), MachineError> {
        plan.validate(self.mix.len(), &self.platform.mask_rules)?;
        if !plan.colors.is_empty() {
            return Err(MachineError::Unsupported(
                "page colors: the table-driven model partitions by ways only".into(),
            ));
        }
        if !plan.throttle.is_empty() {
            return Err(MachineError::Unsupported(
                "execution throttling (duty cycles, prefetchers): the table-driven model has no time to throttle".into(),
            ));
        }
        self.plan = plan.clone();
        Ok(())
    }

    fn run_interval(&mut self, _respond: Responder<'_>) -> Result<Interval, MachineError> {
        let ev = self.evaluation().map_err(MachineError::backend)?;
        let samples = ev
            .apps
            .iter()
            .map(|o| {
                let c = &self.mix.apps[o.app].curves;
                let best = c.ipc.iter().copied().fold(f64::MIN, f64::max);
                let ipc = best / o.slowdown;
                let instructions = ipc * INTERVAL_CYCLES;
                let f = o.effective_ways;
                let mpki = interpolate(&c.llcmpki, f);
                let stall_frac = self.mix.apps[o.app]
                    .stalls_mem
                    .as_ref()
                    .map(|v| interpolate(v, f))
                    .unwrap_or(0.0);
                Sample {
                    app: o.app,
                    instructions,
                    cycles: INTERVAL_CYCLES,
                    llc_references: f64::NAN,
                    llc_misses: mpki * instructions / 1000.0,
                    memory_stall_cycles: stall_frac * INTERVAL_CYCLES,
                    llc_occupancy_bytes: f64::NAN,
                    memory_bytes: o.bandwidth_mbps * 1e6 * (INTERVAL_CYCLES / 1e9),
                    tlb_misses: f64::NAN,
                    pages_recolored: 0.0,
                    l2_miss_stall_cycles: c
                        .stalls_l2_miss
                        .as_ref()
                        .map_or(f64::NAN, |v| interpolate(v, f) * INTERVAL_CYCLES),
                    ran: true,
                    ..Sample::default()
                }
            })
            .collect();
        let index = self.intervals;
        self.intervals += 1;
        Ok(Interval {
            index,
            end_cycles: (self.intervals as f64 * INTERVAL_CYCLES) as u64,
            samples,
            events: Vec::new(),
        })
    }
}
