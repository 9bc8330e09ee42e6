//! Where an app's records come from: [`TraceSource`], opened once per
//! run (and again when an app restarts), with implementations for a
//! binary trace file ([`CptFile`]), a synthetic generator
//! ([`SynthConfig`]) and records in memory ([`RecordsSource`]).

use std::path::PathBuf;
use std::sync::Arc;

use cachepart_trace::synth::SynthConfig;
use cachepart_trace::{Reader, Record, TraceError};

/// A stream of records, as a source opens it.
pub type RecordStream = Box<dyn Iterator<Item = Result<Record, TraceError>> + Send>;

/// A trace that can be read from its start any number of times.
pub trait TraceSource: Send + Sync {
    /// A fresh stream from the first record.
    fn open(&self) -> Result<RecordStream, TraceError>;
    /// A name for messages (the file, the generator).
    fn name(&self) -> String;
}

/// A binary (`.cpt`) trace file, streamed one frame at a time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CptFile(pub PathBuf);

impl TraceSource for CptFile {
    fn open(&self) -> Result<RecordStream, TraceError> {
        let f = std::fs::File::open(&self.0)?;
        Ok(Box::new(Reader::new(std::io::BufReader::new(f))?))
    }

    fn name(&self) -> String {
        self.0.display().to_string()
    }
}

impl TraceSource for SynthConfig {
    fn open(&self) -> Result<RecordStream, TraceError> {
        Ok(Box::new(self.generator()?.map(Ok)))
    }

    fn name(&self) -> String {
        format!("synth(seed {}, {} accesses)", self.seed, self.accesses)
    }
}

/// Records held in memory (tests, decoded traces shared by runs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordsSource(pub Arc<Vec<Record>>);

impl RecordsSource {
    /// The records of `records`.
    pub fn new(records: Vec<Record>) -> RecordsSource {
        RecordsSource(Arc::new(records))
    }
}

struct SharedIter {
    recs: Arc<Vec<Record>>,
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

impl TraceSource for RecordsSource {
    fn open(&self) -> Result<RecordStream, TraceError> {
        Ok(Box::new(SharedIter {
            recs: Arc::clone(&self.0),
            pos: 0,
        }))
    }

    fn name(&self) -> String {
        format!("{} records in memory", self.0.len())
    }
}
