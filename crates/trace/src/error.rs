//! The crate's error type: every failure names where it happened.
//!
//! Binary-format errors carry the byte offset in the file (of the structure
//! that is wrong: the header, a frame, the index); text-format errors carry
//! the 1-based line number.

use std::io;

use thiserror::Error;

use crate::record::RecordError;

/// Errors of trace reading, writing, conversion and generation.
#[derive(Debug, Error)]
pub enum TraceError {
    /// An I/O error outside of parsing (opening, writing).
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    /// The file does not start with the trace magic.
    #[error("bad magic at byte offset {offset}: not a cachepart trace")]
    BadMagic {
        /// Byte offset of the magic.
        offset: u64,
    },
    /// The file's format version is not one this reader knows.
    #[error("unsupported trace format version {found} at byte offset {offset} (this reader knows {supported})")]
    Version {
        /// Byte offset of the version field.
        offset: u64,
        /// The version found.
        found: u16,
        /// The version this reader knows.
        supported: u16,
    },
    /// The header is malformed.
    #[error("bad header at byte offset {offset}: {reason}")]
    BadHeader {
        /// Byte offset of the faulty field.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// The file ends inside a structure.
    #[error("truncated {what} at byte offset {offset}: file ends early")]
    Truncated {
        /// What was being read (header, frame, index).
        what: &'static str,
        /// Byte offset of the structure that is cut.
        offset: u64,
    },
    /// A frame cannot be decoded.
    #[error("bad frame at byte offset {offset}: {reason}")]
    BadFrame {
        /// Byte offset of the frame header.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// A decoded record is invalid.
    #[error("bad record {record} in frame at byte offset {offset}: {source}")]
    BadRecord {
        /// Byte offset of the frame holding the record.
        offset: u64,
        /// Record number in the file (0-based).
        record: u64,
        /// What is wrong with it.
        source: RecordError,
    },
    /// The footer index is inconsistent.
    #[error("corrupt index at byte offset {offset}: {reason}")]
    CorruptIndex {
        /// Byte offset of the index or trailer.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// A text trace has a line that cannot be parsed.
    #[error("{format} line {line}: {reason}")]
    BadLine {
        /// The text format (`lackey`, `din`).
        format: &'static str,
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        reason: String,
    },
    /// A record could not be built from otherwise well-formed input.
    #[error("invalid record: {0}")]
    Record(#[from] RecordError),
    /// Seeking past the last record.
    #[error("record {record} is past the end of the trace ({records} records)")]
    SeekPastEnd {
        /// The record asked for.
        record: u64,
        /// The number of records in the trace.
        records: u64,
    },
    /// A synthetic generator configuration is invalid.
    #[error("invalid generator configuration: {0}")]
    Config(String),
}

/// Result alias of this crate.
pub type Result<T, E = TraceError> = std::result::Result<T, E>;
