//! What paging and recoloring cost an application ([`PagingCosts`], in
//! microseconds; [`CostsNs`] in nanoseconds), when superpages are used
//! ([`HugePages`], [`HugeRecolor`]) and what an address space counts
//! ([`PagingStats`]).

use serde::{Deserialize, Serialize};

use crate::memory::error::MemoryError;
use crate::memory::page::Frame;

/// Costs of paging and recoloring, charged to the application's time
/// (scenario key `costs` of the memory section).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct PagingCosts {
    /// Microseconds to copy one 4 KiB page (a recoloring move; default 3,
    /// the figure Zhang et al. measured).
    #[serde(default = "default_copy")]
    pub page_copy_us: f64,
    /// Microseconds to page one 4 KiB page out (default 20: reclaim and
    /// an asynchronous write to swap).
    #[serde(default = "default_out")]
    pub page_out_us: f64,
    /// Microseconds to page one 4 KiB page in (default 100: a random
    /// 4 KiB read from a solid-state swap device).
    #[serde(default = "default_in")]
    pub page_in_us: f64,
}

fn default_copy() -> f64 {
    3.0
}
fn default_out() -> f64 {
    20.0
}
fn default_in() -> f64 {
    100.0
}

impl Default for PagingCosts {
    fn default() -> PagingCosts {
        PagingCosts {
            page_copy_us: default_copy(),
            page_out_us: default_out(),
            page_in_us: default_in(),
        }
    }
}

impl PagingCosts {
    /// Checks that every cost is a finite, non-negative number.
    pub fn check(&self) -> Result<(), MemoryError> {
        for (field, v) in [
            ("costs.page-copy-us", self.page_copy_us),
            ("costs.page-out-us", self.page_out_us),
            ("costs.page-in-us", self.page_in_us),
        ] {
            // One message for NaN, infinities, negative and too long.
            if !(v.is_finite() && (0.0..=MAX_COST_US).contains(&v)) {
                return Err(MemoryError::Config {
                    field,
                    reason: format!(
                        "{v}: expected a finite number of microseconds from 0 to {MAX_COST_US} (one second)"
                    ),
                });
            }
        }
        Ok(())
    }
}

/// The longest a page copy, page-out or page-in may cost: one second (a
/// disk's is milliseconds), so that a run's clock in ticks lasts millions
/// of them.
pub const MAX_COST_US: f64 = 1e6;

fn ns(us: f64) -> u64 {
    (us * 1000.0).round().max(0.0) as u64
}

/// The costs in integer nanoseconds (so counters stay exact).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct CostsNs {
    pub(super) copy: u64,
    pub(super) out: u64,
    pub(super) inn: u64,
}

impl From<PagingCosts> for CostsNs {
    fn from(c: PagingCosts) -> CostsNs {
        CostsNs {
            copy: ns(c.page_copy_us),
            out: ns(c.page_out_us),
            inn: ns(c.page_in_us),
        }
    }
}

/// When pages are mapped as 2 MiB superpages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HugePages {
    /// Only 4 KiB pages.
    #[default]
    Never,
    /// A superpage on the first touch of an empty aligned 2 MiB region,
    /// falling back to 4 KiB when no order-9 block is free.
    Always,
}

/// Page-table counters of one address space.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PagingStats {
    /// First touches mapped with a 4 KiB page.
    pub faults_4k: u64,
    /// First touches mapped with a 2 MiB page.
    pub faults_2m: u64,
    /// Superpage faults that fell back to 4 KiB (no order-9 block free).
    pub huge_fallbacks: u64,
    /// Superpages split into 4 KiB pages by a partial unmap.
    pub splits: u64,
    /// 4 KiB pages unmapped.
    pub unmapped_4k: u64,
    /// 2 MiB pages unmapped.
    pub unmapped_2m: u64,
    /// 4 KiB pages paged out to make room (memory or the app's colors
    /// exhausted).
    pub page_outs: u64,
    /// Paged-out pages touched again and paged back in.
    pub page_ins: u64,
    /// Nanoseconds of page-outs and page-ins, charged to the app.
    pub swap_ns: u64,
    /// Pages moved to a frame of another color (lazily on touch, or at
    /// once by Selective Moving).
    pub pages_recolored: u64,
    /// Nanoseconds of page copies for recoloring, charged to the app.
    pub copy_ns: u64,
    /// Marked pages that could not move (no frame at all): they stay.
    pub recolor_failures: u64,
    /// Superpages recolored by a move of the whole 2 MiB
    /// ([`AddressSpace::recolor_huge`](super::AddressSpace::recolor_huge); each also counts 512 pages in
    /// `pages_recolored` and 512 page copies in `copy_ns`).
    #[serde(default)]
    pub superpages_moved: u64,
    /// Superpages recolored by a split into 4 KiB pages that move lazily
    /// ([`AddressSpace::recolor_huge`](super::AddressSpace::recolor_huge)).
    #[serde(default)]
    pub superpage_recolor_splits: u64,
}

/// What [`AddressSpace::recolor_huge`](super::AddressSpace::recolor_huge) did with a superpage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HugeRecolor {
    /// Moved whole to a new 2 MiB block from the allocator (under SWAP, a
    /// pseudo-superpage of the app's colors): 512 page copies at once.
    Moved(Frame),
    /// No 2 MiB block was free: split into 512 4 KiB pages in place, of
    /// which `marked` (those not of the app's colors) move lazily on their
    /// next touch, one page copy each.
    Split {
        /// 4 KiB pages marked for a lazy move.
        marked: u64,
    },
}

impl PagingStats {
    /// Nanoseconds the app spent in paging and recoloring (`swap_ns +
    /// copy_ns`), for the timing loop to add to its time.
    pub fn stall_ns(&self) -> u64 {
        self.swap_ns + self.copy_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Costs from zero to one second pass; a negative, infinite or longer
    /// cost is refused naming its key.
    #[test]
    fn costs_beyond_a_second_are_refused_naming_the_key() {
        let zero = PagingCosts {
            page_copy_us: 0.0,
            page_out_us: 0.0,
            page_in_us: 0.0,
        };
        assert!(zero.check().is_ok());
        let max = PagingCosts {
            page_copy_us: MAX_COST_US,
            page_out_us: MAX_COST_US,
            page_in_us: MAX_COST_US,
        };
        assert!(max.check().is_ok());
        for (costs, key) in [
            (
                PagingCosts {
                    page_copy_us: 1e300,
                    ..zero
                },
                "costs.page-copy-us",
            ),
            (
                PagingCosts {
                    page_out_us: 1.5e6,
                    ..zero
                },
                "costs.page-out-us",
            ),
            (
                PagingCosts {
                    page_in_us: f64::INFINITY,
                    ..zero
                },
                "costs.page-in-us",
            ),
            (
                PagingCosts {
                    page_in_us: -1.0,
                    ..zero
                },
                "costs.page-in-us",
            ),
            (
                PagingCosts {
                    page_out_us: f64::NAN,
                    ..zero
                },
                "costs.page-out-us",
            ),
        ] {
            match costs.check() {
                Err(MemoryError::Config { field, reason }) => {
                    assert_eq!(field, key);
                    assert!(
                        reason.ends_with(
                            ": expected a finite number of microseconds from 0 to 1000000 (one second)"
                        ),
                        "{reason}"
                    );
                }
                other => panic!("{key}: {other:?}"),
            }
        }
    }
}
