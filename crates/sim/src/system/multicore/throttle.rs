//! Execution throttling per app (Zhang et al.): the duty cycle (see
//! [`crate::system::clock_modulation`]) and the prefetcher word an app's
//! core runs with while the app runs there.
//!
//! An app's settings come from its [`AppSpec`](crate::system::AppSpec)
//! and change with [`System::set_throttle`]. A core holds one duty cycle
//! and one prefetcher word at a time, as the hardware registers do: when
//! an app is installed on a core whose registers differ from the app's
//! settings, the core writes them, paying the platform's
//! `msr-write-cycles` for each register written (charged to the core's
//! clock, to no app; not when the apps are first placed, before the run).
//! A change for a running app is written at once, at the same cost.

use cachepart_machine::{AppThrottle, Duty};

use super::{cfg_err, Core, System};
use crate::prefetch::Word;
use crate::system::app::AppSpec;
use crate::system::error::SystemError;
use crate::system::platform::PlatformConfig;
use crate::system::timing::TICKS_PER_CYCLE;

/// Checks that `platform` can run an app at `duty` with prefetcher word
/// `word`: on failure, the app's field (`duty` or `prefetchers`) and why.
pub fn check_throttle(
    platform: &PlatformConfig,
    duty: Duty,
    word: Option<u64>,
) -> Result<(), (&'static str, String)> {
    if !duty.is_full() {
        match &platform.clock_modulation {
            None => {
                return Err((
                    "duty",
                    format!(
                        "{duty}: platform {} has no duty-cycle modulation (no [clock-modulation] section)",
                        platform.name
                    ),
                ))
            }
            Some(m) if !m.supports(duty) => {
                return Err((
                    "duty",
                    format!(
                        "{duty}: platform {} modulates in {} steps",
                        platform.name, m.steps
                    ),
                ))
            }
            Some(_) => {}
        }
    }
    if let Some(w) = word {
        Word::new(w).map_err(|reason| ("prefetchers", reason))?;
        if platform.prefetchers.run_word.is_none() {
            return Err((
                "prefetchers",
                format!(
                    "{w:#x}: the run has no prefetchers on (turn them on with the scenario's prefetchers key{})",
                    if platform.prefetchers.is_absent() {
                        "; this platform declares none"
                    } else {
                        ""
                    }
                ),
            ));
        }
    }
    Ok(())
}

/// [`check_throttle`] as a [`SystemError`] naming app `name`.
pub(super) fn checked(
    platform: &PlatformConfig,
    name: &str,
    duty: Duty,
    word: Option<u64>,
) -> Result<(), SystemError> {
    check_throttle(platform, duty, word)
        .map_err(|(field, reason)| cfg_err(format!("app {name}: {field}"), reason))
}

impl System {
    /// Changes app `t.app`'s throttling (the settings given; `None` keeps
    /// one). Written to its core at once when the app is running.
    pub fn set_throttle(&mut self, t: &AppThrottle) -> Result<(), SystemError> {
        let n = self.apps.len();
        let app = self.apps.get(t.app).ok_or(SystemError::NoSuchApp {
            index: t.app,
            apps: n,
        })?;
        let duty = t.duty.unwrap_or(app.spec.duty);
        let word = t.prefetchers.or(app.spec.prefetch_word);
        checked(&self.platform, &app.spec.name, duty, t.prefetchers)?;
        let clock = self.platform.clock_modulation.and_then(|m| m.clock(duty));
        let app = &mut self.apps[t.app];
        app.spec.duty = duty;
        app.spec.prefetch_word = word;
        app.duty_clock = clock;
        let b = app.spec.core as usize;
        let core = &mut self.cores[b];
        if core.running == Some(t.app) {
            let cost = write_registers(&self.platform, &app.spec, core);
            core.clock = core
                .clock
                .saturating_add(cost.saturating_mul(TICKS_PER_CYCLE));
        }
        Ok(())
    }

    /// App `app`'s duty cycle.
    pub fn app_duty(&self, app: usize) -> Option<Duty> {
        self.apps.get(app).map(|a| a.spec.duty)
    }
}

/// Writes `spec`'s duty cycle and prefetcher word into `core`'s registers
/// where they differ; returns the cycles the writes cost.
pub(super) fn write_registers(platform: &PlatformConfig, spec: &AppSpec, core: &mut Core) -> u64 {
    let word = spec.prefetch_word.or(platform.prefetchers.run_word);
    let mut cost = 0u64;
    if core.duty != spec.duty {
        core.duty = spec.duty;
        cost += platform.clock_modulation.map_or(0, |m| m.msr_write_cycles);
    }
    if let (Some(w), Some(p)) = (word, core.pc.hierarchy_mut().prefetchers_mut()) {
        if p.word().bits() != w {
            if let Ok(w) = Word::new(w) {
                p.set_word(w);
                cost += platform.prefetchers.msr_write_cycles;
            }
        }
    }
    cost
}
