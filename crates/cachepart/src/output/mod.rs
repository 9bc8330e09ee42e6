//! What users read: profile runs' rows and formats ([`report`]), the
//! trade-off chart ([`chart`]), per-interval samples as CSV or Parquet
//! ([`samples`]), a simulated scenario's report ([`sim`]) and the
//! throttling search's report ([`throttle_search`]).

pub mod chart;
pub mod report;
pub mod samples;
pub mod sim;
pub mod throttle_search;
