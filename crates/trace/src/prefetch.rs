//! Read-ahead: a background thread decodes a record stream (a binary
//! trace's [`Reader`], or any iterator of records) into chunks while the
//! consumer works on the chunks already decoded, so decoding overlaps
//! whatever the consumer does with the records (simulation) on another
//! core.
//!
//! [`Prefetch`] owns that thread. The records come out exactly as the
//! source yields them, in order; an error comes out at the record position
//! where the source gave it (the records before it first), unchanged, so a
//! reader's error still names its byte offset. Memory stays bounded: at
//! most `depth` chunks wait in the channel (for a reader, that many
//! chunks' records rounded up to whole frames), plus the one being filled and
//! the one being consumed (chunks are handed back to the thread and
//! reused, so steady state allocates nothing; a consumer that takes
//! whole chunks with [`Prefetch::swap_chunk`] holds one more, the chunk
//! it works on, while its previous buffer goes back). A reader's frame of
//! at least a chunk's records travels whole, as one chunk, without being
//! copied. Dropping a [`Prefetch`] stops its thread (it ends at its next
//! hand-over) and waits for it. The producing side is in `sink.rs`; the
//! thread runs below its consumer's priority (`priority.rs`).
//!
//! [`Reader`]: crate::Reader

use std::io::Read;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;

use crate::error::Result;
use crate::reader::Reader;
use crate::record::Record;

/// Records per chunk by default (512 KiB of records).
pub const DEFAULT_CHUNK_RECORDS: usize = 1 << 16;
/// Chunks decoded ahead by default.
pub const DEFAULT_DEPTH: usize = 4;

mod priority;
mod sink;

use sink::{Msg, Sink};

/// Records of a stream decoded ahead on background threads: one for a
/// reader or an iterator, one or more for an indexed file
/// ([`Prefetch::file`]).
pub struct Prefetch {
    /// One channel per producing thread; with several, message `k` comes
    /// from channel `k % n` (each a whole frame). Empty once the stream
    /// has ended.
    rx: Vec<Receiver<Msg>>,
    /// Where each thread takes its recycled buffers from.
    back: Vec<Sender<Vec<Record>>>,
    /// The next message's turn.
    turn: usize,
    /// The thread that sent `cur`.
    cur_from: usize,
    cur: Vec<Record>,
    pos: usize,
    threads: Vec<JoinHandle<()>>,
}

impl Prefetch {
    /// Decodes `reader`'s frames ahead, [`DEFAULT_DEPTH`] chunks of
    /// [`DEFAULT_CHUNK_RECORDS`] records. The reader's first error ends
    /// the stream, as it ends the reader.
    pub fn reader<R: Read + Send + 'static>(reader: Reader<R>) -> Result<Prefetch> {
        Prefetch::reader_with(reader, DEFAULT_CHUNK_RECORDS, DEFAULT_DEPTH)
    }

    /// [`Prefetch::reader`] with `chunk_records` records per chunk and
    /// about `depth` chunks' worth of records ahead (both at least 1).
    ///
    /// Frames of at least a chunk's records travel whole, so the bound is
    /// counted in the file's frames: `depth * chunk_records` records
    /// rounded up to whole frames (at least one). With the writer's
    /// default frames (1 Mi records) and the default chunks that is one
    /// frame waiting, beside the one being decoded and the one being
    /// consumed, instead of four: each frame waiting is a buffer of 8 MiB,
    /// page-faulted in on first use.
    pub fn reader_with<R: Read + Send + 'static>(
        mut reader: Reader<R>,
        chunk_records: usize,
        depth: usize,
    ) -> Result<Prefetch> {
        let frame = reader.header().frame_records.max(1) as usize;
        let depth = if frame >= chunk_records.max(1) {
            (depth.max(1) * chunk_records.max(1)).div_ceil(frame)
        } else {
            depth
        };
        Prefetch::spawn(chunk_records, depth, move |sink| {
            let mut frame = Vec::new();
            loop {
                match reader.swap_frame(&mut frame) {
                    Ok(true) => {
                        if !sink.extend_frame(&mut frame) {
                            return;
                        }
                    }
                    Ok(false) => {
                        sink.flush();
                        return;
                    }
                    Err(e) => {
                        sink.error(e);
                        return;
                    }
                }
            }
        })
    }

    /// Runs `iter` ahead, [`DEFAULT_DEPTH`] chunks of
    /// [`DEFAULT_CHUNK_RECORDS`] records; every item comes out in order,
    /// errors included (the stream goes on after an error as `iter` does).
    pub fn iter<I>(iter: I) -> Result<Prefetch>
    where
        I: Iterator<Item = Result<Record>> + Send + 'static,
    {
        Prefetch::iter_with(iter, DEFAULT_CHUNK_RECORDS, DEFAULT_DEPTH)
    }

    /// [`Prefetch::iter`] with `chunk_records` records per chunk and
    /// `depth` chunks ahead (both at least 1).
    pub fn iter_with<I>(iter: I, chunk_records: usize, depth: usize) -> Result<Prefetch>
    where
        I: Iterator<Item = Result<Record>> + Send + 'static,
    {
        Prefetch::spawn(chunk_records, depth, move |sink| {
            for item in iter {
                let more = match item {
                    Ok(r) => sink.push(r),
                    Err(e) => sink.error(e),
                };
                if !more {
                    return;
                }
            }
            sink.flush();
        })
    }

    fn spawn(
        chunk_records: usize,
        depth: usize,
        body: impl FnOnce(&mut Sink) + Send + 'static,
    ) -> Result<Prefetch> {
        let chunk_records = chunk_records.max(1);
        let (tx, rx) = mpsc::sync_channel(depth.max(1));
        let (back_tx, back_rx) = mpsc::channel();
        let mut sink = Sink {
            tx,
            back: back_rx,
            chunk: Vec::with_capacity(chunk_records),
            chunk_records,
        };
        let thread = spawn_read_ahead(move || body(&mut sink))?;
        Ok(Prefetch {
            rx: vec![rx],
            back: vec![back_tx],
            turn: 0,
            cur_from: 0,
            cur: Vec::new(),
            pos: 0,
            threads: vec![thread],
        })
    }

    /// Decodes the frames of an indexed trace file ahead on `decoders`
    /// threads (at least 1): frame `i` on thread `i % decoders`, each
    /// thread at most one decoded frame ahead of the consumer, and the
    /// frames come out whole and in order. For a consumer that outruns one
    /// decoding thread on a machine with cores to spare.
    ///
    /// The records are the file's, as [`Prefetch::reader`] gives them. An
    /// error in a frame (read through the index: see [`TraceFile`]) comes
    /// out after the records of the frames before it, none of its own, and
    /// ends the stream.
    ///
    /// [`TraceFile`]: crate::TraceFile
    pub fn file(file: std::sync::Arc<crate::TraceFile>, decoders: usize) -> Result<Prefetch> {
        let decoders = decoders.max(1);
        let frames = file.frames().len();
        let mut p = Prefetch {
            rx: Vec::with_capacity(decoders),
            back: Vec::with_capacity(decoders),
            turn: 0,
            cur_from: 0,
            cur: Vec::new(),
            pos: 0,
            threads: Vec::with_capacity(decoders),
        };
        for first in 0..decoders {
            let (tx, rx) = mpsc::sync_channel(1);
            let (back_tx, back_rx) = mpsc::channel::<Vec<Record>>();
            let file = file.clone();
            let thread = spawn_read_ahead(move || {
                let mut scratch = match crate::FrameScratch::new() {
                    Ok(scratch) => scratch,
                    Err(e) => {
                        let _ = tx.send(Msg::Error(e));
                        return;
                    }
                };
                for i in (first..frames).step_by(decoders) {
                    let mut buf = back_rx.try_recv().unwrap_or_default();
                    buf.clear();
                    let msg = match file.decode_frame(i, &mut scratch, &mut buf) {
                        Ok(()) => Msg::Records(buf),
                        Err(e) => Msg::Error(e),
                    };
                    let stop = matches!(msg, Msg::Error(_));
                    // the consumer is gone once it has stopped reading
                    if tx.send(msg).is_err() || stop {
                        return;
                    }
                }
            })?;
            p.rx.push(rx);
            p.back.push(back_tx);
            p.threads.push(thread);
        }
        Ok(p)
    }

    /// Makes the next chunk current; `Ok(false)` at the end of the stream.
    fn advance(&mut self) -> Result<bool> {
        let n = self.rx.len();
        let from = match n {
            0 => 0,
            _ => self.turn % n,
        };
        let msg = self.rx.get(from).and_then(|rx| rx.recv().ok());
        match msg {
            Some(Msg::Records(v)) => {
                self.turn += 1;
                let old = std::mem::replace(&mut self.cur, v);
                self.pos = 0;
                if old.capacity() > 0 {
                    // The thread may be gone already: then nobody reuses it.
                    let _ = self.back[self.cur_from].send(old);
                }
                self.cur_from = from;
                Ok(true)
            }
            Some(Msg::Error(e)) => {
                if n > 1 {
                    // A file's stream ends at its first error; the other
                    // threads stop at their next hand-over.
                    self.rx.clear();
                }
                Err(e)
            }
            None => {
                self.rx.clear();
                self.join();
                Ok(false)
            }
        }
    }

    /// Waits for the threads; re-raises a panic, if one had one (a bug,
    /// never bad input: the stream would otherwise end early unnoticed).
    fn join(&mut self) {
        for t in self.threads.drain(..) {
            if let Err(p) = t.join() {
                std::panic::resume_unwind(p);
            }
        }
    }

    /// The records decoded ahead that are not yet taken, as one slice: the
    /// rest of the current chunk, or the next chunk once that is used up;
    /// `Ok(None)` at the end of the stream. Nothing is copied, so a
    /// consumer that works chunk by chunk (a simulation loop) pays nothing
    /// per record for the hand-over. On an error the records before it
    /// have come out in earlier slices; the next call goes on after it.
    pub fn take_chunk(&mut self) -> Result<Option<&[Record]>> {
        while self.pos >= self.cur.len() {
            if !self.advance()? {
                return Ok(None);
            }
        }
        let from = self.pos;
        self.pos = self.cur.len();
        Ok(Some(&self.cur[from..]))
    }

    /// Appends up to `max` next records to `buf` and returns how many; fewer
    /// only at the end of the stream (0: it has ended). On an error, the
    /// records before it stay appended and the error is returned; the next
    /// call goes on after it.
    pub fn fill(&mut self, buf: &mut Vec<Record>, max: usize) -> Result<usize> {
        let mut n = 0;
        while n < max {
            let avail = &self.cur[self.pos..];
            if avail.is_empty() {
                if !self.advance()? {
                    break;
                }
                continue;
            }
            let take = avail.len().min(max - n);
            buf.extend_from_slice(&avail[..take]);
            self.pos += take;
            n += take;
        }
        Ok(n)
    }

    /// The next records decoded ahead, in place of `buf`'s: the rest of
    /// the current chunk, or else the next chunk whole, which is handed
    /// over by swapping buffers (`buf`'s old buffer goes back to the
    /// decoding threads to be reused), so nothing is copied. Returns how
    /// many (0: the stream has ended, `buf` is empty). On an error `buf` is
    /// empty and the error is returned (the records before it came out in
    /// earlier calls); the next call goes on after it.
    pub fn swap_chunk(&mut self, buf: &mut Vec<Record>) -> Result<usize> {
        buf.clear();
        while self.pos >= self.cur.len() {
            if !self.advance()? {
                return Ok(0);
            }
        }
        if self.pos == 0 {
            // `cur` takes `buf`'s empty buffer: used up at position 0, it
            // goes back to a thread at the next advance.
            std::mem::swap(buf, &mut self.cur);
        } else {
            buf.extend_from_slice(&self.cur[self.pos..]);
            self.pos = self.cur.len();
        }
        Ok(buf.len())
    }
}

impl Iterator for Prefetch {
    type Item = Result<Record>;

    #[inline]
    fn next(&mut self) -> Option<Result<Record>> {
        loop {
            if let Some(&r) = self.cur.get(self.pos) {
                self.pos += 1;
                return Some(Ok(r));
            }
            match self.advance() {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl Drop for Prefetch {
    fn drop(&mut self) {
        // Closing the channel makes the thread's next send fail, and it
        // returns; a panic of the thread is not re-raised while dropping.
        self.rx.clear();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl std::fmt::Debug for Prefetch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prefetch")
            .field("buffered", &(self.cur.len() - self.pos))
            .field("threads", &self.threads.len())
            .finish()
    }
}

/// Starts a read-ahead thread running `body`: named `cachepart-prefetch`,
/// below its consumer's priority ([`priority::below_consumer`]).
fn spawn_read_ahead(body: impl FnOnce() + Send + 'static) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("cachepart-prefetch".into())
        .spawn(move || {
            priority::below_consumer();
            body()
        })
}

#[cfg(test)]
mod tests;
