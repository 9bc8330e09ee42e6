//! What users write: scenario files ([`scenario`]), the built-in platforms
//! ([`platforms`]) and data sets ([`builtin`]), `--set KEY=VALUE` changes
//! to a scenario ([`key_set`]), the data sources the CLI and Python both
//! load ([`data`]: a metrics table and its mixes) and the option checks
//! both make ([`options`]).

pub mod builtin;
pub mod data;
pub mod key_set;
pub mod options;
pub mod platforms;
pub mod scenario;
