//! What users read: profile runs' rows and formats ([`report`]), the
//! trade-off chart ([`chart`]), per-interval samples as CSV or Parquet
//! ([`samples`]), a simulated scenario's report ([`sim`]) and the
//! throttling search's report ([`throttle_search`]).
//!
//! Every output is written one way: each command's results are row
//! structs deriving [`serde::Serialize`] (one struct per output table,
//! the columns being its fields in order, named as serde names them), and
//! one writer per format turns a row set into text:
//!
//! * [`to_csv`]: CSV with a header row, fields quoted only where needed
//!   (as the `csv` crate writes them), floats as Rust prints them or with
//!   the fixed decimals a [`CsvOptions`] or a field's [`fixed`] asks for;
//! * [`to_json`]: pretty JSON (serde_json), the same field names;
//! * [`TextTable`]: aligned text columns for people.
//!
//! The same row structs cross into Python as dictionaries, so a CLI
//! command's `--format json` and the Python frame have the same columns.
//!
//! ```
//! use cachepart::output::{to_csv, to_json, CsvOptions};
//! #[derive(serde::Serialize, Default)]
//! struct Row {
//!     app: String,
//!     #[serde(serialize_with = "cachepart::output::fixed::<2, _>")]
//!     ipc: f64,
//! }
//! let rows = [Row { app: "a,b".into(), ipc: 1.0 / 3.0 }];
//! assert_eq!(to_csv(&rows, CsvOptions::default()), "app,ipc\n\"a,b\",0.33\n");
//! assert!(to_json(&rows).contains("\"ipc\": 0.3333333333333333"));
//! ```

pub mod cachegrind;
mod cell;
mod cells;
pub mod chart;
mod csv;
mod json;
pub mod report;
pub mod samples;
pub mod sim;
mod text;
pub mod throttle_search;

pub use self::cells::{fixed, fixed_opt, quoted, Floats};
pub use self::csv::{csv_field, to_csv, CsvOptions};
pub use self::json::to_json;
pub use self::text::{Align, TextTable};
