//! The metrics table: per-app measurements at every way count, read from the
//! PBBCache CSV format (`BENCH,NR_WAYS,ipc,llcmpki,...`).
//!
//! Rows may come in any order. The columns the model reads
//! ([`MODEL_COLUMNS`]) must hold finite numbers; every other column is kept:
//! as numbers when all its cells are numbers ([`MetricsTable::column`]),
//! else as text, empty cells included ([`MetricsTable::text_column`]). Each
//! app must have one row for every way count `1..=W`, with the same `W` for
//! all apps.

use crate::error::ProfileError;
use cachepart_machine::AppCurves;
mod parse;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Columns the model needs in every metrics table.
pub const REQUIRED_COLUMNS: [&str; 4] = ["ipc", "llcmpki", "llcmpkc", "bandwidth_mbps"];

/// Columns the model reads when present (the required ones, the rates the
/// sharing estimate and the bandwidth models use, Dunn's stalls): each cell
/// must be a finite number. Other columns may hold anything.
pub const MODEL_COLUMNS: [&str; 10] = [
    "ipc",
    "llcmpki",
    "llcmpkc",
    "bandwidth_mbps",
    "llcrpki",
    "stalls_total",
    "stalls_l3_miss",
    "stalls_ldm_pending",
    "stalls_store_buf",
    "stalls_l2_miss",
];

/// The columns the model reads that are counts or rates and so can not be
/// negative (a negative miss rate or bandwidth would silently change the
/// sharing estimate and the bandwidth models): every one of
/// [`MODEL_COLUMNS`] but `ipc`, which has its own range ([`IPC_RANGE`]).
pub const NON_NEGATIVE_COLUMNS: &[&str] = MODEL_COLUMNS.split_at(1).1;

/// The IPC range a table may hold. Slowdowns are ratios of IPCs, so this
/// bounds every slowdown by 10^12 and keeps the mix metrics (whose
/// variance squares slowdowns) finite.
pub const IPC_RANGE: (f64, f64) = (1e-6, 1e6);

/// One app's rows: every column at every way count.
#[derive(Clone, Debug, PartialEq)]
pub struct AppTable {
    /// Program name (`BENCH`).
    pub name: String,
    /// `values[c][w - 1]`: numeric column `c` of the table at `w` ways.
    values: Vec<Vec<f64>>,
    /// `text[c][w - 1]`: text column `c` at `w` ways, as written.
    text: Vec<Vec<String>>,
}

/// All apps of a metrics file.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricsTable {
    source: PathBuf,
    ways: usize,
    columns: Vec<String>,
    text_columns: Vec<String>,
    apps: Vec<AppTable>,
    by_name: HashMap<String, usize>,
}

impl AppTable {
    /// Column `c` (index into [`MetricsTable::columns`]) at every way count.
    pub fn values(&self, c: usize) -> &[f64] {
        &self.values[c]
    }

    /// Text column `c` (index into [`MetricsTable::text_columns`]) at
    /// every way count, as written.
    pub fn text(&self, c: usize) -> &[String] {
        &self.text[c]
    }
}

impl MetricsTable {
    /// Reads a metrics CSV file (`-`: standard input).
    pub fn from_path(path: &Path) -> Result<Self, ProfileError> {
        let text = cachepart_units::input::read_text(path).map_err(|source| ProfileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_csv_str(&text, path)
    }

    /// Parses metrics CSV text; `source` names it in errors.
    pub fn from_csv_str(text: &str, source: &Path) -> Result<Self, ProfileError> {
        parse::parse_csv(text, source)
    }

    /// Where the table was read from.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// Number of way counts `W` (rows per app).
    pub fn ways(&self) -> usize {
        self.ways
    }

    /// Numeric column names, in file order (the text ones are
    /// [`MetricsTable::text_columns`]).
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Names of the columns kept as text (those the model does not read
    /// that hold a cell that is not a finite number, such as an empty one),
    /// in file order.
    pub fn text_columns(&self) -> &[String] {
        &self.text_columns
    }

    /// A text column of an app by names, at every way count.
    pub fn text_column(&self, app: &str, column: &str) -> Option<&[String]> {
        let c = self.text_columns.iter().position(|n| n == column)?;
        Some(self.app(app)?.text(c))
    }

    /// Index of a numeric column by name.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }

    /// Apps in file order of first appearance.
    pub fn apps(&self) -> &[AppTable] {
        &self.apps
    }

    /// An app by name.
    pub fn app(&self, name: &str) -> Option<&AppTable> {
        self.by_name.get(name).map(|&i| &self.apps[i])
    }

    /// Index of an app by name.
    pub fn app_index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// A column of an app by names.
    pub fn column(&self, app: &str, column: &str) -> Option<&[f64]> {
        let a = self.app(app)?;
        Some(a.values(self.column_index(column)?))
    }

    /// The closest known program name to `name`, for error hints.
    pub fn suggest(&self, name: &str) -> Option<&str> {
        let lower = name.to_lowercase();
        self.apps
            .iter()
            .map(|a| a.name.as_str())
            .min_by_key(|n| strsim::levenshtein(&n.to_lowercase(), &lower))
            .filter(|n| strsim::levenshtein(&n.to_lowercase(), &lower) <= 3)
    }

    /// The policy view of an app: IPC, MPKI, MPKC, bandwidth, slowdown and,
    /// if present, `stalls_l2_miss`.
    pub fn curves(&self, app: usize) -> AppCurves {
        let a = &self.apps[app];
        let col = |n: &str| {
            a.values(self.column_index(n).expect("required column"))
                .to_vec()
        };
        let mut c = AppCurves::new(
            &a.name,
            col("ipc"),
            col("llcmpki"),
            col("llcmpkc"),
            col("bandwidth_mbps"),
        );
        c.stalls_l2_miss = self
            .column_index("stalls_l2_miss")
            .map(|i| a.values(i).to_vec());
        c
    }
}
