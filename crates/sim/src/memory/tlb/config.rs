//! The geometry of one core's TLBs ([`TlbConfig`]) and its defaults
//! (Intel Skylake's).

use serde::{Deserialize, Serialize};

use super::super::page_walk::{PscConfig, StlbPageSizes, WalkMode};
use super::super::tlb_array::TlbArrayConfig;

/// Geometry of one core's TLBs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct TlbConfig {
    /// L1 data TLB, 4 KiB pages.
    #[serde(default = "d4k")]
    pub l1d_4k: TlbArrayConfig,
    /// L1 data TLB, 2 MiB pages.
    #[serde(default = "d2m")]
    pub l1d_2m: TlbArrayConfig,
    /// L1 instruction TLB, 4 KiB pages.
    #[serde(default = "i4k")]
    pub l1i_4k: TlbArrayConfig,
    /// L1 instruction TLB, 2 MiB pages.
    #[serde(default = "i2m")]
    pub l1i_2m: TlbArrayConfig,
    /// Unified second-level TLB (both sizes, both kinds).
    #[serde(default = "stlb")]
    pub stlb: TlbArrayConfig,
    /// Cycles of one page walk (an STLB miss).
    #[serde(default = "walk")]
    pub walk_cycles: u32,
    /// Page sizes the STLB holds (`"both"`, the default, or `"4k"`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub stlb_page_sizes: StlbPageSizes,
    /// Cycles an L1 TLB miss that hits the STLB costs (default 0).
    #[serde(default, skip_serializing_if = "is_default")]
    pub stlb_hit_cycles: u32,
    /// How page walks are modelled (`"flat"`, the default, or
    /// `"hierarchy"`: page-table loads through the caches).
    #[serde(default, skip_serializing_if = "is_default")]
    pub walk: WalkMode,
    /// The walker's paging-structure caches (`walk = "hierarchy"` only).
    #[serde(default, skip_serializing_if = "is_default")]
    pub psc: PscConfig,
}

pub(super) fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

fn d4k() -> TlbArrayConfig {
    TlbArrayConfig::new(64, 4)
}
fn d2m() -> TlbArrayConfig {
    TlbArrayConfig::new(32, 4)
}
fn i4k() -> TlbArrayConfig {
    TlbArrayConfig::new(128, 8)
}
fn i2m() -> TlbArrayConfig {
    TlbArrayConfig::new(8, 8)
}
fn stlb() -> TlbArrayConfig {
    TlbArrayConfig::new(1536, 12)
}
fn walk() -> u32 {
    30
}

impl Default for TlbConfig {
    fn default() -> Self {
        TlbConfig {
            l1d_4k: d4k(),
            l1d_2m: d2m(),
            l1i_4k: i4k(),
            l1i_2m: i2m(),
            stlb: stlb(),
            walk_cycles: walk(),
            stlb_page_sizes: StlbPageSizes::Both,
            stlb_hit_cycles: 0,
            walk: WalkMode::Flat,
            psc: PscConfig::default(),
        }
    }
}
