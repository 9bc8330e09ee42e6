//! [`SimMachine`]: the simulator behind the [`Machine`] interface every
//! policy talks to. Its platform comes from the LLC (ways, mask rules,
//! bandwidth); its alone curves from [`alone_sweep`] of each app; plans
//! become per-app CAT masks; each interval is `interval_cycles` of
//! global simulated time.

use cachepart_machine::{AppCurves, Machine, MachineError, Plan, Platform, Sample};

use super::alone::alone_sweep;
use super::app::{AppSpec, AppTotals};
use super::error::SystemError;
use super::multicore::System;
use super::platform::PlatformConfig;

/// The trace-driven simulator as a [`Machine`].
pub struct SimMachine {
    config: PlatformConfig,
    apps: Vec<AppSpec>,
    seed: u64,
    interval_cycles: u64,
    platform: Platform,
    system: System,
    curves: Option<Vec<AppCurves>>,
}

fn other(e: SystemError) -> MachineError {
    MachineError::Other(e.to_string())
}

/// An app's curves from its alone runs at `1..=W` ways.
pub fn curves_from_totals(name: &str, freq_ghz: f64, runs: &[AppTotals]) -> AppCurves {
    let mbps = |t: &AppTotals| {
        let secs = t.cycles / (freq_ghz * 1e9);
        if secs > 0.0 {
            t.memory_bytes as f64 / secs / 1e6
        } else {
            0.0
        }
    };
    let mut c = AppCurves::new(
        name,
        runs.iter().map(|t| t.ipc).collect(),
        runs.iter().map(AppTotals::llc_mpki).collect(),
        runs.iter().map(AppTotals::llc_mpkc).collect(),
        runs.iter().map(mbps).collect(),
    );
    c.stalls_l2_miss = Some(
        runs.iter()
            .map(|t| {
                if t.cycles > 0.0 {
                    t.l2_miss_stall_cycles / t.cycles
                } else {
                    0.0
                }
            })
            .collect(),
    );
    c
}

impl SimMachine {
    /// A machine running `apps` on `config`, sampled every
    /// `interval_cycles`.
    pub fn new(
        config: PlatformConfig,
        apps: Vec<AppSpec>,
        seed: u64,
        interval_cycles: u64,
    ) -> Result<SimMachine, SystemError> {
        if interval_cycles == 0 {
            return Err(SystemError::Config {
                field: "interval-cycles".into(),
                reason: "must be positive".into(),
            });
        }
        let system = System::new(&config, apps.clone(), seed)?;
        Ok(SimMachine {
            platform: config.platform(),
            config,
            apps,
            seed,
            interval_cycles,
            system,
            curves: None,
        })
    }

    /// The system being run.
    pub fn system(&self) -> &System {
        &self.system
    }

    /// The system being run, mutably.
    pub fn system_mut(&mut self) -> &mut System {
        &mut self.system
    }

    /// Whether every app has finished.
    pub fn is_done(&self) -> bool {
        self.system.is_done()
    }
}

impl Machine for SimMachine {
    fn platform(&self) -> &Platform {
        &self.platform
    }

    fn alone_curves(&mut self) -> Result<&[AppCurves], MachineError> {
        if self.curves.is_none() {
            let mut all = Vec::with_capacity(self.apps.len());
            for app in &self.apps {
                let runs = alone_sweep(&self.config, app, self.seed).map_err(other)?;
                all.push(curves_from_totals(
                    &app.name,
                    self.config.timing.freq_ghz,
                    &runs,
                ));
            }
            self.curves = Some(all);
        }
        Ok(self.curves.as_deref().unwrap_or(&[]))
    }

    fn apply(&mut self, plan: &Plan) -> Result<(), MachineError> {
        plan.validate(self.apps.len(), &self.platform.mask_rules)?;
        for cl in &plan.clusters {
            for &a in &cl.apps {
                self.system.set_llc_mask(a, cl.mask).map_err(other)?;
            }
        }
        Ok(())
    }

    fn run_interval(&mut self) -> Result<Vec<Sample>, MachineError> {
        self.system
            .run_interval(self.interval_cycles)
            .map_err(other)
    }
}
