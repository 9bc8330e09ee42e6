//! Memory-access traces for cachepart: records, a compact binary format,
//! readers for other tools' formats, and synthetic generators.
//!
//! This crate owns everything about traces; simulators only see
//! [`Record`]s.
//!
//! * [`Record`] ([`record`]): one access or escape event packed in 8 bytes
//!   (48-bit address, size, [`Kind`], instruction gap), and the [`Event`]s
//!   of escape records.
//! * The binary format (`docs/trace-format.md`): a versioned [`Header`],
//!   independent zstd frames of records, and a footer index.
//!   [`Writer`] writes it with bounded memory, [`Reader`] streams it from
//!   any `Read`, and [`TraceFile`] opens a file through its index to seek
//!   to a record or decode frames in parallel, each frame's records
//!   pushed to a [`RecordSink`] as they are decoded if need be.
//! * Text readers, streaming from any `BufRead`: [`LackeyReader`]
//!   (valgrind `--tool=lackey --trace-mem=yes`) and [`DinReader`] (Dinero).
//! * [`synth`]: seeded generators for streaming, cache-sensitive, light,
//!   strided and phased applications.
//! * [`info()`] and [`convert()`]: the library side of `cachepart trace info`
//!   and `cachepart trace convert`.
//! * [`codec`]: the varint and FNV-1a codings, shared with the SHARDS
//!   sample index of `cachepart-curves`.
//!
//! This crate starts no programs: `cachepart-capture` records real
//! programs (valgrind lackey, qemu-user) through [`LackeyReader`] and
//! [`Writer`].
//!
//! Every failure is a [`TraceError`] naming the byte offset (binary) or the
//! line (text) where it happened.
//!
//! ```
//! use cachepart_trace::{Header, Kind, Reader, Record, Writer};
//! let mut w = Writer::new(Vec::new(), &Header::default()).unwrap();
//! w.push(Record::access(Kind::Load, 0x1000, 8, 3).unwrap()).unwrap();
//! let (bytes, summary) = w.finish().unwrap();
//! assert_eq!(summary.records, 1);
//! let back: Vec<Record> = Reader::new(&bytes[..]).unwrap().map(|r| r.unwrap()).collect();
//! assert_eq!(back[0].addr(), 0x1000);
//! ```
#![deny(missing_docs)]

pub mod codec;
mod compress_pool;
mod convert;
mod din;
mod error;
mod file;
mod frame;
mod header;
mod index;
mod info;
mod io_util;
mod lackey;
mod prefetch;
mod reader;
pub mod record;
mod sink;
mod stats;
pub mod synth;
mod text;
mod writer;

pub use convert::{convert, convert_lackey_lenient, convert_stream, TraceFormat};
pub use din::DinReader;
pub use error::{Result, TraceError};
pub use file::{FrameScratch, RecordsFrom, TraceFile};
pub use header::{Header, DEFAULT_FRAME_RECORDS, MAGIC, VERSION};
pub use index::FrameInfo;
pub use info::{info, TraceInfo};
pub use io_util::{open_seekable, open_stream};
pub use lackey::LackeyReader;
pub use prefetch::{Prefetch, DEFAULT_CHUNK_RECORDS, DEFAULT_DEPTH};
pub use reader::Reader;
pub use record::{AfterGap, Event, Kind, Record, RecordError};
pub use sink::RecordSink;
pub use stats::{Counts, Footprint};
pub use writer::{WriteSummary, Writer, DEFAULT_LEVEL, MAX_DEFAULT_THREADS};
