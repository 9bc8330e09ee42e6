//! Physical memory as configured in a platform or scenario file: size,
//! allocator and initial aging.
//!
//! ```
//! use cachepart_sim::memory::MemoryConfig;
//! let cfg: MemoryConfig = serde_json::from_str(
//!     r#"{ "size-bytes": 67108864, "aging": { "seed": 3 } }"#,
//! ).unwrap();
//! let mem = cfg.build().unwrap();
//! assert_eq!(mem.total_frames(), 16384);
//! assert!(mem.free_frames() < 16384);
//! ```

use serde::{Deserialize, Serialize};

use super::aging::{age, AgingConfig};
use super::allocator::{AllocatorKind, FrameAllocator};
use super::buddy::BuddyAllocator;
use super::error::MemoryError;

/// Physical memory: how much, which allocator, how aged.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct MemoryConfig {
    /// Bytes of physical memory (a multiple of 4 KiB).
    pub size_bytes: u64,
    /// The frame allocator.
    #[serde(default)]
    pub allocator: AllocatorKind,
    /// Churn applied before the run (none: a fresh, sequential allocator).
    #[serde(default)]
    pub aging: Option<AgingConfig>,
}

impl MemoryConfig {
    /// `size_bytes` of memory, buddy allocator, aged with the default
    /// churn and `seed`.
    pub fn aged(size_bytes: u64, seed: u64) -> MemoryConfig {
        MemoryConfig {
            size_bytes,
            allocator: AllocatorKind::Buddy,
            aging: Some(AgingConfig::seeded(seed)),
        }
    }

    /// The allocator, aged as configured (the aging's resident blocks stay
    /// allocated for good).
    pub fn build(&self) -> Result<Box<dyn FrameAllocator + Send>, MemoryError> {
        match self.allocator {
            AllocatorKind::Buddy => {
                let mut b = BuddyAllocator::new(self.size_bytes)?;
                if let Some(a) = &self.aging {
                    age(&mut b, a)?;
                }
                Ok(Box::new(b))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_rejects() {
        let m = MemoryConfig::aged(32 << 20, 1).build().unwrap();
        assert_eq!(m.total_frames(), 8192);
        let bad = MemoryConfig {
            size_bytes: 5000,
            ..MemoryConfig::aged(0, 0)
        };
        assert!(matches!(bad.build(), Err(MemoryError::MemorySize { .. })));
        let e = serde_json::from_str::<MemoryConfig>(r#"{"size-bytes": 4096, "allocator": "tam"}"#);
        assert!(e.is_err());
    }
}
