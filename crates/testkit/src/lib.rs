//! The test kit of cachepart's crates (a dev-dependency only, never
//! published): what several crates' tests, benches and examples share.
//!
//! * [`shared`]: the shared reference data beside the repository
//!   (`CACHEPART_SHARED`, default `../shared`). A missing folder fails the
//!   test unless `CACHEPART_ALLOW_MISSING_SHARED=1` says it may be skipped.
//! * [`machine`]: [`FixedMachine`], a machine that serves fixed curves.
//! * [`curves`]: curve builders and random mixes (proptest strategies).
//! * [`pbbcache`]: PBBCache's reference results (`ref/tidy_results.csv`)
//!   loaded and grouped, and the cluster-label comparisons of the parity
//!   tests.
//! * [`invariants`]: the checks every static policy's plan must pass.
//! * [`scripted`]: [`ScriptedMachine`], apps following scripted phases,
//!   for online controllers.
//! * [`tools`]: external tools tests compare against ([`have_valgrind`]).

pub mod curves;
pub mod invariants;
pub mod machine;
pub mod pbbcache;
pub mod scripted;
pub mod shared;
pub mod tools;

pub use curves::{curves_from_bw, curves_from_ipc, random_curves};
pub use machine::FixedMachine;
pub use scripted::{Behaviour, ScriptedMachine};
pub use shared::{pbbcache_dir, shared_dir};
pub use tools::have_valgrind;
