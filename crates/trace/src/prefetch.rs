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
//! reused, so steady state allocates nothing). A reader's frame of at
//! least a chunk's records travels whole, as one chunk, without being
//! copied. Dropping a [`Prefetch`]
//! stops its thread (it ends at its next hand-over) and waits for it.
//!
//! [`Reader`]: crate::Reader

use std::io::Read;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;

use crate::error::{Result, TraceError};
use crate::reader::Reader;
use crate::record::Record;

/// Records per chunk by default (512 KiB of records).
pub const DEFAULT_CHUNK_RECORDS: usize = 1 << 16;
/// Chunks decoded ahead by default.
pub const DEFAULT_DEPTH: usize = 4;

/// What the thread sends: a chunk of records or the source's error.
enum Msg {
    Records(Vec<Record>),
    Error(TraceError),
}

/// The producing side: fills chunks and sends them.
struct Sink {
    tx: SyncSender<Msg>,
    back: Receiver<Vec<Record>>,
    chunk: Vec<Record>,
    chunk_records: usize,
}

impl Sink {
    fn fresh(&self) -> Vec<Record> {
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
    fn flush(&mut self) -> bool {
        if self.chunk.is_empty() {
            return true;
        }
        let next = self.fresh();
        let full = std::mem::replace(&mut self.chunk, next);
        self.tx.send(Msg::Records(full)).is_ok()
    }

    /// Appends `recs`, sending each chunk as it fills; `false` once the
    /// consumer is gone.
    fn extend(&mut self, mut recs: &[Record]) -> bool {
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
    fn extend_frame(&mut self, frame: &mut Vec<Record>) -> bool {
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

    fn push(&mut self, r: Record) -> bool {
        self.chunk.push(r);
        self.chunk.len() < self.chunk_records || self.flush()
    }

    /// Sends the records so far, then `e`; `false` once the consumer is
    /// gone.
    fn error(&mut self, e: TraceError) -> bool {
        self.flush() && self.tx.send(Msg::Error(e)).is_ok()
    }
}

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
        let thread = std::thread::Builder::new()
            .name("cachepart-prefetch".into())
            .spawn(move || body(&mut sink))?;
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
            let thread = std::thread::Builder::new()
                .name("cachepart-prefetch".into())
                .spawn(move || {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Kind;
    use crate::writer::Writer;
    use crate::Header;

    fn recs(n: u64) -> Vec<Record> {
        (0..n)
            .map(|i| Record::access(Kind::Load, 0x1000 + i * 8, 8, (i % 5) as u32).unwrap())
            .collect()
    }

    fn trace(records: &[Record], frame_records: u32) -> Vec<u8> {
        let header = Header {
            frame_records,
            ..Header::default()
        };
        let mut w = Writer::new(Vec::new(), &header).unwrap();
        w.extend(records.iter().copied()).unwrap();
        w.finish().unwrap().0
    }

    #[test]
    fn take_chunk_hands_over_every_record_once_in_order() {
        let all = recs(10_007);
        let bytes = trace(&all, 1000);
        for (chunk, depth) in [(1, 1), (7, 2), (4096, 4)] {
            let mut p = Prefetch::reader_with(
                Reader::new(std::io::Cursor::new(bytes.clone())).unwrap(),
                chunk,
                depth,
            )
            .unwrap();
            let mut got = Vec::new();
            // a record taken one by one first, then the rest chunk by chunk
            got.push(p.next().unwrap().unwrap());
            while let Some(c) = p.take_chunk().unwrap() {
                // a frame of at least a chunk's records comes whole
                assert!(!c.is_empty() && c.len() <= chunk.max(1000));
                got.extend_from_slice(c);
            }
            assert_eq!(got, all, "chunk {chunk}, depth {depth}");
            assert!(p.take_chunk().unwrap().is_none());
        }
    }

    #[test]
    fn reader_records_come_out_in_order_across_chunks_and_frames() {
        let all = recs(10_007);
        let bytes = trace(&all, 1000);
        for (chunk, depth) in [(1, 1), (7, 2), (1000, 3), (4096, 4), (1 << 16, 4)] {
            let p = Prefetch::reader_with(
                Reader::new(std::io::Cursor::new(bytes.clone())).unwrap(),
                chunk,
                depth,
            )
            .unwrap();
            let got: Vec<Record> = p.map(|r| r.unwrap()).collect();
            assert_eq!(got, all, "chunk {chunk} depth {depth}");
        }
    }

    /// A `Read` that counts the bytes taken from it.
    struct Counted {
        inner: std::io::Cursor<Vec<u8>>,
        taken: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    }

    impl Read for Counted {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.taken.fetch_add(n, std::sync::atomic::Ordering::SeqCst);
            Ok(n)
        }
    }

    /// Frames larger than the chunks count whole against the depth: with
    /// 4 chunks' records fitting in one frame, a consumer that stops after
    /// its first frame lets the thread read at most three frames (the one
    /// consumed, one waiting, one decoded and held), not six.
    #[test]
    fn whole_frames_read_ahead_at_most_one_waiting() {
        let frame = 4096u32;
        let all = recs(u64::from(frame) * 12);
        let bytes = trace(&all, frame);
        let frame_bytes = (bytes.len() - 1) / 12;
        let taken = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = Counted {
            inner: std::io::Cursor::new(bytes),
            taken: taken.clone(),
        };
        // 4 chunks of 256 records: 1,024 records, a quarter of a frame
        let mut p = Prefetch::reader_with(Reader::new(counted).unwrap(), 256, 4).unwrap();
        let first = p.take_chunk().unwrap().unwrap().to_vec();
        assert_eq!(first[..], all[..frame as usize]);
        // let the thread run as far ahead as it may
        let mut last = 0;
        for _ in 0..50 {
            std::thread::sleep(std::time::Duration::from_millis(10));
            let now = taken.load(std::sync::atomic::Ordering::SeqCst);
            if now == last {
                break;
            }
            last = now;
        }
        let frames_read = taken.load(std::sync::atomic::Ordering::SeqCst) / frame_bytes;
        assert!(frames_read <= 3, "read {frames_read} frames ahead");
        let rest: Vec<Record> = p.map(|r| r.unwrap()).collect();
        assert_eq!(rest[..], all[frame as usize..]);
    }

    #[test]
    fn fill_gives_batches_then_zero_at_the_end() {
        let all = recs(2_500);
        let bytes = trace(&all, 300);
        let mut p =
            Prefetch::reader_with(Reader::new(std::io::Cursor::new(bytes)).unwrap(), 700, 2)
                .unwrap();
        let mut got = Vec::new();
        let mut sizes = Vec::new();
        loop {
            let n = p.fill(&mut got, 1000).unwrap();
            if n == 0 {
                break;
            }
            sizes.push(n);
        }
        assert_eq!(sizes, vec![1000, 1000, 500]);
        assert_eq!(got, all);
        assert_eq!(p.fill(&mut got, 10).unwrap(), 0);
    }

    #[test]
    fn errors_come_at_the_same_position_with_the_same_offset() {
        let all = recs(5_000);
        let bytes = trace(&all, 1000);
        // Cut inside the third frame: the synchronous reader's sequence of
        // items is the reference.
        let cut = bytes[..bytes.len() * 3 / 5].to_vec();
        let sync: Vec<String> = Reader::new(&cut[..])
            .unwrap()
            .map(|r| format!("{r:?}"))
            .collect();
        assert!(sync.last().unwrap().starts_with("Err"), "{:?}", sync.last());
        for (chunk, depth) in [(1, 1), (333, 2), (1 << 16, 4)] {
            let p = Prefetch::reader_with(
                Reader::new(std::io::Cursor::new(cut.clone())).unwrap(),
                chunk,
                depth,
            )
            .unwrap();
            let got: Vec<String> = p.map(|r| format!("{r:?}")).collect();
            assert_eq!(got, sync, "chunk {chunk} depth {depth}");
        }
        // fill: the records before the error are appended, then the error.
        let mut p =
            Prefetch::reader_with(Reader::new(std::io::Cursor::new(cut)).unwrap(), 64, 1).unwrap();
        let mut got = Vec::new();
        let e = loop {
            match p.fill(&mut got, 1000) {
                Ok(0) => panic!("no error"),
                Ok(_) => {}
                Err(e) => break e,
            }
        };
        assert_eq!(got.len(), sync.len() - 1);
        assert_eq!(format!("{:?}", Err::<Record, _>(e)), *sync.last().unwrap());
        assert!(matches!(p.fill(&mut got, 10), Ok(0)));
    }

    #[test]
    fn iterator_items_pass_through_errors_included() {
        let items: Vec<Result<Record>> = (0..50u64)
            .map(|i| {
                if i % 17 == 16 {
                    Err(TraceError::Truncated {
                        what: "test",
                        offset: i,
                    })
                } else {
                    Ok(Record::access(Kind::Store, i * 64, 4, 0).unwrap())
                }
            })
            .collect();
        let want: Vec<String> = items.iter().map(|r| format!("{r:?}")).collect();
        let p = Prefetch::iter_with(items.into_iter(), 5, 1).unwrap();
        let got: Vec<String> = p.map(|r| format!("{r:?}")).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn dropping_early_stops_the_thread() {
        // An endless source: dropping the consumer must still end the
        // thread (the drop joins it, so this returns).
        let r = Record::access(Kind::Load, 64, 8, 0).unwrap();
        let endless = std::iter::repeat(r).map(Ok);
        let mut p = Prefetch::iter_with(endless, 128, 2).unwrap();
        let mut buf = Vec::new();
        assert_eq!(p.fill(&mut buf, 1000).unwrap(), 1000);
        drop(p);
    }
}
