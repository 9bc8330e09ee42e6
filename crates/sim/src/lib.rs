//! Trace-driven cache simulation for cachepart: cache levels, per-core
//! hierarchies in front of a shared last-level cache, and a
//! cachegrind-compatible mode that reproduces valgrind cachegrind's miss
//! counts exactly.
//!
//! * [`geometry`]: [`CacheConfig`] (size, ways, line, policy) and its
//!   checked [`Geometry`] (power-of-two sets, bit-selection index).
//! * [`replacement`]: the [`Replacement`] trait and one file per policy:
//!   [`Lru`] (exact), [`Srrip`] (2-bit RRPV), [`RandomPolicy`] (seeded);
//!   victims are chosen within a way mask (CAT semantics).
//! * [`Cache`] ([`cache`]): one set-associative, write-back,
//!   write-allocate level with dirty bits and per-kind counters.
//! * [`Hierarchy`] ([`hierarchy`]): one core's L1I, L1D and optional L2
//!   in front of a shared LLC lent by the caller, in write-back or
//!   cachegrind mode, inclusive or not.
//! * [`VictimCache`] ([`victim`]): an optional exclusive, sectored victim
//!   cache below the LLC (the Power5's L3), partitioned by the LLC's
//!   colors.
//! * [`CachegrindSim`] and [`CachegrindSummary`] ([`cachegrind`]): the
//!   two-level cachegrind model and its nine totals (parsed from
//!   `cachegrind.out` files too), and cachegrind's `--I1`/`--D1`/`--LL`
//!   options with its checks and defaults ([`cachegrind_opt`]).
//! * [`memory`]: virtual address spaces mapped on first touch by a
//!   modelled buddy allocator, page colors, per-core TLBs, and
//!   [`PhysicalCore`](memory::PhysicalCore), which drives a hierarchy with
//!   physical addresses.
//! * [`reference`](mod@reference): a plain, abstraction-free cachegrind loop, the
//!   benchmark's yardstick and the tests' oracle.
//!
//! * [`system`]: the multicore [`System`](system::System): timing (base
//!   CPI, latencies, MLP, DRAM latency under load), cores interleaved in
//!   simulated-time order, time slicing, per-app samples, alone runs, and
//!   [`SimMachine`](system::SimMachine), the simulator behind the policies'
//!   machine interface.
//!
//! Caches take already-translated addresses ([`memory`] translates), and
//! the LLC is shared by lending it to each core.
//!
//! ```
//! use cachepart_sim::{CachegrindConfig, CachegrindSim};
//! use cachepart_trace::{Kind, Record};
//! let cfg = CachegrindConfig::lru((32 << 10, 8, 64), (32 << 10, 8, 64), (1 << 20, 16, 64));
//! let mut sim = CachegrindSim::new(&cfg).unwrap();
//! sim.run([
//!     Record::access(Kind::Ifetch, 0x40_1000, 4, 0).unwrap(),
//!     Record::access(Kind::Load, 0x7ff0_0000, 8, 0).unwrap(),
//! ]);
//! let s = sim.summary();
//! assert_eq!((s.ir, s.i1mr, s.ilmr, s.dr, s.d1mr), (1, 1, 1, 1, 1));
//! ```
#![deny(missing_docs)]

pub mod cache;
pub mod cachegrind;
pub mod cachegrind_opt;
mod error;
pub mod geometry;
pub mod hierarchy;
pub mod memory;
pub mod prefetch;
pub mod reference;
pub mod replacement;
mod splitmix;
mod stats;
pub mod system;
pub mod umon;
pub mod victim;

pub use cache::{Cache, LineOutcome, Victim};
pub use cachegrind::{
    CachegrindConfig, CachegrindSim, CachegrindSummary, ParallelCachegrind, Partition, EVENTS,
};
pub use cachegrind_opt::{parse_cache_opt, CacheOptError};
pub use error::{GeometryError, Result, SimError};
pub use geometry::{CacheConfig, Geometry};
pub use hierarchy::{Hierarchy, HierarchyConfig, HierarchyStats, Inclusion, Mode, Served};
pub use replacement::{Lru, PolicyKind, PolicyState, RandomPolicy, Replacement, Srrip};
pub use splitmix::SplitMix64;
pub use stats::{AccessKind, LevelStats, MemTraffic};
pub use victim::{VictimCache, VictimConfig, VictimCounts, VictimError};
