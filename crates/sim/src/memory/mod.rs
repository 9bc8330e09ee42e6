//! The memory model: per-application virtual address spaces mapped to a
//! finite physical memory by a modelled allocator, per-core TLBs, and a
//! core that drives the cache hierarchy with physical addresses.
//!
//! * [`page`]: page sizes (4 KiB, 2 MiB) and [`Frame`] numbers.
//! * [`allocator`]: the [`FrameAllocator`] trait (`alloc(order, hint)`,
//!   `free`, per-app colors) with [`AllocHint`] (app, virtual page, wanted
//!   color, shared), [`AllocatorKind`] (`buddy`, `tam`, `coloris`) and
//!   [`AppAllocStats`].
//! * [`buddy`]: [`BuddyAllocator`], Linux's binary buddy allocator (free
//!   lists of orders 0..=10, lowest fit, split and merge).
//! * [`color_pool`]: per-color free lists and per-app color sets with
//!   round-robin cursors, shared by the two color-aware allocators.
//! * [`tam`]: [`TamAllocator`], Tam et al.'s per-color lists refilled from
//!   the buddy allocator with a counted MaxTry fallback.
//! * [`coloris`]: [`ColorisAllocator`], COLORIS's memory pool of per-color
//!   lists, round-robin, no fallback, shared pages ([`SharedColors`]).
//! * [`aging`]: [`age`], a seeded churn that fragments an allocator so that
//!   frames, and so colors, come out scattered as on a real machine.
//! * [`color`]: [`ColorLayout`], the colors of an LLC (per slice), the
//!   color of a physical address, color sets in the range syntax.
//! * [`color_report`]: [`ColorReport`], the color layout summarized for
//!   `cachepart platform colors`.
//! * [`config`]: [`MemoryConfig`], physical memory as configured (size,
//!   allocator and its parameters, aging, paging costs).
//! * [`address_space`]: [`AddressSpace`], one application's page table,
//!   mapped on first touch, 4 KiB or 2 MiB pages ([`HugePages`]), unmap,
//!   page-outs and page-ins with their costs ([`PagingCosts`]), recoloring
//!   marks, moves and access bits.
//! * [`recolor`]: [`RecolorEngine`], COLORIS's recoloring: lazy shrink,
//!   Selective Moving and Redistribution.
//! * [`tlb_array`] and [`tlb`]: [`Tlb`], one core's L1 ITLB/DTLB (separate
//!   arrays per page size) and unified STLB, LRU, with page-walk counts.
//! * [`page_walk`]: the STLB's page sizes ([`StlbPageSizes`]), the walk
//!   model ([`WalkMode`]), and for walks through the caches the walker's
//!   paging-structure caches ([`PagingStructureCaches`], [`PscConfig`])
//!   and where the page tables lie ([`TablePlacement`], [`TableColors`]).
//! * [`swap_map`]: [`SwapMap`], SWAP's pseudo-physical layer: the bit
//!   swap between the frames allocators hand out and physical addresses,
//!   configured by a platform's `[swap]` section ([`SwapConfig`]).
//! * [`physical_core`]: [`PhysicalCore`], translation in front of a
//!   [`Hierarchy`](crate::Hierarchy), so the shared LLC is physically
//!   indexed.
//!
//! ```
//! use cachepart_sim::memory::{AddressSpace, BuddyAllocator, HugePages, PhysicalCore, Tlb, TlbConfig};
//! use cachepart_sim::{Cache, CacheConfig, Hierarchy, HierarchyConfig};
//! use cachepart_trace::{Kind, Record};
//! let l1 = CacheConfig::lru(32 << 10, 8, 64);
//! let mut llc = Cache::new(&CacheConfig::lru(1 << 20, 16, 64)).unwrap();
//! let hier = Hierarchy::new(
//!     &HierarchyConfig::split_l1(l1),
//!     &llc,
//! ).unwrap();
//! let mut mem = BuddyAllocator::new(64 << 20).unwrap();
//! let tlb = Tlb::new(&TlbConfig::default()).unwrap();
//! let mut core = PhysicalCore::new(hier, tlb, AddressSpace::new(0, HugePages::Never));
//! core.access(&mut llc, &mut mem, Record::access(Kind::Load, 0x7fff_1000, 8, 0).unwrap()).unwrap();
//! let s = core.stats();
//! assert_eq!((s.paging.faults_4k, s.tlb.walks, s.hierarchy.llc.total_misses()), (1, 1, 1));
//! ```

pub mod address_space;
pub mod aging;
pub mod allocator;
pub mod buddy;
pub mod color;
pub mod color_pool;
pub mod color_report;
pub mod coloris;
pub mod config;
mod error;
mod frame_table;
pub mod page;
mod page_table;
pub mod page_walk;
pub mod physical_core;
pub mod recolor;
pub mod swap_map;
pub mod tam;
pub mod tlb;
pub mod tlb_array;

pub use address_space::{AddressSpace, HugePages, HugeRecolor, PagingCosts, PagingStats};
pub use aging::{age, AgingConfig};
pub use allocator::{AllocHint, AllocatorKind, AppAllocStats, FrameAllocator};
pub use buddy::{BuddyAllocator, MAX_ORDER};
pub use color::ColorLayout;
pub use color_report::ColorReport;
pub use coloris::{ColorisAllocator, ColorisPoolConfig, SharedColors};
pub use config::MemoryConfig;
pub use error::MemoryError;
pub use page::{Frame, PageSize, FRAME_BYTES};
pub use page_walk::{
    PagingStructureCaches, PscConfig, StlbPageSizes, TableColors, TablePlacement, WalkMode,
};
pub use physical_core::{PhysicalCore, PhysicalStats, Translated};
pub use recolor::{ExpandPolicy, RecolorAction, RecolorConfig, RecolorEngine, MAX_WIN_US};
pub use swap_map::{SwapConfig, SwapMap, SwapMode, SwapPosition, MAX_SWAP_BITS};
pub use tam::{TamAllocator, TamConfig};
pub use tlb::{Tlb, TlbConfig, TlbLevelStats, TlbStats};
pub use tlb_array::{TlbArray, TlbArrayConfig};
