//! Duty-cycle modulation of a core (Intel's on-demand clock modulation,
//! IA32_CLOCK_MODULATION, MSR 0x19A), as Zhang et al. use it to throttle
//! an app: the platform's `[clock-modulation]` section
//! ([`ClockModulation`]) and the clock arithmetic of a throttled core
//! ([`DutyClock`]).
//!
//! The modulation gates the core's clock: of every `steps` clock cycles,
//! `on` reach the core (Intel's manual: the mechanism "controls the
//! processor's stop-clock circuitry internally to modulate the clock
//! signal"; J. McCalpin on Intel's forum: with 4 of 16, "the processor
//! core will receive the clock signal 4 times out of every 16 cycles").
//! Global time is therefore cut into modulation periods of
//! `period-cycles` (default: `steps` cycles, one gated pattern); in each,
//! a core at duty cycle `on/steps` runs for the first `on/steps` of the
//! period and is halted for the rest. What runs on the core clock stops
//! while it is halted: instructions (`base-cpi`), private-cache (L2) hits
//! and page walks. What runs outside the core does not: an LLC or memory
//! access in flight completes in wall-clock time, and the core picks up
//! at its next running cycle. So a compute-bound app at 4/8 takes twice
//! as long, while a DRAM-bound one barely slows. Every core's periods
//! start at the same global times.
//!
//! Writing the register costs the core `msr-write-cycles` (Zhang et al.
//! measured 265 + 350 cycles to read and write it on their Xeon 5160).

use cachepart_machine::Duty;
use serde::{Deserialize, Serialize};

use super::error::SystemError;
use super::timing::TICKS_PER_CYCLE;

/// A platform's clock modulation (`[clock-modulation]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ClockModulation {
    /// Steps of the duty cycle: 8 (on-demand clock modulation), or 16
    /// where the core has extended modulation.
    #[serde(default = "d_steps")]
    pub steps: u32,
    /// Length of one modulation period, cycles (default: `steps`, the
    /// clock gated cycle by cycle). Longer periods make a throttled core
    /// run in bursts, and make a DRAM-bound app lose more (a miss that
    /// returns while the core is halted waits for its next running part).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period_cycles: Option<u64>,
    /// Cycles one change of the duty cycle costs the core (read and
    /// write of the register; Zhang et al.: 265 + 350).
    #[serde(default = "d_write")]
    pub msr_write_cycles: u64,
}

fn d_steps() -> u32 {
    8
}
fn d_write() -> u64 {
    615
}

impl Default for ClockModulation {
    fn default() -> Self {
        ClockModulation {
            steps: d_steps(),
            period_cycles: None,
            msr_write_cycles: d_write(),
        }
    }
}

fn bad(field: &str, reason: String) -> SystemError {
    SystemError::Config {
        field: format!("clock-modulation.{field}"),
        reason,
    }
}

impl ClockModulation {
    /// Checks the section.
    pub fn check(&self) -> Result<(), SystemError> {
        if self.steps != 8 && self.steps != 16 {
            return Err(bad(
                "steps",
                format!("{}: expected 8, or 16 with extended modulation", self.steps),
            ));
        }
        if self.period() < u64::from(self.steps) {
            return Err(bad(
                "period-cycles",
                format!(
                    "{}: a period needs at least one cycle per step ({})",
                    self.period(),
                    self.steps
                ),
            ));
        }
        Ok(())
    }

    /// The modulation period, cycles.
    pub fn period(&self) -> u64 {
        self.period_cycles.unwrap_or(u64::from(self.steps))
    }

    /// Whether the platform can run `duty` (its steps are the platform's,
    /// or it is full speed; eighths are also accepted on a 16-step core,
    /// as 2k/16).
    pub fn supports(&self, duty: Duty) -> bool {
        duty.is_full() || duty.steps() == self.steps || (duty.steps() == 8 && self.steps == 16)
    }

    /// The clock of a core at `duty` (`None`: full speed, no modulation).
    pub fn clock(&self, duty: Duty) -> Option<DutyClock> {
        if duty.is_full() {
            return None;
        }
        let period = self.period().saturating_mul(TICKS_PER_CYCLE);
        let on = period / u64::from(duty.steps()) * u64::from(duty.on());
        Some(DutyClock { period, on })
    }
}

/// The clock of a throttled core, in ticks: it runs during the first
/// `on` ticks of every `period`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DutyClock {
    period: u64,
    on: u64,
}

impl DutyClock {
    /// The time at which `work` ticks of running, started at `t`, are
    /// done. A start in a halted part waits for the next running part;
    /// the result lies in a running part or at its end.
    #[inline]
    pub fn run(&self, t: u64, work: u64) -> u64 {
        let (period, on) = (self.period, self.on);
        let mut start = t;
        let mut pos = t % period;
        if pos >= on {
            start += period - pos;
            pos = 0;
        }
        let left = on - pos;
        if work <= left {
            return start + work;
        }
        // Finish this running part, then whole ones, then the rest.
        let rest = work - left;
        let next = start + (period - pos);
        let (full, part) = (rest / on, rest % on);
        if part == 0 {
            next + (full - 1) * period + on
        } else {
            next + full * period + part
        }
    }

    /// The next time at or after `t` at which the core runs.
    #[inline]
    pub fn issue_at(&self, t: u64) -> u64 {
        self.run(t, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn clock(on: u32, steps: u32, period: u64) -> DutyClock {
        let m = ClockModulation {
            steps,
            period_cycles: Some(period),
            msr_write_cycles: 0,
        };
        m.clock(Duty::new(on, steps).unwrap()).unwrap()
    }

    /// Brute force: step one tick at a time, counting running ticks.
    fn slow_run(c: &DutyClock, t: u64, work: u64) -> u64 {
        let mut t = t;
        while t % c.period >= c.on {
            t += 1;
        }
        let mut done = 0;
        while done < work {
            if t % c.period < c.on {
                done += 1;
            }
            t += 1;
        }
        t
    }

    #[test]
    fn half_duty_takes_twice_as_long() {
        let c = clock(4, 8, 8);
        let p = 8 * TICKS_PER_CYCLE;
        assert_eq!(c.on, p / 2);
        // From a period start, one period's work takes two periods less
        // the final halted half.
        assert_eq!(c.run(0, p), p + p / 2);
        assert_eq!(c.run(0, 10 * p), 19 * p + p / 2);
        // A start in the halted half waits for the next period.
        assert_eq!(c.issue_at(p / 2), p);
        assert_eq!(c.issue_at(p / 2 - 1), p / 2 - 1);
        assert!(ClockModulation::default().clock(Duty::FULL).is_none());
    }

    #[test]
    fn sections_are_checked() {
        let mut m = ClockModulation::default();
        assert!(m.check().is_ok());
        m.steps = 4;
        assert!(m
            .check()
            .unwrap_err()
            .to_string()
            .contains("clock-modulation.steps"));
        m.steps = 8;
        assert_eq!(m.period(), 8);
        m.period_cycles = Some(4);
        assert!(m.check().unwrap_err().to_string().contains("period-cycles"));
        let m16 = ClockModulation {
            steps: 16,
            ..ClockModulation::default()
        };
        assert!(m16.supports(Duty::new(3, 16).unwrap()));
        assert!(m16.supports(Duty::new(3, 8).unwrap()));
        assert!(!ClockModulation::default().supports(Duty::new(3, 16).unwrap()));
        assert!(ClockModulation::default().supports(Duty::new(16, 16).unwrap()));
    }

    proptest! {
        #[test]
        fn run_matches_tick_by_tick(on in 1u32..8, t in 0u64..5_000, work in 0u64..5_000) {
            let c = DutyClock { period: 64, on: u64::from(on) * 8 };
            prop_assert_eq!(c.run(t, work), slow_run(&c, t, work));
        }
    }
}
