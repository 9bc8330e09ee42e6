//! The crate's error type: every way a simulator configuration can be wrong.

use cachepart_units::WayMask;
use thiserror::Error;

/// What is wrong with one cache level's geometry.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum GeometryError {
    /// The line size is not a power of two.
    #[error("line size {0} B is not a power of two")]
    LineNotPowerOfTwo(u32),
    /// The line size is below the minimum the model accepts.
    #[error("line size {line} B is below the minimum of {min} B")]
    LineTooSmall {
        /// The line size.
        line: u32,
        /// The minimum.
        min: u32,
    },
    /// No ways, or more than a 64-bit way mask can name.
    #[error("{0} ways: a cache needs 1 to 64 ways")]
    Ways(u32),
    /// The size is not a whole number of sets of `ways` lines, or none.
    #[error("size {size} B is not a positive multiple of ways x line = {ways} x {line} B")]
    SizeNotMultiple {
        /// The size in bytes.
        size: u64,
        /// Ways.
        ways: u32,
        /// Line size in bytes.
        line: u32,
    },
    /// The number of sets is not a power of two (bit selection needs one,
    /// as cachegrind does).
    #[error("{sets} sets (size / (ways x line)) is not a power of two, as bit-selection indexing requires")]
    SetsNotPowerOfTwo {
        /// The number of sets.
        sets: u64,
    },
    /// The slice count is zero or does not divide the sets.
    #[error("{slices} slices do not divide the {sets} sets evenly")]
    Slices {
        /// Slices asked for.
        slices: u32,
        /// Sets of the cache.
        sets: u64,
    },
    /// The sets of one slice are not a power of two.
    #[error("{per_slice} sets per slice ({slices} slices) is not a power of two, as the per-slice bit-selection index requires")]
    SliceSetsNotPowerOfTwo {
        /// Slices.
        slices: u32,
        /// Sets of one slice.
        per_slice: u64,
    },
    /// The cache is not larger than one line (cachegrind refuses it).
    #[error("size {size} B is not larger than the line size {line} B")]
    SizeNotAboveLine {
        /// The size in bytes.
        size: u64,
        /// Line size in bytes.
        line: u32,
    },
}

/// Every error of this crate.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum SimError {
    /// A cache level has an impossible geometry.
    #[error("{level}: {source}")]
    Geometry {
        /// The level (`L1I`, `L1D`, `L2`, `LLC`, ...).
        level: &'static str,
        /// What is wrong.
        source: GeometryError,
    },
    /// A way mask selects none of the cache's ways.
    #[error("way mask {mask} selects none of the {ways} ways of the LLC")]
    EmptyMask {
        /// The mask.
        mask: WayMask,
        /// Ways of the cache.
        ways: u32,
    },
    /// The configuration is not one the chosen mode supports.
    #[error("{0}")]
    Unsupported(String),
    /// cachegrind refuses a cache option (`--I1`, `--D1`, `--LL`).
    #[error("bad option {option}: {source}")]
    CachegrindOption {
        /// The option as cachegrind would be given it (`--LL=1000,2,64`).
        option: String,
        /// cachegrind's reason.
        source: crate::cachegrind_opt::CacheOptError,
    },
    /// A `cachegrind.out` file lacks its `events:` or `summary:` line.
    #[error("cachegrind output: {0}")]
    CachegrindOutput(String),
    /// The cachegrind simulation cannot be split over this many threads.
    #[error("cannot split the simulation over {threads} threads: {reason}")]
    Threads {
        /// The thread count asked for.
        threads: usize,
        /// Why not.
        reason: String,
    },
}

/// Shorthand for results of this crate.
pub type Result<T, E = SimError> = std::result::Result<T, E>;
