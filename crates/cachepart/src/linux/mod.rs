//! Everything Linux: the backend crate `cachepart-linux` (resctrl, perf
//! counters, MSRs, `doctor`, the emulated and fake trees), its modules
//! re-exported here, and the facade's runs over it: a policy's controller on this
//! machine ([`control`]), its counters ([`counters`]), mix files ([`mix`]),
//! the launcher ([`run`], `cachepart run`), the daemon over adopted
//! processes ([`daemon`], `cachepart daemon`) and CAT sweeps of real
//! programs into a metrics table ([`measure`]). The backend's own error
//! reaches callers as [`Error::Linux`](crate::Error::Linux).

pub use cachepart_linux::{
    cpu, doctor, emulate, fake, machine, msr, perf, preset, resctrl, targets,
};

pub mod control;
pub mod counters;
pub mod daemon;
pub mod measure;
pub mod mix;
pub mod run;
