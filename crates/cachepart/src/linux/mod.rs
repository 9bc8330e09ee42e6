//! Everything Linux: the backend crate `cachepart-linux` (resctrl, perf
//! counters, MSRs, `doctor`, the emulated and fake trees), re-exported
//! whole, and the facade's runs over it: a policy's controller on this
//! machine ([`control`]), its counters ([`counters`]), mix files ([`mix`]),
//! the launcher ([`run`], `cachepart run`), the daemon over adopted
//! processes ([`daemon`], `cachepart daemon`) and CAT sweeps of real
//! programs into a metrics table ([`measure`]).

pub use cachepart_linux::*;

pub mod control;
pub mod counters;
pub mod daemon;
pub mod measure;
pub mod mix;
pub mod run;
