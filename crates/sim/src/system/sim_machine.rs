//! [`SimMachine`]: the simulator behind the [`Machine`] interface every
//! policy and controller talks to. Its platform comes from the LLC (ways,
//! mask rules, bandwidth); its alone curves from [`alone_sweep_many`] of
//! the apps over ways or colors; plans become per-app CAT masks and color
//! sets and per-app throttling (duty cycle, prefetcher word);
//! [`Action::Recolor`] recolors an app's pages by the machine's
//! [`RecolorConfig`]; [`Action::Place`] moves an app before the run
//! starts; each interval is `interval_cycles` of global simulated time,
//! and an app whose colors run out is put to the controller's responder.

use cachepart_machine::{
    Action, AppCurves, AppEvent, Axis, Effect, Interval, Machine, MachineError, Plan, Platform,
    Responder,
};

use super::alone::{alone_sweep_many, AloneRun};
use super::app::{AppSpec, AppTotals};
use super::error::SystemError;
use super::multicore::System;
use super::platform::PlatformConfig;
use crate::memory::RecolorConfig;

/// The trace-driven simulator as a [`Machine`].
pub struct SimMachine {
    config: PlatformConfig,
    apps: Vec<AppSpec>,
    seed: u64,
    interval_cycles: u64,
    platform: Platform,
    system: System,
    recolor: RecolorConfig,
    intervals: u64,
    /// Alone curves already measured, per axis.
    curves: Vec<(Axis, Vec<AppCurves>)>,
}

fn sys_err(e: SystemError) -> MachineError {
    MachineError::backend(e)
}

/// An app's curves from its alone runs at the counts of a sweep.
pub fn curves_from_totals(name: &str, freq_ghz: f64, runs: &[AppTotals]) -> AppCurves {
    let mbps = |t: &AppTotals| {
        let secs = t.cycles / (freq_ghz * 1e9);
        if secs > 0.0 {
            t.memory_bytes as f64 / secs / 1e6
        } else {
            0.0
        }
    };
    let frac = |f: fn(&AppTotals) -> f64| -> Vec<f64> {
        runs.iter()
            .map(|t| if t.cycles > 0.0 { f(t) / t.cycles } else { 0.0 })
            .collect()
    };
    let mut c = AppCurves::new(
        name,
        runs.iter().map(|t| t.ipc).collect(),
        runs.iter().map(AppTotals::llc_mpki).collect(),
        runs.iter().map(AppTotals::llc_mpkc).collect(),
        runs.iter().map(mbps).collect(),
    );
    c.stalls_l2_miss = Some(frac(|t| t.l2_miss_stall_cycles));
    c.stalls_memory = Some(frac(|t| t.memory_stall_cycles));
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
            recolor: RecolorConfig::default(),
            intervals: 0,
            curves: Vec::new(),
        })
    }

    /// Gives every app a utility monitor (UCP's UMON) over about
    /// `sampled_sets` of the LLC's sets; samples then carry `umon_hits`
    /// and `umon_misses`.
    pub fn enable_umon(&mut self, sampled_sets: u32) {
        self.system.enable_umon(sampled_sets);
    }

    /// Turns the platform's hardware prefetchers on in every core,
    /// switched by `word` (MSR 0x1A4 layout).
    pub fn enable_prefetch(&mut self, word: crate::prefetch::Word) {
        self.system.enable_prefetch(word);
    }

    /// Core `core`'s prefetch counts, when prefetching is on.
    pub fn prefetch_stats(&mut self, core: usize) -> Option<crate::prefetch::PrefetchStats> {
        self.system.prefetch_stats(core)
    }

    /// How [`Action::Recolor`] moves pages (default: Selective Moving).
    pub fn set_recolor_config(&mut self, cfg: RecolorConfig) {
        self.recolor = cfg;
    }

    /// The simulated platform.
    pub fn config(&self) -> &PlatformConfig {
        &self.config
    }

    /// The interval length in cycles.
    pub fn interval_cycles(&self) -> u64 {
        self.interval_cycles
    }

    /// Every app alone at every size of `axis` (in parallel), as runs.
    pub fn alone_runs(&self, axis: &Axis) -> Result<Vec<Vec<AloneRun>>, SystemError> {
        alone_sweep_many(&self.config, &self.apps, axis, self.seed, None)
    }

    /// Whole-run counters of every app so far.
    pub fn totals(&self) -> Vec<AppTotals> {
        self.system.totals()
    }

    /// The apps' names, in mix order.
    pub fn app_names(&self) -> Vec<String> {
        self.system.app_names()
    }

    /// App `app`'s colors (`None`: any color).
    pub fn app_colors(&self, app: usize) -> Option<cachepart_units::IdSet> {
        self.system.app_colors(app)
    }

    /// App `app`'s core (after placements).
    pub fn app_core(&self, app: usize) -> u32 {
        self.apps.get(app).map_or(0, |a| a.core)
    }

    fn started(&self) -> bool {
        self.intervals > 0
    }

    fn set_colors(
        &mut self,
        app: usize,
        colors: &cachepart_units::IdSet,
    ) -> Result<Effect, MachineError> {
        if !self.started() {
            self.system.set_app_colors(app, colors).map_err(sys_err)?;
            return Ok(Effect::default());
        }
        let sum = self
            .system
            .recolor(app, colors, &self.recolor)
            .map_err(sys_err)?;
        Ok(Effect {
            pages_moved: sum.moved,
            pages_marked: sum.marked,
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

    fn app_count(&mut self) -> Result<usize, MachineError> {
        Ok(self.apps.len())
    }

    fn alone_curves_on(&mut self, axis: &Axis) -> Result<&[AppCurves], MachineError> {
        let pos = match self.curves.iter().position(|(a, _)| a == axis) {
            Some(p) => p,
            None => {
                if let Axis::Colors { counts } = axis {
                    if counts.is_empty() || counts.windows(2).any(|w| w[0] >= w[1]) {
                        return Err(MachineError::BadAction {
                            action: "alone-curves",
                            reason: format!(
                                "color counts {counts:?}: expected increasing counts from 1"
                            ),
                        });
                    }
                }
                let runs = self.alone_runs(axis).map_err(sys_err)?;
                let freq = self.config.timing.freq_ghz;
                let all = self
                    .apps
                    .iter()
                    .zip(&runs)
                    .map(|(app, r)| {
                        let totals: Vec<AppTotals> = r.iter().map(|x| x.totals.clone()).collect();
                        curves_from_totals(&app.name, freq, &totals)
                    })
                    .collect();
                self.curves.push((axis.clone(), all));
                self.curves.len() - 1
            }
        };
        Ok(&self.curves[pos].1)
    }

    fn apply(&mut self, plan: &Plan) -> Result<(), MachineError> {
        plan.validate(self.apps.len(), &self.platform.mask_rules)?;
        for cl in &plan.clusters {
            for &a in &cl.apps {
                self.system.set_llc_mask(a, cl.mask).map_err(sys_err)?;
            }
        }
        for c in &plan.colors {
            self.set_colors(c.app, &c.colors)?;
        }
        for t in &plan.throttle {
            self.system.set_throttle(t).map_err(sys_err)?;
        }
        Ok(())
    }

    fn act(&mut self, action: &Action) -> Result<Effect, MachineError> {
        match action {
            Action::Apply(plan) => self.apply(plan).map(|()| Effect::default()),
            Action::Recolor { app, colors } => {
                if *app >= self.apps.len() {
                    return Err(MachineError::BadAction {
                        action: "recolor",
                        reason: format!("app {app}: the mix has {} apps", self.apps.len()),
                    });
                }
                self.set_colors(*app, colors)
            }
            Action::Throttle(t) => {
                self.system.set_throttle(t).map_err(sys_err)?;
                Ok(Effect::default())
            }
            Action::Place { app, core } => {
                if self.started() {
                    return Err(MachineError::BadAction {
                        action: "place",
                        reason: "apps are placed before the first interval".into(),
                    });
                }
                self.system.place_app(*app, *core).map_err(sys_err)?;
                if let Some(a) = self.apps.get_mut(*app) {
                    a.core = *core;
                }
                Ok(Effect::default())
            }
        }
    }

    fn run_interval(&mut self, respond: Responder<'_>) -> Result<Interval, MachineError> {
        let mut more = |event: &AppEvent| -> Option<cachepart_units::IdSet> {
            respond(event).into_iter().find_map(|a| match a {
                Action::Recolor { app, colors } if app == event.app => Some(colors),
                _ => None,
            })
        };
        let samples = self
            .system
            .run_interval_with(self.interval_cycles, &mut more)
            .map_err(sys_err)?;
        let index = self.intervals;
        self.intervals += 1;
        Ok(Interval {
            index,
            end_cycles: self.intervals * self.interval_cycles,
            samples,
            events: self.system.take_events(),
        })
    }

    fn is_done(&self) -> bool {
        self.system.is_done()
    }
}
