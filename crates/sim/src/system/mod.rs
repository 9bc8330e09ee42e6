//! The multicore system: timing, per-core clocks interleaved in
//! simulated-time order, time slicing, alone runs, and the simulator as a
//! [`Machine`](cachepart_machine::Machine).
//!
//! * [`platform`]: [`PlatformConfig`], a platform file (cores, private
//!   levels, sliced LLC, TLBs, memory, timing, mask rules).
//! * [`timing`]: [`TimingConfig`], [`AppTiming`] and the per-access
//!   [`StallTable`].
//! * [`window`]: [`WindowConfig`], the out-of-order window that derives
//!   memory-level parallelism from the trace (opt-in per platform).
//! * [`dram`]: [`Dram`], DRAM latency growing with bandwidth utilisation.
//! * [`source`]: [`TraceSource`] (trace files, generators, records in
//!   memory).
//! * [`app`]: [`AppSpec`] and [`AppTotals`].
//! * [`idle_quantum`]: [`IdleQuantum`], scheduling-quantum adjustment
//!   with an idle process.
//! * [`multicore`]: [`System`], the interleaving engine.
//! * [`alone`]: alone runs over ways or colors ([`run_alone_at`], [`alone_sweep_many`]).
//! * [`sim_machine`]: [`SimMachine`], the simulator as a machine.
//! * [`error`]: [`SystemError`], every failure with its app or field.
//! * `host_footprint`: the host memory a platform takes before its first
//!   access, checked by [`PlatformConfig::check`].
//!
//! ```
//! use std::sync::Arc;
//! use cachepart_sim::system::{AppSpec, PlatformConfig, System};
//! use cachepart_trace::synth::SynthConfig;
//! let platform = PlatformConfig::from_toml_str(r#"
//!     name = "duo"
//!     cores = 2
//!     core.l1i = { size-bytes = 32768, ways = 8, line-bytes = 64 }
//!     core.l1d = { size-bytes = 32768, ways = 8, line-bytes = 64 }
//!     llc = { size-bytes = 1048576, ways = 16, line-bytes = 64 }
//!     memory = { size-bytes = 268435456 }
//! "#).unwrap();
//! let synth: SynthConfig = serde_json::from_str(r#"{"seed": 1, "accesses": 20000,
//!     "pattern": {"class": "cache-sensitive", "working-set-bytes": 262144}}"#).unwrap();
//! let apps = vec![
//!     AppSpec::new("a", Arc::new(synth.clone())).on_core(0),
//!     AppSpec::new("b", Arc::new(synth)).on_core(1),
//! ];
//! let mut sys = System::new(&platform, apps, 7).unwrap();
//! let mut intervals = 0;
//! sys.run_to_end(100_000, |samples| { intervals += 1; assert_eq!(samples.len(), 2); }).unwrap();
//! let t = sys.totals();
//! assert!(t[0].instructions > 0 && t[0].ipc > 0.0 && intervals > 0);
//! ```

pub mod alone;
pub mod app;
pub mod clock_modulation;
pub mod dram;
pub mod error;
mod host_footprint;
pub mod idle_quantum;
pub mod multicore;
pub mod platform;
pub mod sim_machine;
pub mod source;
pub mod timing;
pub mod window;

pub use alone::{
    alone_sweep, alone_sweep_many, run_alone, run_alone_at, run_alone_for, run_alone_runs,
    run_alone_warmed, sweep_grid, sweep_platform, AloneRun, AloneSize,
};
pub use app::{AppSpec, AppTotals};
pub use clock_modulation::{ClockModulation, DutyClock};
pub use dram::{queued_latency, Dram};
pub use error::SystemError;
pub use idle_quantum::IdleQuantum;
pub use multicore::{check_throttle, ExhaustedResponder, RecolorSummary, System, BATCH};
pub use platform::PlatformConfig;
pub use sim_machine::{curves_from_totals, SimMachine};
pub use source::{CptFile, RecordBatches, RecordStream, RecordsSource, TraceSource};
pub use timing::{
    AppTiming, StallTable, TimingConfig, MAX_BASE_CPI, MIN_BASE_CPI, TICKS_PER_CYCLE,
};
pub use window::WindowConfig;
