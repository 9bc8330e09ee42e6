//! The resctrl filesystem (`/sys/fs/resctrl`): capabilities, schemata,
//! groups, the manager lock and cleanup.
//!
//! Owned groups are named `cachepart-PID-NAME`, where PID is the manager
//! that created them: the name itself records the owner, so a crashed
//! manager's groups are found and removed on the next start
//! ([`cleanup`]) without any state outside the mount.

pub mod cleanup;
mod fsio;
pub mod group;
pub mod info;
pub mod lock;
pub mod monitor;
pub mod mount;
pub mod schemata;

pub use cleanup::remove_stale_groups;
pub use group::{GroupRef, Resctrl};
pub use info::{CacheInfo, Capabilities, MbInfo, MbUnits, MonInfo};
pub use lock::ManagerLock;
pub use monitor::{ByteCounter, MonReading};
pub use schemata::{Resource, Schemata, SchemataLine, Value};

/// The prefix of every group cachepart creates.
pub const PREFIX: &str = "cachepart-";

/// The usual mount point of resctrl.
pub const DEFAULT_MOUNT: &str = "/sys/fs/resctrl";
