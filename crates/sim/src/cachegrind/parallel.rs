//! The cachegrind-compatible simulation split over threads
//! ([`ParallelCachegrind`]): each thread simulates the lines of its
//! [`Partition`] (see `part` for the three passes per chunk), and the
//! totals are summed at the end, equal to one thread's for any thread
//! count.
//!
//! The calling thread reads the chunks, hands each to the other threads
//! (shared, not copied) and simulates partition 0 itself. A thread's
//! passes over one chunk wait only for the other threads' earlier passes
//! over the same chunk, and a thread makes pass 1 over the next chunk
//! before pass 2 over this one, so a thread rarely waits: it would have to
//! fall a whole chunk behind.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};

use cachepart_trace::Record;

use super::mtf::MtfCache;
use super::part::{Bitmap, Bucket, Owned, Part, Pending};
use super::{CachegrindConfig, CachegrindSim, CachegrindSummary, Partition};
use crate::error::{Result, SimError};

/// Records per chunk that [`ParallelCachegrind::run`] asks for.
pub const CHUNK_RECORDS: usize = 1 << 16;

/// Chunks a thread may have waiting to be taken.
const QUEUE_DEPTH: usize = 4;

/// The cachegrind-compatible simulator split over threads by
/// [`Partition`]: the same totals as [`CachegrindSim`] for any thread
/// count.
#[derive(Clone, Debug)]
pub struct ParallelCachegrind {
    partition: Partition,
    parts: Vec<Part>,
}

impl ParallelCachegrind {
    /// Empty caches as configured, split over `threads` threads: fails on
    /// what [`CachegrindSim::new`] refuses and on what
    /// [`Partition::new`] refuses.
    pub fn new(cfg: &CachegrindConfig, threads: usize) -> Result<Self> {
        CachegrindSim::new(cfg)?;
        let partition = Partition::new(cfg, threads)?;
        let geometry = |c: &crate::geometry::CacheConfig, level| {
            c.geometry()
                .map_err(|source| SimError::Geometry { level, source })
        };
        let (i1, d1, ll) = (
            geometry(&cfg.i1, "L1I")?,
            geometry(&cfg.d1, "L1D")?,
            geometry(&cfg.ll, "LL")?,
        );
        let clamp = i1.line().min(d1.line()).min(ll.line());
        let parts = (0..threads)
            .map(|me| {
                let caches = (MtfCache::new(&i1), MtfCache::new(&d1), MtfCache::new(&ll));
                Part::new(me, threads, partition.shift(), caches, clamp)
            })
            .collect();
        Ok(ParallelCachegrind { partition, parts })
    }

    /// How the simulation is split.
    pub fn partition(&self) -> Partition {
        self.partition
    }

    /// Simulates the records of every chunk `next` gives, in order, until
    /// it gives `None` or fails (the chunks before a failure stay
    /// simulated). `next` is handed an empty vector to fill, whose capacity
    /// may come from an earlier chunk; chunks of about [`CHUNK_RECORDS`]
    /// records suit it. With one thread, `next` runs on the calling thread
    /// and no thread is started.
    pub fn run<E, F>(&mut self, mut next: F) -> std::result::Result<(), E>
    where
        F: FnMut(Vec<Record>) -> std::result::Result<Option<Vec<Record>>, E>,
    {
        let threads = self.parts.len();
        let poisoned = AtomicBool::new(false);
        let poisoned = &poisoned;
        std::thread::scope(|s| {
            let (first, rest) = self
                .parts
                .split_first_mut()
                .expect("a partition has at least one thread");
            let mut senders = Vec::with_capacity(rest.len());
            for part in rest {
                let (tx, rx) = sync_channel::<Arc<Chunk>>(QUEUE_DEPTH);
                senders.push(tx);
                s.spawn(move || {
                    let _guard = PoisonOnPanic(poisoned);
                    worker(part, threads, poisoned, rx)
                });
            }
            let _guard = PoisonOnPanic(poisoned);
            let mut mine = Pipeline::new(first, threads, poisoned);
            // chunks handed out, oldest first, whose vectors come back
            // once every thread is done with them
            let mut handed: VecDeque<Arc<Chunk>> = VecDeque::new();
            let result = loop {
                let buf = reuse(&mut handed).unwrap_or_default();
                match next(buf) {
                    Err(e) => break Err(e),
                    Ok(None) => break Ok(()),
                    Ok(Some(records)) => {
                        let chunk = Arc::new(Chunk::new(records, threads));
                        for tx in &senders {
                            // a thread gone has panicked; the scope says so
                            let _ = tx.send(Arc::clone(&chunk));
                        }
                        mine.feed(Arc::clone(&chunk));
                        handed.push_back(chunk);
                    }
                }
            };
            drop(senders);
            mine.finish();
            result
        })
    }

    /// The totals so far, as cachegrind prints them.
    pub fn summary(&self) -> CachegrindSummary {
        let mut sum = [0u64; 9];
        for p in &self.parts {
            for (s, v) in sum.iter_mut().zip(p.totals().values()) {
                *s += v;
            }
        }
        CachegrindSummary::from_values(sum)
    }
}

/// The vector of the oldest chunk every thread is done with, emptied.
fn reuse(handed: &mut VecDeque<Arc<Chunk>>) -> Option<Vec<Record>> {
    if handed.front().is_some_and(|c| Arc::strong_count(c) == 1) {
        let chunk = Arc::try_unwrap(handed.pop_front()?).ok()?;
        let mut records = chunk.records;
        records.clear();
        return Some(records);
    }
    None
}

/// A thread other than the caller's: its part of every chunk it is sent.
fn worker(part: &mut Part, threads: usize, poisoned: &AtomicBool, rx: Receiver<Arc<Chunk>>) {
    let mut p = Pipeline::new(part, threads, poisoned);
    for chunk in rx {
        p.feed(chunk);
    }
    p.finish();
}

/// One chunk of records shared by every thread, the buckets they scatter
/// it into, the bits they exchange and how many threads are done with
/// each pass.
#[derive(Debug)]
struct Chunk {
    records: Vec<Record>,
    /// `threads x threads` buckets: thread `t`'s slice of the records
    /// for partition `p` at `t * threads + p`.
    buckets: Box<[Mutex<Bucket>]>,
    /// Split references whose L1 part missed in some thread.
    l1: Bitmap,
    /// Split references whose LL part missed in some thread.
    ll: Bitmap,
    /// Threads done scattering their slice, with pass 1, with pass 2.
    scattered: AtomicUsize,
    l1_done: AtomicUsize,
    ll_done: AtomicUsize,
}

impl Chunk {
    fn new(records: Vec<Record>, threads: usize) -> Self {
        let n = records.len();
        Chunk {
            records,
            buckets: (0..threads * threads)
                .map(|_| Mutex::new(Bucket::default()))
                .collect(),
            l1: Bitmap::new(n),
            ll: Bitmap::new(n),
            scattered: AtomicUsize::new(0),
            l1_done: AtomicUsize::new(0),
            ll_done: AtomicUsize::new(0),
        }
    }

    /// The slice of the records thread `t` of `threads` scatters, and the
    /// index of its first.
    fn slice(&self, t: usize, threads: usize) -> (&[Record], u32) {
        let n = self.records.len();
        let (from, to) = (n * t / threads, n * (t + 1) / threads);
        (self.records.get(from..to).unwrap_or(&[]), from as u32)
    }
}

/// One thread's chunks between passes.
struct Pipeline<'a> {
    part: &'a mut Part,
    me: usize,
    threads: usize,
    poisoned: &'a AtomicBool,
    /// Chunks this thread has scattered its slice of.
    scattered: VecDeque<Arc<Chunk>>,
    /// Chunks done with pass 1, with their LL queues.
    after_l1: VecDeque<(Arc<Chunk>, Vec<Pending>)>,
    /// Chunks done with pass 2, with the split references owned here.
    after_ll: VecDeque<(Arc<Chunk>, Vec<Owned>)>,
    spare_buckets: Vec<Bucket>,
    spare_queues: Vec<Vec<Pending>>,
    spare_owned: Vec<Vec<Owned>>,
}

impl<'a> Pipeline<'a> {
    fn new(part: &'a mut Part, threads: usize, poisoned: &'a AtomicBool) -> Self {
        Pipeline {
            me: part.me(),
            part,
            threads,
            poisoned,
            scattered: VecDeque::new(),
            after_l1: VecDeque::new(),
            after_ll: VecDeque::new(),
            spare_buckets: Vec::new(),
            spare_queues: Vec::new(),
            spare_owned: Vec::new(),
        }
    }

    /// Scatters this thread's slice of `chunk`, then makes pass 1 over
    /// the chunk before it, pass 2 over the one before that and pass 3
    /// over the one before that.
    fn feed(&mut self, chunk: Arc<Chunk>) {
        let mut out: Vec<Bucket> = (0..self.threads)
            .map(|_| self.spare_buckets.pop().unwrap_or_default())
            .collect();
        let (records, from) = chunk.slice(self.me, self.threads);
        self.part.scatter(records, from, &mut out);
        for (slot, bucket) in chunk.buckets[self.me * self.threads..].iter().zip(out) {
            *slot.lock().expect("no thread panics holding a bucket") = bucket;
        }
        chunk.scattered.fetch_add(1, Ordering::Release);
        self.scattered.push_back(chunk);
        while self.scattered.len() > 1 {
            self.l1_step();
        }
        while self.after_l1.len() > 1 {
            self.ll_step();
        }
        while self.after_ll.len() > 1 {
            self.split_step();
        }
    }

    /// Every pass over every chunk fed.
    fn finish(&mut self) {
        while !self.scattered.is_empty() {
            self.l1_step();
        }
        while !self.after_l1.is_empty() {
            self.ll_step();
        }
        while !self.after_ll.is_empty() {
            self.split_step();
        }
    }

    /// Pass 1 over the oldest chunk scattered, once every thread has
    /// scattered its slice: this partition's bucket of each slice in turn.
    fn l1_step(&mut self) {
        let Some(chunk) = self.scattered.pop_front() else {
            return;
        };
        self.wait(&chunk.scattered);
        let mut queue = self.spare_queues.pop().unwrap_or_default();
        for t in 0..self.threads {
            let Some(slot) = chunk.buckets.get(t * self.threads + self.me) else {
                continue;
            };
            let mut bucket =
                std::mem::take(&mut *slot.lock().expect("no thread panics holding a bucket"));
            self.part.l1_pass(&bucket, &chunk.l1, &mut queue);
            bucket.clear();
            self.spare_buckets.push(bucket);
        }
        chunk.l1_done.fetch_add(1, Ordering::Release);
        self.after_l1.push_back((chunk, queue));
    }

    /// Pass 2 over the oldest chunk done with pass 1, once every thread is.
    fn ll_step(&mut self) {
        let Some((chunk, mut queue)) = self.after_l1.pop_front() else {
            return;
        };
        self.wait(&chunk.l1_done);
        let mut owned = self.spare_owned.pop().unwrap_or_default();
        self.part.ll_pass(&queue, &chunk.l1, &chunk.ll, &mut owned);
        chunk.ll_done.fetch_add(1, Ordering::Release);
        queue.clear();
        self.spare_queues.push(queue);
        self.after_ll.push_back((chunk, owned));
    }

    /// Pass 3 over the oldest chunk done with pass 2, once every thread is.
    fn split_step(&mut self) {
        let Some((chunk, mut owned)) = self.after_ll.pop_front() else {
            return;
        };
        self.wait(&chunk.ll_done);
        self.part.split_pass(&owned, &chunk.ll);
        owned.clear();
        self.spare_owned.push(owned);
    }

    /// Until `done` counts every thread; panics if another thread has.
    fn wait(&self, done: &AtomicUsize) {
        let mut spins = 0u32;
        while done.load(Ordering::Acquire) < self.threads {
            assert!(
                !self.poisoned.load(Ordering::Relaxed),
                "another simulating thread panicked"
            );
            if spins < 64 {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Raises the flag when its thread unwinds, so that the others stop
/// waiting for it.
struct PoisonOnPanic<'a>(&'a AtomicBool);

impl Drop for PoisonOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}
