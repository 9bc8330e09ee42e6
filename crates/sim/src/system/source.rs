//! Where an app's records come from: [`TraceSource`], opened once per
//! run (and again when an app restarts), with implementations for a
//! binary trace file ([`CptFile`]), a synthetic generator
//! ([`SynthConfig`]) and records in memory ([`RecordsSource`]).
//!
//! A run reads an app's records in batches ([`RecordBatches`], from
//! [`TraceSource::open_batches`]). Trace files and generators are decoded
//! ahead on a background thread ([`Prefetch`]), so decoding overlaps the
//! simulation, and their chunks are swapped into the app's buffer whole
//! ([`RecordBatches::refill`]); records and errors come out in the same
//! order, at the same positions, as from [`TraceSource::open`].

use std::path::PathBuf;
use std::sync::Arc;

use cachepart_trace::synth::SynthConfig;
use cachepart_trace::{Prefetch, Reader, Record, TraceError};

/// A stream of records, as a source opens it.
pub type RecordStream = Box<dyn Iterator<Item = Result<Record, TraceError>> + Send>;

/// A trace that can be read from its start any number of times.
pub trait TraceSource: Send + Sync {
    /// A fresh stream from the first record.
    fn open(&self) -> Result<RecordStream, TraceError>;
    /// A name for messages (the file, the generator).
    fn name(&self) -> String;
    /// A fresh stream from the first record, read in batches: the same
    /// records and errors as [`TraceSource::open`], in the same order (the
    /// default reads that stream).
    fn open_batches(&self) -> Result<Box<dyn RecordBatches>, TraceError> {
        Ok(Box::new(IterBatches(self.open()?)))
    }
}

/// A stream of records read in batches.
pub trait RecordBatches: Send {
    /// Appends up to `max` next records to `buf` and returns how many;
    /// fewer only at the end of the stream (0: it has ended). On an error
    /// the records before it stay appended and the error is returned.
    fn fill(&mut self, buf: &mut Vec<Record>, max: usize) -> Result<usize, TraceError>;

    /// Replaces `buf`'s records by the next ones and returns how many: at
    /// least one, and as many as the stream hands over at once (up to
    /// `max` by default, [`RecordBatches::fill`] into the emptied `buf`);
    /// 0 at the end of the stream. On an error the error is returned (the
    /// records before it may stay in `buf`).
    fn refill(&mut self, buf: &mut Vec<Record>, max: usize) -> Result<usize, TraceError> {
        buf.clear();
        self.fill(buf, max)
    }
}

/// Batches of a [`RecordStream`], read one record at a time.
struct IterBatches(RecordStream);

impl RecordBatches for IterBatches {
    fn fill(&mut self, buf: &mut Vec<Record>, max: usize) -> Result<usize, TraceError> {
        for n in 0..max {
            match self.0.next() {
                Some(Ok(r)) => buf.push(r),
                Some(Err(e)) => return Err(e),
                None => return Ok(n),
            }
        }
        Ok(max)
    }
}

impl RecordBatches for Prefetch {
    fn fill(&mut self, buf: &mut Vec<Record>, max: usize) -> Result<usize, TraceError> {
        Prefetch::fill(self, buf, max)
    }

    /// A whole chunk decoded ahead, swapped in without copying
    /// ([`Prefetch::swap_chunk`]; `max` does not apply).
    fn refill(&mut self, buf: &mut Vec<Record>, _max: usize) -> Result<usize, TraceError> {
        self.swap_chunk(buf)
    }
}

/// A binary (`.cpt`) trace file, streamed one frame at a time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CptFile(pub PathBuf);

impl CptFile {
    /// Checks the header, trailer and index before streaming, so that a
    /// cut or corrupt trace is refused even when a run stops before its
    /// end (the stream itself checks the index only when it gets there).
    fn check(&self) -> Result<(), TraceError> {
        cachepart_trace::TraceFile::open(&self.0).map(drop)
    }
}

impl TraceSource for CptFile {
    fn open(&self) -> Result<RecordStream, TraceError> {
        self.check()?;
        let f = std::fs::File::open(&self.0)?;
        Ok(Box::new(Reader::new(std::io::BufReader::new(f))?))
    }

    fn open_batches(&self) -> Result<Box<dyn RecordBatches>, TraceError> {
        self.check()?;
        let f = std::fs::File::open(&self.0)?;
        let reader = Reader::new(std::io::BufReader::new(f))?;
        Ok(Box::new(Prefetch::reader(reader)?))
    }

    fn name(&self) -> String {
        self.0.display().to_string()
    }
}

impl TraceSource for SynthConfig {
    fn open(&self) -> Result<RecordStream, TraceError> {
        Ok(Box::new(self.generator()?.map(Ok)))
    }

    fn open_batches(&self) -> Result<Box<dyn RecordBatches>, TraceError> {
        Ok(Box::new(Prefetch::iter(self.generator()?.map(Ok))?))
    }

    fn name(&self) -> String {
        format!("synth(seed {}, {} accesses)", self.seed, self.accesses)
    }
}

/// Records held in memory (tests, decoded traces shared by runs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordsSource(pub Arc<[Record]>);

impl RecordsSource {
    /// The records of `records`.
    pub fn new(records: Vec<Record>) -> RecordsSource {
        RecordsSource(Arc::from(records))
    }
}

struct SharedIter {
    recs: Arc<[Record]>,
    pos: usize,
}

impl Iterator for SharedIter {
    type Item = Result<Record, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        let r = self.recs.get(self.pos).copied()?;
        self.pos += 1;
        Some(Ok(r))
    }
}

impl RecordBatches for SharedIter {
    fn fill(&mut self, buf: &mut Vec<Record>, max: usize) -> Result<usize, TraceError> {
        let rest = self.recs.get(self.pos..).unwrap_or_default();
        let take = rest.len().min(max);
        buf.extend_from_slice(&rest[..take]);
        self.pos += take;
        Ok(take)
    }
}

impl TraceSource for RecordsSource {
    fn open(&self) -> Result<RecordStream, TraceError> {
        Ok(Box::new(SharedIter {
            recs: Arc::clone(&self.0),
            pos: 0,
        }))
    }

    fn open_batches(&self) -> Result<Box<dyn RecordBatches>, TraceError> {
        Ok(Box::new(SharedIter {
            recs: Arc::clone(&self.0),
            pos: 0,
        }))
    }

    fn name(&self) -> String {
        format!("{} records in memory", self.0.len())
    }
}
