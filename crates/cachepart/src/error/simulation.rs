//! Sorting a simulation's failure into its kind: a trace the simulator
//! cannot read is a [`Error::Trace`] (still naming the run and the app),
//! a configuration value it refuses an [`Error::Config`], anything else a
//! [`Error::Simulation`]. The layers that only pass an
//! error through (the machine's backend, the driver's machine failure)
//! are taken off, so that the kept source is the simulator's own error
//! and the words stay the same.

use cachepart_machine::MachineError;
use cachepart_policy::DriveError;
use cachepart_sim::system::SystemError;

use super::{Error, Source};

impl Error {
    /// The failure `source` of the simulation `run` (`scenario NAME`,
    /// `run LABEL`). Prints `RUN: SOURCE`.
    pub fn simulation(run: impl Into<String>, source: impl Into<Source>) -> Error {
        let run = run.into();
        let source = peel(source.into());
        match source.downcast::<SystemError>() {
            Ok(system) => match *system {
                SystemError::Trace { app, source } => Error::Trace {
                    whence: format!("{run}: app {app}: trace"),
                    source: Box::new(source),
                },
                SystemError::Config { field, reason } => Error::Config {
                    whence: run,
                    field,
                    what: reason,
                },
                SystemError::Parse { path, message } => Error::Config {
                    whence: format!("{run}: {}", path.display()),
                    field: String::new(),
                    what: message,
                },
                system => Error::Simulation {
                    run,
                    source: Box::new(system),
                },
            },
            Err(source) => Error::Simulation { run, source },
        }
    }

    /// The app a simulation error names, if the simulator said which.
    pub fn app(&self) -> Option<&str> {
        let Error::Simulation { source, .. } = self else {
            return None;
        };
        match source.downcast_ref::<SystemError>()? {
            SystemError::Mask { app, .. } | SystemError::Trace { app, .. } => Some(app),
            SystemError::Memory { app, .. } => app.as_deref(),
            _ => None,
        }
    }
}

/// `e` without the layers that print their inner error as is.
fn peel(e: Source) -> Source {
    let e = match e.downcast::<DriveError>() {
        Ok(d) => match *d {
            DriveError::Machine(m) => Box::new(m) as Source,
            d => return Box::new(d),
        },
        Err(e) => e,
    };
    match e.downcast::<MachineError>() {
        Ok(m) => match *m {
            MachineError::Backend(b) => peel(b),
            m => Box::new(m),
        },
        Err(e) => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_sim::memory::MemoryError;
    use std::error::Error as _;

    fn system_trace_error() -> SystemError {
        SystemError::Trace {
            app: "mcf".into(),
            source: cachepart_trace::TraceError::BadMagic { offset: 0 },
        }
    }

    #[test]
    fn a_trace_the_simulator_cannot_read_is_a_trace_error() {
        let machine = MachineError::backend(system_trace_error());
        let e = Error::simulation("scenario s", DriveError::Machine(machine));
        assert!(matches!(e, Error::Trace { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "scenario s: app mcf: trace: bad magic at byte offset 0: not a cachepart trace"
        );
        assert!(e.trace_error().is_some());
    }

    #[test]
    fn other_failures_are_simulation_errors_with_the_app() {
        let system = SystemError::Memory {
            app: Some("lbm".into()),
            source: MemoryError::OutOfMemory {
                order: 0,
                free_frames: 3,
            },
        };
        let words = format!("scenario s: {system}");
        let e = Error::simulation("scenario s", MachineError::backend(system));
        assert!(matches!(e, Error::Simulation { .. }), "{e:?}");
        assert_eq!(e.to_string(), words);
        assert_eq!(e.app(), Some("lbm"));
        let source = e.source().expect("a source");
        assert!(source.downcast_ref::<SystemError>().is_some());
    }

    #[test]
    fn a_value_the_simulator_refuses_is_a_configuration_error() {
        let system = SystemError::Config {
            field: "app mcf: core".into(),
            reason: "core 9 is not one of the platform's 4".into(),
        };
        let e = Error::simulation("scenario s", system);
        assert!(matches!(e, Error::Config { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "scenario s: app mcf: core: core 9 is not one of the platform's 4"
        );
    }

    #[test]
    fn a_plain_message_is_kept() {
        let e = Error::simulation("run a", "no app finished".to_string());
        assert_eq!(e.to_string(), "run a: no app finished");
        assert_eq!(e.app(), None);
    }
}
