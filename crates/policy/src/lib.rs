//! Partitioning and clustering policies, one file each, and the loop that
//! runs them.
//!
//! Two interfaces: a static [`Policy`] decides one plan from the machine's
//! alone curves; a [`Controller`] acts online: started with the machine,
//! told of app events, handed every interval's samples, it answers with
//! actions. [`driver::drive`] runs any controller on any machine; a static
//! policy runs there as [`controller::Static`].
//!
//! A policy sees only the [`Machine`] interface: the platform and each app's
//! curves alone at every way count. It returns a [`Plan`]: clusters of apps
//! with way masks. The same policy runs on the table-driven model, the
//! simulator and Linux.
//!
//! | name | what it does |
//! |---|---|
//! | `stock` | no partitioning: every app shares every way |
//! | `equal-part` | strict partitioning, ways split as evenly as possible |
//! | `ucp` | UCP lookahead on misses per kilo-instruction |
//! | `ucp-slowdown` | UCP lookahead on the slowdown curve |
//! | `whirlpool`, `whirlpool-c` | no partitioning, sharing estimated on MPKI / MPKC |
//! | `yu-petrov` | bandwidth-aware way allocation (Yu and Petrov) |
//! | `kpart` | KPart hierarchical clustering with lookahead (El-Sayed et al.) |
//! | `dunn` | k-means on stall fractions, Dunn index for k, overlapping masks (Selfa et al.) |
//! | `lfoc` | LFOC: streaming apps confined, sensitive apps sized by lookahead |
//! | `lfoc+` | LFOC with pair clustering: two sensitive apps may share a cluster |
//! | `user` | a plan given by hand (`MASK=APPS;...`) |
//!
//! Color policies (page coloring, acted on by the simulator's allocators):
//!
//! | module | what it does |
//! |---|---|
//! | [`coloris`] | COLORIS's per-core color sections and Cache Utilization Monitor (Algorithm 1) |
//! | [`tam_sizing`] | Tam et al.'s static sizing: the split minimising the sum of miss-rate or stall-rate curves |
//!
//! Controllers on the loop ([`driver`]):
//!
//! | module | what it does |
//! |---|---|
//! | [`controller::Static`] | any static policy: plans once at the start |
//! | [`coloris_control`] | COLORIS: sections at the start; the monitor every period on the apps running; ALLOC_COLORS on exhaustion |
//! | [`tam_control`] | Tam's sizing: alone curves over colors at the start, contiguous color ranges |
//! | [`throttle_online`] | Zhang et al.'s throttling: duty cycles (and, hybrid, prefetchers) stepped each window to drive the unfairness factor down |
#![deny(missing_docs)]

pub mod coloris;
pub mod coloris_control;
pub mod controller;
pub mod driver;
mod dunn;
pub mod dunn_dynamic;
mod equal_part;
mod error;
mod kpart;
pub mod kpart_dynaway;
mod lfoc;
pub mod lfoc_online;
mod lfoc_plus;
pub mod lfoc_preset;
pub mod lookahead;
mod stock;
pub mod tam_control;
pub mod tam_sizing;
pub mod throttle_online;
mod ucp;
pub mod ucp_online;
mod user;
mod whirlpool;
mod yu_petrov;

pub use coloris::{ColorChange, ColorManager, ColorisConfig, Thresholds};
pub use coloris_control::{ColorDecision, ColorisControl, ColorisSetup, DecisionReason};
pub use controller::{Chain, Controller, Fixed, Static};
pub use driver::{drive, DriveError, Flow, RunLog, Stop};
pub use dunn::{dunn_plan, place_overlapping, ways_for_centroid, Dunn};
pub use dunn_dynamic::DunnDynamic;
pub use equal_part::EqualPart;
pub use error::PolicyError;
pub use kpart::{kpart_clusters, Kpart};
pub use kpart_dynaway::{DynawayParams, KpartDynaway};
pub use lfoc::{classify, classify_app, AppClass, Classification, Lfoc};
pub use lfoc_online::{Decision as LfocDecision, LfocOnline, LfocOnlineParams};
pub use lfoc_plus::{pair_clusters, LfocPlus, MAX_STEAL_COST};
pub use lfoc_preset::{LfocPreset, StreamingLayout, UnknownPreset};
pub use stock::Stock;
pub use tam_control::{TamCurve, TamStatic};
pub use tam_sizing::size_partitions;
pub use throttle_online::{
    PrefetchKnobs, ThrottleDecision, ThrottleMove, ThrottleOnline, ThrottleOnlineParams,
};
pub use ucp::{Ucp, UcpCurve};
pub use ucp_online::{UcpDecision, UcpOnline};
pub use user::{parse_plan, UserPlan};
pub use whirlpool::Whirlpool;
pub use yu_petrov::{yu_petrov_ways, YuPetrov};

use cachepart_machine::{Machine, Plan};

/// A partitioning policy.
pub trait Policy: Send {
    /// Kebab-case name (`ucp`, `lfoc`, ...).
    fn name(&self) -> &str;

    /// Decides a plan for the mix running on `machine`.
    fn decide(&mut self, machine: &mut dyn Machine) -> Result<Plan, PolicyError>;
}

/// Fails unless a strict partitioning of `n_apps` apps over `ways` ways exists.
pub(crate) fn require_ways(n_apps: usize, ways: u32, policy: &str) -> Result<(), PolicyError> {
    if n_apps == 0 {
        return Err(PolicyError::EmptyMix);
    }
    if n_apps > ways as usize {
        return Err(PolicyError::NotEnoughWays {
            policy: policy.to_string(),
            apps: n_apps,
            ways,
        });
    }
    Ok(())
}
