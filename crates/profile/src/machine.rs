//! [`ProfileMachine`]: the table-driven model behind the machine interface.

use crate::error::ProfileError;
use crate::mix::Mix;
use crate::model::{evaluate, Evaluation, ModelConfig};
use cachepart_machine::share::{interpolate, interpolate_with_floor};
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
                // Stall columns may be all zeros: read them with a floor of
                // 0 below one way (as `MixApp::bw_input` does), so that an
                // app with no stall cycles has none at any share.
                let stalls_at = |v: &Vec<f64>| interpolate_with_floor(v, f, 0.0);
                let stall_frac = self.mix.apps[o.app]
                    .stalls_mem
                    .as_ref()
                    .map(stalls_at)
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
                        .map_or(f64::NAN, |v| stalls_at(v) * INTERVAL_CYCLES),
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

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_machine::AppEvent;

    /// An app whose table has no stall cycles reports none through
    /// `run_interval` when it holds less than one way (here: sharing one
    /// cache with a heavy app). Before, the stall columns were read with the
    /// 1e-6 floor below one way, so it reported memory-stall and L2-miss
    /// stall cycles (up to the whole interval) it never has.
    #[test]
    fn zero_stalls_stay_zero_below_one_way() {
        let (mix, cfg) = crate::model::zero_and_half_stall_mix();
        let mut m = ProfileMachine::new(mix, cfg);
        // both apps share the three ways: b's miss rate takes most of them
        m.apply(&Plan::shared_all(2, 3)).unwrap();
        let ev = m.evaluation().unwrap();
        assert!(ev.apps[0].effective_ways < 1.0, "{ev:?}");
        assert_eq!(ev.apps[0].slowdown, ev.apps[0].slowdown_nobw, "{ev:?}");
        let mut respond = |_: &AppEvent| Vec::new();
        let iv = m.run_interval(&mut respond).unwrap();
        let a = &iv.samples[0];
        assert_eq!(a.memory_stall_cycles, 0.0, "{a:?}");
        assert_eq!(a.l2_miss_stall_cycles, 0.0, "{a:?}");
        let b = &iv.samples[1];
        assert!(
            b.memory_stall_cycles > 0.0 && b.l2_miss_stall_cycles > 0.0,
            "{b:?}"
        );
    }
}
