//! Miss-rate curves from memory traces: the misses of an LRU cache at
//! every size, exactly in one pass or estimated from a sample.
//!
//! Every builder takes any iterator of [`cachepart_trace::Record`]s and
//! [`Options`] (line size; data accesses only, or instruction fetches too)
//! and yields a [`Curve`]: misses per cache size, with the reference and
//! instruction counts behind miss ratios and MPKI.
//!
//! * [`fully_associative`] ([`FullyAssociative`] record by record): exact
//!   LRU stack distances with a Fenwick tree over access times, into a
//!   [`StackHistogram`] that gives the misses at every size in lines.
//! * [`set_associative`]: exact misses of an `S`-set cache at every way
//!   count `1..=W` (every CAT way allocation), from per-set stacks.
//! * [`colored`]: exact misses when an application is confined to `c` of
//!   a cache's `C` page colors, for every `c`; the page-to-color rule is in
//!   the [`colors`] module docs.
//! * [`shards`] ([`Shards`]; [`shards_slice`] for an in-memory trace):
//!   SHARDS sampling (Waldspurger et al., FAST 2015) at a fixed rate or in
//!   fixed memory, with a reference sample for the small sizes, into a
//!   [`ShardsEstimate`]; [`ShardsIndex`] (built by [`build_index`])
//!   stores a trace's base sample so that SHARDS at rates up to
//!   [`BASE_RATE`] skips the pass over the trace, with the same estimate.
//! * [`mean_absolute_error`], [`log_sizes`] and [`line_sizes`]: comparing
//!   curves, and the sizes to compare them at.
//! * [`UntilError`]: feeds a fallible trace reader to the builders.
//!
//! `docs/curves.md` defines each curve and gives SHARDS' measured error.
//!
//! ```
//! use cachepart_curves::{fully_associative, log_sizes, Options};
//! use cachepart_trace::synth::{Distribution, Pattern, SynthConfig};
//! let cfg = SynthConfig {
//!     seed: 1, accesses: 20_000,
//!     pattern: Pattern::CacheSensitive {
//!         working_set_bytes: 64 << 10, distribution: Distribution::Uniform, zipf_exponent: 0.0,
//!     },
//!     mix: Default::default(), base: 0x1000_0000, line_bytes: 64,
//! };
//! let h = fully_associative(cfg.generator().unwrap(), &Options::default()).unwrap();
//! let curve = h.curve(&log_sizes(1024, 1 << 20, 1).unwrap()).unwrap();
//! // A 64 KiB working set fits in 64 KiB and more: only cold misses remain.
//! assert_eq!(curve.misses[6], h.cold);
//! assert!(curve.miss_ratio(0) > 0.9);
//! ```
#![deny(missing_docs)]

pub mod colors;
mod curve;
mod error;
mod fenwick;
mod fully_assoc;
mod hash;
mod histogram;
mod line_map;
mod lookback;
mod options;
mod raw;
mod set_assoc;
mod set_stacks;
mod shards;
pub mod shards_index;
mod stack;
mod until_error;

pub use colors::{colored, ColorCurves, ColorGeometry};
pub use curve::{line_sizes, log_sizes, mean_absolute_error, Curve, Point, MAX_PER_OCTAVE};
pub use error::{CurveError, Result};
pub use fully_assoc::{fully_associative, FullyAssociative};
pub use hash::mix64;
pub use histogram::StackHistogram;
pub use lookback::WINDOW as LOOKBACK_WINDOW;
pub use options::{Options, Totals};
pub use set_assoc::{set_associative, SetAssoc, MAX_WAYS};
pub use shards::{
    shards, shards_slice, Sampling, Shards, ShardsConfig, ShardsEstimate, BASE_RATE, BASE_REF_RATE,
    DEFAULT_EXACT_BELOW, DEFAULT_REFERENCE_FRACTION, MAX_EXACT_BELOW, MIN_SAMPLE,
};
pub use shards_index::{
    build_index, build_index_with_base_salt, index_path, IndexSummary, ShardsIndex,
};
pub use until_error::UntilError;
