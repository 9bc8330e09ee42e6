//! Value types with units, shared by every cachepart crate.
//!
//! This crate owns the small vocabulary types that cross crate boundaries:
//!
//! * [`WayMask`]: a capacity bitmask over LLC ways, parsed and printed in the
//!   resctrl schemata hex syntax (`0x7f0` or `7f0`), with resctrl's own
//!   validation rules ([`MaskRules`]), and resctrl's exclusive mode between
//!   groups ([`check_exclusive`]).
//! * [`host_memory`]: a planned allocation checked against the host's
//!   physical memory ([`check_allocation`]) before it is made.
//! * [`IdSet`]: a set of small integers (colors, cores, CPUs) written in the
//!   range syntax that Linux cpusets, Xen and Jailhouse use (`0-15,32`).
//! * [`Kind`]: a kebab-case kind name (algorithms, replacement policies,
//!   curve kinds, ...): names, parsing and the list of names for messages
//!   from strum's derives ([`mod@kind`], marked [`#[kind]`](macro@kind)).
//!
//! ```
//! use cachepart_units::{IdSet, WayMask};
//! let m: WayMask = "0x7f0".parse().unwrap();
//! assert_eq!(m.count(), 7);
//! let s: IdSet = "0-3,8".parse().unwrap();
//! assert_eq!(s.to_string(), "0-3,8");
//! ```
#![deny(missing_docs)]

pub mod host_memory;
mod idset;
pub mod input;
pub mod kind;
mod mask_groups;
mod waymask;

pub use cachepart_macros::kind;
pub use host_memory::{check_allocation, TooLarge};
pub use idset::{IdSet, IdSetError};
pub use kind::Kind;
pub use mask_groups::{check_exclusive, GroupMode, OverlapError};
/// strum, whose derives make a [`Kind`].
pub use strum;
pub use waymask::{MaskError, MaskRules, WayMask};
