//! Per-app, per-interval samples of a simulated run as a table: CSV text
//! or Parquet bytes (zstd-compressed columns), one row per (interval, app),
//! with the same columns in both and in Python's DataFrame.
//!
//! Writing is deterministic: the same samples give byte-identical CSV and
//! Parquet (no timestamps, no writer version strings beyond the crate's).

use std::sync::Arc;

use cachepart_machine::Sample;
use parquet::basic::{Compression, ZstdLevel};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use serde::Serialize;

use crate::error::Error;

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

/// Integer-valued columns, in order (stored as int64).
const INT_COLUMNS: [&str; 3] = ["interval", "end_cycles", "app"];
/// Counter columns, in order (stored as double), then `ipc` and `mpki`.
const COUNTER_COLUMNS: [&str; 9] = [
    "instructions",
    "cycles",
    "llc_references",
    "llc_misses",
    "memory_stall_cycles",
    "llc_occupancy_bytes",
    "memory_bytes",
    "tlb_misses",
    "pages_recolored",
];

fn counters(s: &Sample) -> [f64; 9] {
    [
        s.instructions,
        s.cycles,
        s.llc_references,
        s.llc_misses,
        s.memory_stall_cycles,
        s.llc_occupancy_bytes,
        s.memory_bytes,
        s.tlb_misses,
        s.pages_recolored,
    ]
}

fn mpki(s: &Sample) -> f64 {
    if s.instructions > 0.0 {
        s.llc_misses * 1000.0 / s.instructions
    } else {
        0.0
    }
}

/// Every column name, in file order.
pub fn columns() -> Vec<&'static str> {
    let mut c = vec!["interval", "end_cycles", "app", "name"];
    c.extend(COUNTER_COLUMNS);
    c.extend(["ipc", "llc_mpki"]);
    c
}

/// The rows as CSV with a header line.
pub fn to_csv(rows: &[SampleRow]) -> String {
    let mut out = columns().join(",");
    out.push('\n');
    for r in rows {
        let name = if r.name.contains([',', '"', '\n']) {
            format!("\"{}\"", r.name.replace('"', "\"\""))
        } else {
            r.name.clone()
        };
        out.push_str(&format!(
            "{},{},{},{}",
            r.interval, r.end_cycles, r.app, name
        ));
        for v in counters(&r.sample)
            .into_iter()
            .chain([r.sample.ipc(), mpki(&r.sample)])
        {
            out.push(',');
            out.push_str(&v.to_string());
        }
        out.push('\n');
    }
    out
}

fn parquet_err(e: parquet::errors::ParquetError) -> Error {
    Error::Input(format!("writing Parquet: {e}"))
}

/// The rows as a Parquet file (one row group, zstd level 3).
pub fn to_parquet(rows: &[SampleRow]) -> Result<Vec<u8>, Error> {
    let mut schema = String::from("message samples {\n");
    for c in INT_COLUMNS {
        schema.push_str(&format!("  required int64 {c};\n"));
    }
    schema.push_str("  required binary name (UTF8);\n");
    for c in COUNTER_COLUMNS.iter().chain(&["ipc", "llc_mpki"]) {
        schema.push_str(&format!("  required double {c};\n"));
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
    let ints: [Vec<i64>; 3] = [
        rows.iter().map(|r| r.interval as i64).collect(),
        rows.iter().map(|r| r.end_cycles as i64).collect(),
        rows.iter().map(|r| r.app as i64).collect(),
    ];
    for col in &ints {
        let mut c = rg
            .next_column()
            .map_err(parquet_err)?
            .expect("schema column");
        c.typed::<Int64Type>()
            .write_batch(col, None, None)
            .map_err(parquet_err)?;
        c.close().map_err(parquet_err)?;
    }
    let names: Vec<ByteArray> = rows
        .iter()
        .map(|r| ByteArray::from(r.name.as_str()))
        .collect();
    let mut c = rg
        .next_column()
        .map_err(parquet_err)?
        .expect("schema column");
    c.typed::<ByteArrayType>()
        .write_batch(&names, None, None)
        .map_err(parquet_err)?;
    c.close().map_err(parquet_err)?;
    for k in 0..COUNTER_COLUMNS.len() + 2 {
        let col: Vec<f64> = rows
            .iter()
            .map(|r| {
                let s = &r.sample;
                match k {
                    k if k < COUNTER_COLUMNS.len() => counters(s)[k],
                    k if k == COUNTER_COLUMNS.len() => s.ipc(),
                    _ => mpki(s),
                }
            })
            .collect();
        let mut c = rg
            .next_column()
            .map_err(parquet_err)?
            .expect("schema column");
        c.typed::<DoubleType>()
            .write_batch(&col, None, None)
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
        assert!(first.ends_with(",2,2"), "{first}");
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
