//! Scheduling-quantum adjustment with an idle process: the software
//! throttling method Zhang et al. (USENIX ATC'09) compare against
//! (after Fedorova et al.). An idle process shares the app's core, and
//! the two alternate: every round the app runs for `run-cycles`, then the
//! idle process holds the core for `idle-cycles` (the paper's Table 2
//! writes this "100/30": 100 ms of the app, 30 ms of the idle process).
//!
//! [`IdleQuantum`] is the setting and its checks; the scheduler
//! ([`System`](crate::system::System), `multicore/schedule.rs`) runs it:
//! while the idle process holds the core the core issues nothing (its
//! caches keep their contents; the idle process touches no memory), and
//! each round pays two context switches (app to idle process and back)
//! as the platform's timing charges them (`context-switch-cycles`, and a
//! TLB flush where `tlb-flush-on-switch`). The idle share and the switches
//! around it count in the app's cycles: its performance is instructions
//! per cycle of wall-clock time, as the paper measures it.

use serde::{Deserialize, Serialize};

/// An app's run and idle lengths, in core cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct IdleQuantum {
    /// Cycles the app runs each round.
    pub run_cycles: u64,
    /// Cycles the idle process then holds the core.
    pub idle_cycles: u64,
}

impl IdleQuantum {
    /// Checks the setting: on failure, the field (`run-cycles` or
    /// `idle-cycles`) and why.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.run_cycles == 0 {
            return Err((
                "run-cycles",
                "0: expected at least 1 cycle: the app must run each round".into(),
            ));
        }
        if self.idle_cycles == 0 {
            return Err((
                "idle-cycles",
                "0: expected at least 1 cycle: an idle process that never runs throttles nothing (leave quantum out for no idle process)".into(),
            ));
        }
        // Ticks (`TICKS_PER_CYCLE` per cycle) of a round must fit in u64.
        const MAX: u64 = u64::MAX / (2 * crate::system::timing::TICKS_PER_CYCLE) / 4;
        for (field, v) in [
            ("run-cycles", self.run_cycles),
            ("idle-cycles", self.idle_cycles),
        ] {
            if v > MAX {
                return Err((field, format!("{v}: expected at most {MAX} cycles")));
            }
        }
        Ok(())
    }

    /// The share of each round the app holds the core, ignoring switch
    /// costs: `run / (run + idle)`.
    pub fn share(&self) -> f64 {
        self.run_cycles as f64 / (self.run_cycles + self.idle_cycles) as f64
    }
}

impl std::fmt::Display for IdleQuantum {
    /// `run/idle` in cycles, as the paper's Table 2 writes milliseconds.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.run_cycles, self.idle_cycles)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_name_the_field() {
        let q = |run_cycles, idle_cycles| IdleQuantum {
            run_cycles,
            idle_cycles,
        };
        assert!(q(100, 30).check().is_ok());
        assert_eq!(q(0, 30).check().unwrap_err().0, "run-cycles");
        assert_eq!(q(100, 0).check().unwrap_err().0, "idle-cycles");
        assert_eq!(q(100, u64::MAX).check().unwrap_err().0, "idle-cycles");
        assert!((q(100, 100).share() - 0.5).abs() < 1e-12);
        assert_eq!(q(100, 30).to_string(), "100/30");
    }

    #[test]
    fn parses_kebab_case_and_refuses_unknown_keys() {
        let q: IdleQuantum =
            serde_json::from_str(r#"{"run-cycles": 10, "idle-cycles": 3}"#).unwrap();
        assert_eq!(q.idle_cycles, 3);
        let e = serde_json::from_str::<IdleQuantum>(r#"{"run-cycles": 10, "idle": 3}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("idle"), "{e}");
    }
}
