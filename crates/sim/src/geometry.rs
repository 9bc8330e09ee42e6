//! Cache geometry: size, ways, line size and the derived set count and
//! bit-selection index.
//!
//! [`CacheConfig`] is the configuration as written by users (serde,
//! kebab-case); [`Geometry`] is the checked form the simulator uses. The
//! checks are cachegrind's: a power-of-two line size, a size that is a
//! whole number of sets, and a power-of-two set count (the index is the
//! low bits of the line number).
//!
//! A cache may be split into `slices` (the LLC of a multicore chip, one
//! slice per core or per ring stop). Each slice holds `sets / slices`
//! sets, a power of two; a block's set is
//! `slice_hash(block) * sets_per_slice + (block % sets_per_slice)`.
//! `slice_hash` is our own hash in the spirit of Intel's undocumented
//! "complex addressing": the line-address bits above the per-slice index
//! are XOR-folded into `w = ceil(log2 slices) + 8` bits (bit `i` of the
//! fold is the XOR of address bits `i`, `i + w`, `i + 2w`, ...), and the
//! fold `h` picks slice `h mod slices` (for a power-of-two slice count,
//! the low bits of the fold, so every slice bit is an XOR of address bits;
//! otherwise every slice gets the same share of fold values to within
//! 0.4 %). The lowest bits above the per-slice index vary fastest, so even
//! a small footprint spreads over every slice.
//! Pages keep their colors: the per-slice index bits are plain bit
//! selection, so a color names the same sets in every slice. With one
//! slice the index is exactly bit selection.

use serde::{Deserialize, Serialize};

use crate::error::GeometryError;
use crate::replacement::PolicyKind;

/// Smallest line size accepted (cachegrind's own minimum is 16 B and is
/// checked by its mode).
pub const MIN_LINE: u32 = 4;

/// One cache level as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct CacheConfig {
    /// Capacity in bytes.
    pub size_bytes: u64,
    /// Associativity.
    pub ways: u32,
    /// Line size in bytes.
    pub line_bytes: u32,
    /// Replacement policy.
    #[serde(default)]
    pub policy: PolicyKind,
    /// Seed of the policy's random stream (random replacement only).
    #[serde(default)]
    pub seed: u64,
    /// Slices the sets are split into by an address hash (1: none).
    #[serde(default = "one_slice", skip_serializing_if = "is_one_slice")]
    pub slices: u32,
}

fn one_slice() -> u32 {
    1
}

fn is_one_slice(s: &u32) -> bool {
    *s == 1
}

impl CacheConfig {
    /// An LRU cache of `size_bytes` with `ways` ways and `line_bytes` lines.
    pub fn lru(size_bytes: u64, ways: u32, line_bytes: u32) -> Self {
        CacheConfig {
            size_bytes,
            ways,
            line_bytes,
            policy: PolicyKind::Lru,
            seed: 0,
            slices: 1,
        }
    }

    /// The same cache split into `slices` slices.
    pub fn with_slices(mut self, slices: u32) -> Self {
        self.slices = slices;
        self
    }

    /// The same cache with another replacement policy.
    pub fn with_policy(mut self, policy: PolicyKind) -> Self {
        self.policy = policy;
        self
    }

    /// The same cache with another seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The checked geometry.
    pub fn geometry(&self) -> Result<Geometry, GeometryError> {
        Geometry::sliced(self.size_bytes, self.ways, self.line_bytes, self.slices)
    }

    /// The geometry as valgrind's `--I1=`, `--D1=`, `--LL=` options write
    /// it: `size,ways,line`.
    pub fn valgrind_arg(&self) -> String {
        format!("{},{},{}", self.size_bytes, self.ways, self.line_bytes)
    }
}

/// A checked cache geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    size: u64,
    ways: u32,
    line: u32,
    sets: u64,
    line_bits: u32,
    slices: u32,
    /// log2 of the sets of one slice.
    slice_set_bits: u32,
    /// The sets of one slice less one: the mask of the bit-selection
    /// index (all of it unsliced, the index within the slice else).
    slice_set_mask: u64,
    /// Width of the slice hash's fold.
    fold_bits: u32,
    /// `slices - 1` when the slice count is a power of two (the slice is
    /// the fold's low bits), else 0 (the fold modulo the count). Kept
    /// here: `u32::is_power_of_two` counts bits, about 15 instructions on
    /// the baseline x86-64 target, on every hash.
    slice_low_mask: u64,
}

impl Geometry {
    /// Checks an unsliced geometry (bit-selection index).
    pub fn new(size: u64, ways: u32, line: u32) -> Result<Geometry, GeometryError> {
        Geometry::sliced(size, ways, line, 1)
    }

    /// Checks a geometry split into `slices` slices (see the module
    /// documentation); `slices == 1` is [`Geometry::new`].
    pub fn sliced(size: u64, ways: u32, line: u32, slices: u32) -> Result<Geometry, GeometryError> {
        if !line.is_power_of_two() {
            return Err(GeometryError::LineNotPowerOfTwo(line));
        }
        if line < MIN_LINE {
            return Err(GeometryError::LineTooSmall {
                line,
                min: MIN_LINE,
            });
        }
        if ways == 0 || ways > 64 {
            return Err(GeometryError::Ways(ways));
        }
        let set_bytes = u64::from(ways) * u64::from(line);
        let sets = size / set_bytes;
        if sets == 0 || sets * set_bytes != size {
            return Err(GeometryError::SizeNotMultiple { size, ways, line });
        }
        if slices == 0 || sets / u64::from(slices) * u64::from(slices) != sets {
            return Err(GeometryError::Slices { slices, sets });
        }
        let per_slice = sets / u64::from(slices);
        if !per_slice.is_power_of_two() {
            return Err(if slices == 1 {
                GeometryError::SetsNotPowerOfTwo { sets }
            } else {
                GeometryError::SliceSetsNotPowerOfTwo { slices, per_slice }
            });
        }
        let slice_bits = u32::BITS - (slices - 1).leading_zeros();
        Ok(Geometry {
            size,
            ways,
            line,
            sets,
            line_bits: line.trailing_zeros(),
            slices,
            slice_set_bits: per_slice.trailing_zeros(),
            slice_set_mask: per_slice - 1,
            fold_bits: slice_bits + 8,
            slice_low_mask: if slices.is_power_of_two() {
                u64::from(slices - 1)
            } else {
                0
            },
        })
    }

    /// Capacity in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Associativity.
    pub fn ways(&self) -> u32 {
        self.ways
    }

    /// Line size in bytes.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// log2 of the line size.
    pub fn line_bits(&self) -> u32 {
        self.line_bits
    }

    /// Number of sets.
    pub fn sets(&self) -> u64 {
        self.sets
    }

    /// Number of slices (1: unsliced).
    pub fn slices(&self) -> u32 {
        self.slices
    }

    /// Sets in one slice (all sets when unsliced).
    pub fn sets_per_slice(&self) -> u64 {
        1 << self.slice_set_bits
    }

    /// Number of lines (sets x ways).
    pub fn lines(&self) -> usize {
        (self.sets * u64::from(self.ways)) as usize
    }

    /// The mask with one bit per way.
    pub fn full_mask(&self) -> u64 {
        if self.ways == 64 {
            u64::MAX
        } else {
            (1u64 << self.ways) - 1
        }
    }

    /// The line (block) number of an address.
    #[inline]
    pub fn block_of(&self, addr: u64) -> u64 {
        addr >> self.line_bits
    }

    /// The set of a block: bit selection, the low bits of the block
    /// number, unsliced; else the slice hash's slice, then bit selection
    /// within it.
    #[inline(always)]
    pub fn set_of(&self, block: u64) -> usize {
        let within = block & self.slice_set_mask;
        if self.slices == 1 {
            within as usize
        } else {
            ((u64::from(self.slice_of(block)) << self.slice_set_bits) | within) as usize
        }
    }

    /// The slice of a block (0 when unsliced).
    #[inline]
    pub fn slice_of(&self, block: u64) -> u32 {
        if self.slices == 1 {
            return 0;
        }
        let h = self.fold(block >> self.slice_set_bits);
        // A power-of-two count takes the low bits (the same value as the
        // modulo, without a division).
        (if self.slice_low_mask != 0 {
            h & self.slice_low_mask
        } else {
            h % u64::from(self.slices)
        }) as u32
    }

    /// `x` XOR-folded into `w = fold_bits` bits: bit `i` is the XOR of
    /// bits `i`, `i + w`, `i + 2w`, ... of `x`. A loop over the `w`-bit
    /// chunks that stops at the last one set: physical block numbers have
    /// few bits above the index, so it runs once or twice.
    #[inline(always)]
    fn fold(&self, mut x: u64) -> u64 {
        let w = self.fold_bits;
        let mut h = 0u64;
        while x != 0 {
            h ^= x & ((1 << w) - 1);
            x >>= w;
        }
        h
    }
}

#[cfg(test)]
mod tests;
