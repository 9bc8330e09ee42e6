//! Page-color policies on the simulated machine (scenario section
//! `[coloring]`): COLORIS's static sections and dynamic monitor (Ye et
//! al., PACT'14) and Tam et al.'s static sizing (WIOSCA'07), driven by the
//! controller loop of [`crate::run::sim`].
//!
//! ```toml
//! [coloring]
//! policy = "coloris-dynamic"   # or "coloris-static", "tam-static"
//! unit = 1                     # colors per decision (UNIT)
//! period-intervals = 2         # PERIOD, in sampling intervals
//! low = 0.05                   # global Low / High miss-rate thresholds
//! high = 0.30
//! min-references = 0           # fewer LLC references in a period: miss rate 0
//! expand = "selective-moving"  # or "redistribution"
//! win-us = 3000                # Redistribution's window WIN, in us (at most 1e6)
//! # tam-static only:
//! curve = "miss-rate"          # or "stall-rate"
//! sweep-step = 1               # measure every sweep-step-th color count
//!
//! [[app]]
//! thresholds = { low = 0.01, high = 0.2 }   # this app's QoS (coloris-dynamic)
//! ```
//!
//! Each policy is a controller of `cachepart-policy` run on the loop of
//! [`crate::run::sim`] ([`ColorController`]):
//!
//! * **coloris-static**: the colors are cut into per-core sections of
//!   contiguous colors; each app, in scenario order, gets the whole section
//!   of its core (an app without `core` is placed on the least loaded
//!   core). See [`cachepart_policy::coloris_control`].
//! * **coloris-dynamic**: the same start; at the end of every
//!   `period-intervals` intervals the monitor judges the app running on
//!   each core (core by core, starting one core further each period) on
//!   its LLC references and misses over the period, and each change is a
//!   recoloring of the simulator (shrink: lazy recoloring; expand:
//!   `expand`). An app whose colors run out gets `unit` more by
//!   ALLOC_COLORS and retries; an app that finishes releases its colors.
//! * **tam-static**: every app runs alone with `k` colors for the color
//!   counts of the sweep (the machine's alone curves over colors); its
//!   curve (misses per kilo-instruction, or memory-stall cycles per billion
//!   cycles) is interpolated linearly between measured counts, and
//!   Tam's sizing splits the colors; apps get contiguous ranges in
//!   scenario order. The sweep costs `apps x colors / sweep-step` alone
//!   runs (in parallel). See [`cachepart_policy::tam_control`].
//!
//! Every decision that changed colors is reported as a [`RecolorEvent`].
//!
//! The section as written and its checks are in `config.rs`
//! ([`ColoringFile`] -> [`Coloring`]), the policies by name in `policy.rs`
//! ([`ColorPolicy`]); the controllers that carry a checked section out,
//! and the report of what they did, in `controller.rs`
//! ([`ColorController`], [`ColoringReport`]).

mod config;
mod controller;
mod policy;

pub use config::{Coloring, ColoringFile};
pub use controller::{ColorController, ColoringReport, RecolorEvent};
pub use policy::ColorPolicy;
