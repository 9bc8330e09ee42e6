//! Physical memory as configured in a platform or scenario file: size,
//! allocator (with its parameters), initial aging, the costs of paging
//! and recoloring, and the colors of the page tables.
//!
//! ```
//! use cachepart_sim::memory::{ColorLayout, MemoryConfig};
//! let cfg: MemoryConfig = serde_json::from_str(
//!     r#"{ "size-bytes": 67108864, "aging": { "seed": 3 } }"#,
//! ).unwrap();
//! let mem = cfg.build().unwrap();
//! assert_eq!(mem.total_frames(), 16384);
//! assert!(mem.free_frames() < 16384);
//!
//! // A colored allocator needs the LLC's colors.
//! let cfg: MemoryConfig = serde_json::from_str(
//!     r#"{ "size-bytes": 67108864, "allocator": "tam", "tam": { "max-try": 50 } }"#,
//! ).unwrap();
//! let layout = ColorLayout::with_sets(4096, 64, 4096).unwrap();
//! let mut mem = cfg.build_colored(&layout).unwrap();
//! mem.set_app_colors(0, &"0-15".parse().unwrap()).unwrap();
//! ```

use cachepart_units::Kind as _;
use serde::{Deserialize, Serialize};

use super::address_space::PagingCosts;
use super::aging::{age, AgingConfig};
use super::allocator::{AllocatorKind, FrameAllocator};
use super::buddy::BuddyAllocator;
use super::color::ColorLayout;
use super::coloris::{ColorisAllocator, ColorisPoolConfig};
use super::error::MemoryError;
use super::frame_table::FrameTable;
use super::page_walk::TableColors;
use super::tam::{TamAllocator, TamConfig};

/// Physical memory: how much, which allocator, how aged, what paging
/// costs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct MemoryConfig {
    /// Bytes of physical memory (a multiple of 4 KiB).
    pub size_bytes: u64,
    /// The frame allocator: `buddy` (default), `tam` or `coloris`.
    #[serde(default)]
    pub allocator: AllocatorKind,
    /// Parameters of the `tam` allocator (used when `allocator` is `tam`).
    #[serde(default)]
    pub tam: TamConfig,
    /// Parameters of the `coloris` allocator (used when `allocator` is
    /// `coloris`).
    #[serde(default)]
    pub coloris: ColorisPoolConfig,
    /// Churn applied before the run (none: a fresh, sequential allocator).
    #[serde(default)]
    pub aging: Option<AgingConfig>,
    /// Costs of page copies, page-outs and page-ins.
    #[serde(default)]
    pub costs: PagingCosts,
    /// Which colors the page tables take (`"any"`, the default, or
    /// `"owner"`: the colors of the app they translate for; see
    /// [`TableColors`]). Matters only to walks through the caches.
    #[serde(default, skip_serializing_if = "is_default")]
    pub page_table_colors: TableColors,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

impl MemoryConfig {
    /// `size_bytes` of memory, buddy allocator, aged with the default
    /// churn and `seed`.
    pub fn aged(size_bytes: u64, seed: u64) -> MemoryConfig {
        MemoryConfig {
            size_bytes,
            allocator: AllocatorKind::Buddy,
            tam: TamConfig::default(),
            coloris: ColorisPoolConfig::default(),
            aging: Some(AgingConfig::seeded(seed)),
            costs: PagingCosts::default(),
            page_table_colors: TableColors::Any,
        }
    }

    /// Host bytes the simulated memory takes before a run touches it,
    /// each with the key that sizes it: the buddy allocator's chunk index
    /// (`memory.size-bytes`: a pointer per 4 MiB of memory), the
    /// bookkeeping aging touches (`memory.aging`: 12 B per frame of its
    /// window) and, with `allocator = "coloris"`, the frames its pool takes
    /// up front (`memory.coloris.pool-bytes`: their bookkeeping and a
    /// free-list entry each, counted twice for the lists' growth). What a
    /// run adds as its apps touch memory (page tables, more bookkeeping)
    /// depends on the apps and is not counted. A size past the
    /// allocator's 2^32 - 1 frames counts as that many: building the
    /// memory refuses it by name (`memory.size-bytes`, "more than 2^32 - 1
    /// frames").
    pub fn planned_bytes(&self) -> Vec<(&'static str, u128)> {
        let frames = (self.size_bytes / super::page::FRAME_BYTES).min(u64::from(u32::MAX));
        let entry = u128::from(FrameTable::ENTRY_BYTES);
        let index = u128::from(frames.div_ceil(super::frame_table::CHUNK_FRAMES))
            * u128::from(FrameTable::INDEX_BYTES_PER_CHUNK);
        let mut parts = vec![("memory.size-bytes", index)];
        let aged = self.aging.as_ref().map_or(0, |a| a.window_frames(frames));
        if aged > 0 {
            parts.push(("memory.aging", u128::from(aged) * entry));
        }
        if self.allocator == AllocatorKind::Coloris {
            let pooled = (self.coloris.pool_bytes / super::page::FRAME_BYTES).min(frames);
            let list = 2 * std::mem::size_of::<super::page::Frame>() as u128;
            let fresh = pooled.min(frames - aged);
            parts.push((
                "memory.coloris.pool-bytes",
                u128::from(pooled) * list + u128::from(fresh) * entry,
            ));
        }
        parts
    }

    fn buddy(&self) -> Result<BuddyAllocator, MemoryError> {
        self.costs.check()?;
        let mut b = BuddyAllocator::new(self.size_bytes)?;
        if let Some(a) = &self.aging {
            // Aging touches every frame of its window up to its fill: the
            // lazily allocated bookkeeping grows to ENTRY_BYTES per frame.
            let frames = a.window_frames(self.size_bytes / super::page::FRAME_BYTES);
            let per = FrameTable::ENTRY_BYTES;
            cachepart_units::check_allocation(
                "aging the simulated memory",
                &format!(
                    "memory.size-bytes {} (aging.window-bytes {}): {frames} frames x {per} B of bookkeeping, every frame touched by memory.aging",
                    self.size_bytes, a.window_bytes
                ),
                u128::from(frames) * u128::from(per),
            )?;
            age(&mut b, a)?;
        }
        Ok(b)
    }

    /// The allocator, aged as configured (the aging's resident blocks stay
    /// allocated for good). Color-aware allocators need the LLC's colors:
    /// for them this is an error naming `allocator`; use
    /// [`Self::build_colored`].
    pub fn build(&self) -> Result<Box<dyn FrameAllocator + Send>, MemoryError> {
        match self.allocator {
            AllocatorKind::Buddy => Ok(Box::new(self.buddy()?)),
            k => Err(MemoryError::Config {
                field: "allocator",
                reason: format!(
                    "{} colors pages and needs the LLC's color layout (MemoryConfig::build_colored)",
                    k.name()
                ),
            }),
        }
    }

    /// The allocator for an LLC whose colors are `layout`, aged as
    /// configured (the aging happens in the buddy allocator underneath,
    /// before a color-aware allocator takes its frames).
    pub fn build_colored(
        &self,
        layout: &ColorLayout,
    ) -> Result<Box<dyn FrameAllocator + Send>, MemoryError> {
        let buddy = self.buddy()?;
        Ok(match self.allocator {
            AllocatorKind::Buddy => Box::new(buddy),
            AllocatorKind::Tam => Box::new(TamAllocator::new(buddy, *layout, self.tam)),
            AllocatorKind::Coloris => {
                Box::new(ColorisAllocator::new(buddy, *layout, &self.coloris)?)
            }
        })
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
        let e = serde_json::from_str::<MemoryConfig>(r#"{"size-bytes": 4096, "allocator": "lru"}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown variant `lru`") && e.contains("tam"),
            "{e}"
        );
        let e =
            serde_json::from_str::<MemoryConfig>(r#"{"size-bytes": 4096, "tam": {"maxtry": 3}}"#)
                .unwrap_err()
                .to_string();
        assert!(e.contains("unknown field `maxtry`"), "{e}");
        let e = serde_json::from_str::<MemoryConfig>(
            r#"{"size-bytes": 4096, "page-table-colors": "mine"}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("unknown variant `mine`") && e.contains("`any`, `owner`")
                || e.contains("`any` or `owner`"),
            "{e}"
        );
        assert!("coloris".parse::<AllocatorKind>().is_ok());
        let e = "slab".parse::<AllocatorKind>().unwrap_err().to_string();
        assert!(e.contains("allocator") && e.contains("slab"), "{e}");
    }

    #[test]
    fn page_table_colors_are_read_and_the_default_is_not_written() {
        let cfg: MemoryConfig =
            serde_json::from_str(r#"{"size-bytes": 4096, "page-table-colors": "owner"}"#).unwrap();
        assert_eq!(cfg.page_table_colors, TableColors::Owner);
        assert!(serde_json::to_string(&cfg)
            .unwrap()
            .contains(r#""page-table-colors":"owner""#));
        let cfg: MemoryConfig = serde_json::from_str(r#"{"size-bytes": 4096}"#).unwrap();
        assert_eq!(cfg.page_table_colors, TableColors::Any);
        // Absent or default, a serialized memory is as before the key.
        assert!(!serde_json::to_string(&cfg).unwrap().contains("page-table"));
    }

    /// The planned bookkeeping: a pointer per 4 MiB, 12 B per aged frame,
    /// 28 B per coloris pool frame; sizes past the allocator's limit count
    /// as the limit (building refuses them by name).
    #[test]
    fn planned_bytes_follow_the_allocator() {
        let lazy = MemoryConfig {
            aging: None,
            ..MemoryConfig::aged(1 << 40, 0)
        };
        assert_eq!(lazy.planned_bytes(), [("memory.size-bytes", 2 << 20)]);
        let huge = MemoryConfig {
            size_bytes: 1 << 63,
            ..lazy.clone()
        };
        assert_eq!(huge.planned_bytes(), [("memory.size-bytes", 32 << 20)]);
        assert!(matches!(huge.build(), Err(MemoryError::MemorySize { .. })));
        let aged = MemoryConfig::aged(1 << 40, 0);
        // the default 16 GiB window
        assert_eq!(aged.planned_bytes()[1], ("memory.aging", (4 << 20) * 12));
        let coloris = MemoryConfig {
            allocator: AllocatorKind::Coloris,
            ..lazy
        };
        assert_eq!(
            coloris.planned_bytes()[1],
            ("memory.coloris.pool-bytes", (1 << 18) * 28)
        );
    }

    #[test]
    fn aging_more_memory_than_the_host_has_is_refused_up_front() {
        // 16 TiB - 8 KiB: the largest memory; aging all of it would touch
        // 48 GiB of bookkeeping. Only checked where that exceeds the host.
        let bytes = (1 << 44) - 8192;
        let mut cfg = MemoryConfig::aged(bytes, 1);
        cfg.aging.as_mut().unwrap().window_bytes = bytes;
        let need = ((1u64 << 32) - 2) * FrameTable::ENTRY_BYTES;
        if cachepart_units::host_memory::host_memory_bytes().is_some_and(|m| m < need) {
            let e = cfg.build().err().unwrap();
            assert!(matches!(e, MemoryError::TooLarge(_)), "{e:?}");
            let m = e.to_string();
            assert!(
                m.contains("memory.size-bytes") && m.contains("aging.window-bytes"),
                "{m}"
            );
        }
        // Aging only a window touches only its bookkeeping: a terabyte
        // with the default 16 GiB window builds.
        let windowed = MemoryConfig::aged(1 << 40, 1);
        assert_eq!(
            windowed.aging.unwrap().window_frames(1 << 28),
            (16 << 30) / 4096
        );
        let mut b = windowed.build().unwrap();
        assert_eq!(b.total_frames(), 1 << 28);
        let f = b.alloc(0, Default::default()).unwrap();
        assert!(f.0 < (16 << 30) / 4096, "{f:?}");
        cfg.aging.as_mut().unwrap().window_bytes = 64 << 20;
        assert_eq!(cfg.build().unwrap().total_frames(), (1 << 32) - 2);
        // Without aging nothing is touched: built at once, whatever its size.
        let lazy = MemoryConfig { aging: None, ..cfg };
        assert_eq!(lazy.build().unwrap().total_frames(), (1 << 32) - 2);
    }

    #[test]
    fn colored_kinds_need_a_layout() {
        let layout = ColorLayout::with_sets(1024, 64, 4096).unwrap();
        for (kind, name) in [
            (AllocatorKind::Tam, "tam"),
            (AllocatorKind::Coloris, "coloris"),
        ] {
            let cfg = MemoryConfig {
                allocator: kind,
                ..MemoryConfig::aged(8 << 20, 2)
            };
            let e = cfg.build().err().unwrap().to_string();
            assert!(e.contains("allocator") && e.contains(name), "{e}");
            let mut m = cfg.build_colored(&layout).unwrap();
            assert_eq!(m.kind(), kind);
            let e = m.set_app_colors(0, &"3,16".parse().unwrap()).unwrap_err();
            assert_eq!(
                e,
                MemoryError::ColorOutOfRange {
                    color: 16,
                    colors: 16
                }
            );
        }
        let cfg = MemoryConfig {
            costs: PagingCosts {
                page_in_us: -1.0,
                ..PagingCosts::default()
            },
            ..MemoryConfig::aged(8 << 20, 2)
        };
        let e = cfg.build().err().unwrap().to_string();
        assert!(e.contains("costs.page-in-us"), "{e}");
    }
}
