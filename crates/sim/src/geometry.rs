//! Cache geometry: size, ways, line size and the derived set count and
//! bit-selection index.
//!
//! [`CacheConfig`] is the configuration as written by users (serde,
//! kebab-case); [`Geometry`] is the checked form the simulator uses. The
//! checks are cachegrind's: a power-of-two line size, a size that is a
//! whole number of sets, and a power-of-two set count (the index is the
//! low bits of the line number). A hashed or sliced index can be added as
//! another way of computing [`Geometry::set_of`].

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
        }
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
        Geometry::new(self.size_bytes, self.ways, self.line_bytes)
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
}

impl Geometry {
    /// Checks a geometry.
    pub fn new(size: u64, ways: u32, line: u32) -> Result<Geometry, GeometryError> {
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
        if !sets.is_power_of_two() {
            return Err(GeometryError::SetsNotPowerOfTwo { sets });
        }
        Ok(Geometry {
            size,
            ways,
            line,
            sets,
            line_bits: line.trailing_zeros(),
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

    /// The set of a block: bit selection, the low bits of the block number.
    #[inline]
    pub fn set_of(&self, block: u64) -> usize {
        (block & (self.sets - 1)) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derives_sets_and_bits() {
        let g = Geometry::new(32 << 10, 8, 64).unwrap();
        assert_eq!(g.sets(), 64);
        assert_eq!(g.line_bits(), 6);
        assert_eq!(g.lines(), 512);
        assert_eq!(g.full_mask(), 0xff);
        assert_eq!(g.set_of(g.block_of(0x1234_5678)), (0x1234_5678 >> 6) & 63);
    }

    #[test]
    fn rejects_what_cachegrind_rejects() {
        // 12 ways are fine when the set count is a power of two.
        assert_eq!(Geometry::new(3 << 20, 12, 64).unwrap().sets(), 4096);
        assert_eq!(
            Geometry::new(6 << 20, 16, 64),
            Err(GeometryError::SetsNotPowerOfTwo { sets: 6144 })
        );
        assert_eq!(
            Geometry::new(32 << 10, 8, 48),
            Err(GeometryError::LineNotPowerOfTwo(48))
        );
        assert_eq!(
            Geometry::new(1000, 8, 64),
            Err(GeometryError::SizeNotMultiple {
                size: 1000,
                ways: 8,
                line: 64
            })
        );
        assert_eq!(Geometry::new(4096, 0, 64), Err(GeometryError::Ways(0)));
        assert_eq!(Geometry::new(1 << 20, 65, 64), Err(GeometryError::Ways(65)));
        let msg = Geometry::new(6 << 20, 16, 64).unwrap_err().to_string();
        assert!(msg.contains("6144 sets"), "{msg}");
    }

    #[test]
    fn config_prints_valgrind_syntax() {
        assert_eq!(CacheConfig::lru(32768, 8, 64).valgrind_arg(), "32768,8,64");
    }
}
