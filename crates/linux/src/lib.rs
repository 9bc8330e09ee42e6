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
//!   on a few platforms, and a fake MSR device, for tests and development;
//! * [`cpu`]: the CPU model and what cachepart knows of its events and MSRs;
//! * [`perf`]: per-process hardware counters (`perf_event_open`, or scripted);
//! * [`msr`]: duty cycles and prefetcher words through `/dev/cpu/N/msr`;
//! * [`machine`]: [`machine::LinuxMachine`], the `Machine` every policy runs on,
//!   and [`machine::Adopter`], the same for processes it did not start;
//! * [`targets`]: the processes a manager is told about (pid, command name,
//!   cgroup).
//!
//! Every kernel interface takes its root path (the resctrl mount, `/proc`,
//! `/sys`, `/dev`) as an argument, so tests point it at a temporary
//! directory (see `docs/linux.md`).
#![deny(missing_docs)]

pub mod cpu;
pub mod doctor;
pub mod emulate;
mod error;
pub mod fake;
pub mod machine;
pub mod msr;
pub mod perf;
pub mod preset;
pub mod resctrl;
pub mod targets;

pub use error::{Error, Result};
