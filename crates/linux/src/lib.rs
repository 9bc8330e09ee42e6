//! The Linux backend of cachepart: the kernel interfaces that manage a real
//! machine's last-level cache.
//!
//! * [`resctrl`]: the resctrl filesystem (CAT, CDP, MBA, CMT, MBM): its
//!   capabilities (`info/`), schemata lines, control and monitoring groups
//!   under the owned prefix `cachepart-`, the manager lock and the cleanup
//!   of groups left by a crashed manager;
//! * [`doctor`]: what the machine supports and, for what it lacks, the fix;
//! * [`emulate`]: an emulated resctrl filesystem over FUSE that refuses
//!   what the kernel refuses, with its words (`cachepart rdt emulate`);
//! * [`fake`]: plain directory trees shaped like resctrl, `/proc` and `/sys`
//!   on a few platforms, for tests and development.
//!
//! Every kernel interface takes its root path (the resctrl mount, `/proc`,
//! `/sys`, `/dev`) as an argument, so tests point it at a temporary
//! directory. Nothing here is built yet for perf_event, MSRs or the
//! `LinuxMachine` (see `docs/linux.md`).
#![deny(missing_docs)]

pub mod doctor;
pub mod emulate;
mod error;
pub mod fake;
pub mod resctrl;

pub use error::{Error, Result};
