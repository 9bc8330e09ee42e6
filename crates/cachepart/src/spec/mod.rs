//! What users write: scenario files ([`scenario`]), the built-in platforms
//! ([`platforms`]) and data sets ([`builtin`]), `--set KEY=VALUE` changes
//! to a scenario ([`key_set`]) and the options shared by the commands that
//! load mixes ([`options`]).

pub mod builtin;
pub mod key_set;
pub mod options;
pub mod platforms;
pub mod scenario;
