//! Execution throttling settings a plan or a controller gives an app
//! (Zhang et al., "Hardware Execution Throttling for Multi-core Resource
//! Management", USENIX ATC'09): a clock-modulation duty cycle ([`Duty`],
//! Intel's IA32_CLOCK_MODULATION, MSR 0x19A) and a hardware prefetcher
//! control word (MSR 0x1A4 layout: a set bit turns one prefetcher off),
//! together an [`AppThrottle`].
//!
//! A machine applies them to the core the app runs on while it runs there
//! (the simulator; Linux through the MSRs of the app's core).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thiserror::Error;

/// A duty cycle: the core runs `on` of every `steps` parts of each
/// modulation period and is halted in the rest. `steps` is 8 (Intel's
/// on-demand clock modulation) or 16 (its extended modulation);
/// `on == steps` is full speed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Duty {
    on: u8,
    steps: u8,
}

/// Why a duty cycle is not valid.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum DutyError {
    /// Not of the form `ON/STEPS`.
    #[error("{0:?}: expected a duty cycle ON/STEPS such as \"5/8\" (STEPS 8 or 16)")]
    Syntax(String),
    /// A step count other than 8 or 16.
    #[error("{steps} steps: clock modulation has 8 steps (16 with extended modulation)")]
    Steps {
        /// The step count given.
        steps: u32,
    },
    /// `on` outside `1..=steps`.
    #[error("{on}/{steps}: the duty cycle must be 1/{steps} to {steps}/{steps}")]
    On {
        /// The on-steps given.
        on: u32,
        /// The step count.
        steps: u32,
    },
}

impl Duty {
    /// Full speed, in eighths.
    pub const FULL: Duty = Duty { on: 8, steps: 8 };

    /// `on` of `steps` (8 or 16), `1 <= on <= steps`.
    pub fn new(on: u32, steps: u32) -> Result<Duty, DutyError> {
        if steps != 8 && steps != 16 {
            return Err(DutyError::Steps { steps });
        }
        if on == 0 || on > steps {
            return Err(DutyError::On { on, steps });
        }
        Ok(Duty {
            on: on as u8,
            steps: steps as u8,
        })
    }

    /// The running steps.
    pub fn on(self) -> u32 {
        u32::from(self.on)
    }

    /// The steps of a period (8 or 16).
    pub fn steps(self) -> u32 {
        u32::from(self.steps)
    }

    /// Whether the core runs at full speed.
    pub fn is_full(self) -> bool {
        self.on == self.steps
    }

    /// The running fraction, `on / steps`.
    pub fn fraction(self) -> f64 {
        f64::from(self.on) / f64::from(self.steps)
    }

    /// Every duty cycle of `steps` steps, slowest first (`1/8` .. `8/8`).
    pub fn all(steps: u32) -> Result<Vec<Duty>, DutyError> {
        (1..=steps).map(|on| Duty::new(on, steps)).collect()
    }
}

impl fmt::Display for Duty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.on, self.steps)
    }
}

impl FromStr for Duty {
    type Err = DutyError;

    fn from_str(s: &str) -> Result<Duty, DutyError> {
        let syntax = || DutyError::Syntax(s.to_string());
        let (on, steps) = s.trim().split_once('/').ok_or_else(syntax)?;
        let on: u32 = on.trim().parse().map_err(|_| syntax())?;
        let steps: u32 = steps.trim().parse().map_err(|_| syntax())?;
        Duty::new(on, steps)
    }
}

impl Serialize for Duty {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Duty {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Duty, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// One app's throttling in a plan: a duty cycle and a prefetcher word,
/// each left as it is when `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct AppThrottle {
    /// The app's index in the mix.
    pub app: usize,
    /// Its core's duty cycle while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duty: Option<Duty>,
    /// Its core's prefetcher word (MSR 0x1A4 layout) while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefetchers: Option<u64>,
}

impl AppThrottle {
    /// App `app` at duty cycle `duty`, prefetchers unchanged.
    pub fn duty(app: usize, duty: Duty) -> AppThrottle {
        AppThrottle {
            app,
            duty: Some(duty),
            prefetchers: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duty_cycles_parse_print_and_refuse() {
        let d: Duty = "5/8".parse().unwrap();
        assert_eq!((d.on(), d.steps()), (5, 8));
        assert_eq!(d.to_string(), "5/8");
        assert!((d.fraction() - 0.625).abs() < 1e-12);
        assert!(Duty::FULL.is_full() && !d.is_full());
        assert_eq!(
            " 3 / 16 ".parse::<Duty>().unwrap(),
            Duty::new(3, 16).unwrap()
        );
        assert_eq!(
            "0/8".parse::<Duty>(),
            Err(DutyError::On { on: 0, steps: 8 })
        );
        assert_eq!(
            "9/8".parse::<Duty>(),
            Err(DutyError::On { on: 9, steps: 8 })
        );
        assert_eq!("4/4".parse::<Duty>(), Err(DutyError::Steps { steps: 4 }));
        assert!(matches!("half".parse::<Duty>(), Err(DutyError::Syntax(_))));
        assert!(matches!("5/x".parse::<Duty>(), Err(DutyError::Syntax(_))));
        assert_eq!(Duty::all(8).unwrap().len(), 8);
        let t = AppThrottle::duty(1, d);
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, r#"{"app":1,"duty":"5/8"}"#);
        assert_eq!(serde_json::from_str::<AppThrottle>(&json).unwrap(), t);
        assert!(serde_json::from_str::<AppThrottle>(r#"{"app":1,"duty":"0/8"}"#).is_err());
    }
}
