//! `trace convert`: any supported input format to the binary format.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use cachepart_units::Kind as _;
use serde::{Deserialize, Serialize};

use crate::din::DinReader;
use crate::error::{Result, TraceError};
use crate::header::Header;
use crate::lackey::LackeyReader;
use crate::reader::Reader;
use crate::record::Record;
use crate::writer::{WriteSummary, Writer};

/// The trace formats this crate reads.
#[cachepart_units::kind]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[strum(
    parse_err_ty = TraceError,
    parse_err_fn = unknown_format
)]
pub enum TraceFormat {
    /// This crate's binary format (`.cpt`).
    #[strum(message = "cachepart's binary format (re-encodes it)")]
    Cpt,
    /// valgrind lackey `--trace-mem=yes` text.
    #[strum(message = "valgrind lackey `--trace-mem=yes` output")]
    Lackey,
    /// Dinero `din` text.
    #[strum(message = "Dinero `din` text")]
    Din,
}

/// The error of an unknown format name.
fn unknown_format(s: &str) -> TraceError {
    TraceError::Config(format!(
        "unknown trace format {s:?} ({})",
        TraceFormat::names().join(", ")
    ))
}

/// Converts the trace at `input` in `format` to a binary trace at `output`
/// (metadata `source-format` and `source` are recorded).
pub fn convert(
    input: impl AsRef<Path>,
    format: TraceFormat,
    output: impl AsRef<Path>,
) -> Result<WriteSummary> {
    let input = input.as_ref();
    let header = Header::default()
        .with_meta("source-format", format.name())
        .with_meta("source", input.display().to_string());
    let r = BufReader::with_capacity(1 << 20, File::open(input)?);
    let w = BufWriter::with_capacity(1 << 20, File::create(output)?);
    convert_stream(r, format, w, &header)
}

/// Converts a stream (a pipe is fine) in `format` to a binary trace
/// written to `output` with `header`; memory stays bounded.
pub fn convert_stream<R: BufRead, W: Write>(
    input: R,
    format: TraceFormat,
    output: W,
    header: &Header,
) -> Result<WriteSummary> {
    let mut w = Writer::new(output, header)?;
    match format {
        TraceFormat::Cpt => copy(Reader::new(input)?, &mut w)?,
        TraceFormat::Lackey => copy(LackeyReader::new(input), &mut w)?,
        TraceFormat::Din => copy(DinReader::new(input), &mut w)?,
    }
    Ok(w.finish()?.1)
}

/// Converts lackey text, skipping foreign lines (the traced program's own
/// output mixed in by `2>&1`) instead of failing; returns the summary and
/// the number of lines skipped.
pub fn convert_lackey_lenient<R: BufRead, W: Write>(
    input: R,
    output: W,
    header: &Header,
) -> Result<(WriteSummary, u64)> {
    let mut w = Writer::new(output, header)?;
    let mut reader = LackeyReader::new(input).lenient(true);
    for r in reader.by_ref() {
        w.push(r?)?;
    }
    Ok((w.finish()?.1, reader.skipped()))
}

fn copy<W: Write>(records: impl Iterator<Item = Result<Record>>, w: &mut Writer<W>) -> Result<()> {
    for r in records {
        w.push(r?)?;
    }
    Ok(())
}
