//! Per-app, per-interval samples of a simulated run as a table: CSV text
//! or Parquet bytes (zstd-compressed columns), one row per (interval, app),
//! with the same columns in both and in Python's DataFrame.
//!
//! Writing is deterministic: the same samples give byte-identical CSV and
//! Parquet (no timestamps, no writer version strings beyond the crate's).

use std::sync::Arc;

use cachepart_machine::Sample;
use parquet::basic::{Compression, ZstdLevel};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use serde::Serialize;

use crate::error::Error;
use crate::output::{self, CsvOptions};

/// One app's sample in one interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SampleRow {
    /// Interval number, from 0.
    pub interval: u64,
    /// Simulated time at the end of the interval, in cycles.
    pub end_cycles: u64,
    /// Index of the app in the scenario.
    pub app: usize,
    /// The app's name.
    pub name: String,
    /// The counters.
    pub sample: Sample,
}

/// How a column is stored.
#[derive(Clone, Copy)]
enum Kind {
    /// int64.
    Int(fn(&SampleRow) -> i64),
    /// UTF-8 text.
    Text(fn(&SampleRow) -> &str),
    /// double.
    Double(fn(&Sample) -> f64),
    /// boolean (`true`/`false` in CSV).
    Bool(fn(&Sample) -> bool),
}

/// Every column, in file order: where the row is, the counters as the
/// machine measured them, then the rates derived from them.
const COLUMNS: [(&str, Kind); 19] = [
    ("interval", Kind::Int(|r| r.interval as i64)),
    ("end_cycles", Kind::Int(|r| r.end_cycles as i64)),
    ("app", Kind::Int(|r| r.app as i64)),
    ("name", Kind::Text(|r| r.name.as_str())),
    ("instructions", Kind::Double(|s| s.instructions)),
    ("cycles", Kind::Double(|s| s.cycles)),
    ("llc_references", Kind::Double(|s| s.llc_references)),
    ("llc_misses", Kind::Double(|s| s.llc_misses)),
    (
        "memory_stall_cycles",
        Kind::Double(|s| s.memory_stall_cycles),
    ),
    (
        "llc_occupancy_bytes",
        Kind::Double(|s| s.llc_occupancy_bytes),
    ),
    ("memory_bytes", Kind::Double(|s| s.memory_bytes)),
    ("tlb_misses", Kind::Double(|s| s.tlb_misses)),
    ("pages_recolored", Kind::Double(|s| s.pages_recolored)),
    ("ipc", Kind::Double(Sample::ipc)),
    ("llc_mpki", Kind::Double(Sample::llc_mpki)),
    // Added for the online policies (LFOC, Dunn): after the columns older
    // readers know, so that their positions do not move.
    (
        "l2_miss_stall_cycles",
        Kind::Double(|s| s.l2_miss_stall_cycles),
    ),
    ("llc_mpkc", Kind::Double(Sample::llc_mpkc)),
    (
        "l2_miss_stall_fraction",
        Kind::Double(Sample::l2_miss_stall_fraction),
    ),
    ("ran", Kind::Bool(|s| s.ran)),
];

/// Every column name, in file order.
pub fn columns() -> Vec<&'static str> {
    COLUMNS.iter().map(|(n, _)| *n).collect()
}

/// One line of the samples CSV: a [`SampleRow`] flattened, with the rates
/// derived from its counters; the fields are [`columns`] in order.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SampleLine<'a> {
    /// Interval number, from 0.
    pub interval: u64,
    /// Simulated time at the end of the interval, in cycles.
    pub end_cycles: u64,
    /// Index of the app in the scenario.
    pub app: usize,
    /// The app's name.
    pub name: &'a str,
    /// Instructions retired.
    pub instructions: f64,
    /// Cycles.
    pub cycles: f64,
    /// LLC references.
    pub llc_references: f64,
    /// LLC misses.
    pub llc_misses: f64,
    /// Cycles stalled on memory.
    pub memory_stall_cycles: f64,
    /// LLC occupancy at the end of the interval, bytes.
    pub llc_occupancy_bytes: f64,
    /// Bytes moved to and from memory.
    pub memory_bytes: f64,
    /// TLB misses.
    pub tlb_misses: f64,
    /// Pages recolored.
    pub pages_recolored: f64,
    /// Instructions per cycle.
    pub ipc: f64,
    /// LLC misses per kilo-instruction.
    pub llc_mpki: f64,
    /// Cycles stalled beyond the private levels.
    pub l2_miss_stall_cycles: f64,
    /// LLC misses per kilo-cycle.
    pub llc_mpkc: f64,
    /// Fraction of cycles stalled beyond the private levels.
    pub l2_miss_stall_fraction: f64,
    /// Whether the app ran in the interval.
    pub ran: bool,
}

impl<'a> From<&'a SampleRow> for SampleLine<'a> {
    fn from(r: &'a SampleRow) -> SampleLine<'a> {
        let s = &r.sample;
        SampleLine {
            interval: r.interval,
            end_cycles: r.end_cycles,
            app: r.app,
            name: &r.name,
            instructions: s.instructions,
            cycles: s.cycles,
            llc_references: s.llc_references,
            llc_misses: s.llc_misses,
            memory_stall_cycles: s.memory_stall_cycles,
            llc_occupancy_bytes: s.llc_occupancy_bytes,
            memory_bytes: s.memory_bytes,
            tlb_misses: s.tlb_misses,
            pages_recolored: s.pages_recolored,
            ipc: s.ipc(),
            llc_mpki: s.llc_mpki(),
            l2_miss_stall_cycles: s.l2_miss_stall_cycles,
            llc_mpkc: s.llc_mpkc(),
            l2_miss_stall_fraction: s.l2_miss_stall_fraction(),
            ran: s.ran,
        }
    }
}

/// The rows as CSV with a header line ([`SampleLine`]'s columns).
pub fn to_csv(rows: &[SampleRow]) -> String {
    let lines: Vec<SampleLine<'_>> = rows.iter().map(SampleLine::from).collect();
    output::to_csv(&lines, CsvOptions::default())
}

fn parquet_err(e: parquet::errors::ParquetError) -> Error {
    Error::Output(format!("writing Parquet: {e}"))
}

/// The rows as a Parquet file (one row group, zstd level 3).
pub fn to_parquet(rows: &[SampleRow]) -> Result<Vec<u8>, Error> {
    let mut schema = String::from("message samples {\n");
    for (name, kind) in COLUMNS {
        let ty = match kind {
            Kind::Int(_) => "int64",
            Kind::Text(_) => "binary",
            Kind::Double(_) => "double",
            Kind::Bool(_) => "boolean",
        };
        let annotation = if matches!(kind, Kind::Text(_)) {
            " (UTF8)"
        } else {
            ""
        };
        schema.push_str(&format!("  required {ty} {name}{annotation};\n"));
    }
    schema.push('}');
    let schema = Arc::new(parse_message_type(&schema).map_err(parquet_err)?);
    let level = ZstdLevel::try_new(3).map_err(parquet_err)?;
    let props = Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::ZSTD(level))
            .set_created_by(format!("cachepart {}", env!("CARGO_PKG_VERSION")))
            .build(),
    );
    let mut w = SerializedFileWriter::new(Vec::new(), schema, props).map_err(parquet_err)?;
    let mut rg = w.next_row_group().map_err(parquet_err)?;
    for (name, kind) in COLUMNS {
        let mut c = rg.next_column().map_err(parquet_err)?.ok_or_else(|| {
            Error::Output(format!("writing Parquet: no column {name} in the schema"))
        })?;
        match kind {
            Kind::Int(f) => {
                let col: Vec<i64> = rows.iter().map(f).collect();
                c.typed::<Int64Type>().write_batch(&col, None, None)
            }
            Kind::Text(f) => {
                let col: Vec<ByteArray> = rows.iter().map(|r| ByteArray::from(f(r))).collect();
                c.typed::<ByteArrayType>().write_batch(&col, None, None)
            }
            Kind::Double(f) => {
                let col: Vec<f64> = rows.iter().map(|r| f(&r.sample)).collect();
                c.typed::<DoubleType>().write_batch(&col, None, None)
            }
            Kind::Bool(f) => {
                let col: Vec<bool> = rows.iter().map(|r| f(&r.sample)).collect();
                c.typed::<BoolType>().write_batch(&col, None, None)
            }
        }
        .map_err(parquet_err)?;
        c.close().map_err(parquet_err)?;
    }
    rg.close().map_err(parquet_err)?;
    w.into_inner().map_err(parquet_err)
}

/// The sample file formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleFormat {
    /// Comma-separated text.
    Csv,
    /// Apache Parquet.
    Parquet,
}

impl SampleFormat {
    /// The format a file name asks for: `.parquet` or `.pq` is Parquet,
    /// `.csv` is CSV; anything else is an error naming the path.
    pub fn from_path(path: &std::path::Path) -> Result<SampleFormat, Error> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("csv") => Ok(SampleFormat::Csv),
            Some("parquet") | Some("pq") => Ok(SampleFormat::Parquet),
            _ => Err(Error::Usage(format!(
                "{}: samples are written as .csv or .parquet; name the file with one of these extensions",
                path.display()
            ))),
        }
    }

    /// The rows in this format.
    pub fn encode(self, rows: &[SampleRow]) -> Result<Vec<u8>, Error> {
        match self {
            SampleFormat::Csv => Ok(to_csv(rows).into_bytes()),
            SampleFormat::Parquet => to_parquet(rows),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<SampleRow> {
        (0..3)
            .map(|i| SampleRow {
                interval: i / 2,
                end_cycles: 1000 * (i / 2 + 1),
                app: (i % 2) as usize,
                name: if i % 2 == 0 { "a,b" } else { "c" }.into(),
                sample: Sample {
                    app: (i % 2) as usize,
                    instructions: 2000.0,
                    cycles: 1000.0,
                    llc_references: 10.0,
                    llc_misses: 4.0,
                    ..Sample::default()
                },
            })
            .collect()
    }

    #[test]
    fn csv_has_every_column_and_quotes_names() {
        let csv = to_csv(&rows());
        let mut lines = csv.lines();
        assert_eq!(lines.next().unwrap().split(',').count(), columns().len());
        let first = lines.next().unwrap();
        assert!(
            first.starts_with("0,1000,0,\"a,b\",2000,1000,10,4,"),
            "{first}"
        );
        // ipc 2, llc_mpki 2, no L2-miss stalls, llc_mpkc 4, stall
        // fraction 0, did not run.
        assert!(first.ends_with(",2,2,0,4,0,false"), "{first}");
    }

    #[test]
    fn csv_and_parquet_have_the_same_columns() {
        let csv = to_csv(&[]);
        assert_eq!(csv.trim_end().split(',').collect::<Vec<_>>(), columns());
    }

    #[test]
    fn parquet_is_deterministic_and_well_formed() {
        let a = to_parquet(&rows()).unwrap();
        let b = to_parquet(&rows()).unwrap();
        assert_eq!(a, b);
        assert_eq!(&a[..4], b"PAR1");
        assert_eq!(&a[a.len() - 4..], b"PAR1");
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let r = SerializedFileReader::new(bytes::Bytes::from(a)).unwrap();
        let meta = r.metadata();
        assert_eq!(meta.file_metadata().num_rows(), 3);
        assert_eq!(
            meta.file_metadata().schema_descr().num_columns(),
            columns().len()
        );
    }

    #[test]
    fn format_follows_the_extension() {
        use std::path::Path;
        assert_eq!(
            SampleFormat::from_path(Path::new("x.parquet")).unwrap(),
            SampleFormat::Parquet
        );
        assert_eq!(
            SampleFormat::from_path(Path::new("x.csv")).unwrap(),
            SampleFormat::Csv
        );
        let e = SampleFormat::from_path(Path::new("x.txt")).unwrap_err();
        assert!(e.to_string().contains("x.txt"));
    }
}
