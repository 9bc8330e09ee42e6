//! Mix metrics from per-app slowdowns: [`MixMetrics`] and [`round3`],
//! defined in `cachepart-machine` (policies that act on the metrics while a
//! mix runs use them too) and re-exported here, where the table-driven
//! model's reports have always found them.

pub use cachepart_machine::metrics::{round3, MixMetrics};
