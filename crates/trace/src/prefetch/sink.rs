//! The producing side of [`Prefetch`](super::Prefetch): a decoding
//! thread's chunks of records (filled, sent, and refilled from the buffers
//! the consumer hands back) and the messages it sends.

use std::sync::mpsc::{Receiver, SyncSender};

use crate::error::TraceError;
use crate::record::Record;

/// What the thread sends: a chunk of records or the source's error.
pub(super) enum Msg {
    Records(Vec<Record>),
    Error(TraceError),
}

/// The producing side: fills chunks and sends them.
pub(super) struct Sink {
    pub(super) tx: SyncSender<Msg>,
    pub(super) back: Receiver<Vec<Record>>,
    pub(super) chunk: Vec<Record>,
    pub(super) chunk_records: usize,
}

impl Sink {
    pub(super) fn fresh(&self) -> Vec<Record> {
        match self.back.try_recv() {
            Ok(mut v) => {
                v.clear();
                v
            }
            Err(_) => Vec::with_capacity(self.chunk_records),
        }
    }

    /// Sends the chunk filled so far (if any); `false` once the consumer
    /// is gone.
    pub(super) fn flush(&mut self) -> bool {
        if self.chunk.is_empty() {
            return true;
        }
        let next = self.fresh();
        let full = std::mem::replace(&mut self.chunk, next);
        self.tx.send(Msg::Records(full)).is_ok()
    }

    /// Appends `recs`, sending each chunk as it fills; `false` once the
    /// consumer is gone.
    pub(super) fn extend(&mut self, mut recs: &[Record]) -> bool {
        while !recs.is_empty() {
            let room = self.chunk_records - self.chunk.len();
            let (now, rest) = recs.split_at(room.min(recs.len()));
            self.chunk.extend_from_slice(now);
            recs = rest;
            if self.chunk.len() == self.chunk_records && !self.flush() {
                return false;
            }
        }
        true
    }

    /// Sends a decoded frame: as one chunk of its own, without copying,
    /// when nothing is pending and it holds at least a chunk's records
    /// (`frame` then gets a recycled buffer); else as [`Sink::extend`].
    pub(super) fn extend_frame(&mut self, frame: &mut Vec<Record>) -> bool {
        if self.chunk.is_empty() && frame.len() >= self.chunk_records {
            // Sent first: once the send returns, the consumer has taken an
            // earlier chunk and handed its last one back, which `fresh`
            // reuses instead of allocating.
            let sent = self.tx.send(Msg::Records(std::mem::take(frame))).is_ok();
            *frame = self.fresh();
            return sent;
        }
        self.extend(frame)
    }

    pub(super) fn push(&mut self, r: Record) -> bool {
        self.chunk.push(r);
        self.chunk.len() < self.chunk_records || self.flush()
    }

    /// Sends the records so far, then `e`; `false` once the consumer is
    /// gone.
    pub(super) fn error(&mut self, e: TraceError) -> bool {
        self.flush() && self.tx.send(Msg::Error(e)).is_ok()
    }
}
