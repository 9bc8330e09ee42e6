//! One simulating thread's passes over the chunks of a split cachegrind
//! simulation (see `parallel` and `part`), and the chunks they share.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};

use cachepart_trace::Record;

use super::part::{Bitmap, Owned, Part, Pending};
use super::scatter::Scattered;
use super::scatter::{Bucket, BucketPool};

/// A thread other than the caller's: its part of every chunk it is sent.
pub(super) fn worker(
    part: &mut Part,
    threads: usize,
    poisoned: &AtomicBool,
    pool: &BucketPool,
    rx: Receiver<Arc<Chunk>>,
) {
    let mut p = Pipeline::new(part, threads, poisoned, pool);
    for chunk in rx {
        p.feed(chunk);
    }
    p.finish();
}

/// One chunk of records shared by every thread, the buckets they scatter
/// it into, the bits they exchange and how many threads are done with
/// each pass.
#[derive(Debug)]
pub(super) struct Chunk {
    pub(super) records: Vec<Record>,
    /// `rows x threads` buckets: slice `t`'s records for partition `p`
    /// at `t * threads + p`.
    buckets: Box<[Mutex<Bucket>]>,
    /// Slices: one per thread when the threads scatter the chunk, one
    /// when it came scattered.
    rows: usize,
    /// Records in the chunk.
    len: usize,
    /// Whether the threads scatter it (else it came scattered).
    to_scatter: bool,
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
    pub(super) fn new(records: Vec<Record>, threads: usize) -> Self {
        let n = records.len();
        Chunk {
            records,
            buckets: (0..threads * threads)
                .map(|_| Mutex::new(Bucket::default()))
                .collect(),
            rows: threads,
            len: n,
            to_scatter: true,
            l1: Bitmap::new(n),
            ll: Bitmap::new(n),
            scattered: AtomicUsize::new(0),
            l1_done: AtomicUsize::new(0),
            ll_done: AtomicUsize::new(0),
        }
    }

    /// A chunk scattered already: one slice, nothing for the threads to
    /// scatter.
    pub(super) fn scattered(s: Scattered, threads: usize) -> Self {
        Chunk {
            records: Vec::new(),
            buckets: s.buckets.into_iter().map(Mutex::new).collect(),
            rows: 1,
            len: s.len,
            to_scatter: false,
            l1: Bitmap::new(s.len),
            ll: Bitmap::new(s.len),
            scattered: AtomicUsize::new(threads),
            l1_done: AtomicUsize::new(0),
            ll_done: AtomicUsize::new(0),
        }
    }

    /// The slice of the records thread `t` of `threads` scatters, and the
    /// index of its first.
    fn slice(&self, t: usize, threads: usize) -> (&[Record], u32) {
        let n = self.len;
        let (from, to) = (n * t / threads, n * (t + 1) / threads);
        (self.records.get(from..to).unwrap_or(&[]), from as u32)
    }
}

/// One thread's chunks between passes.
pub(super) struct Pipeline<'a> {
    part: &'a mut Part,
    me: usize,
    threads: usize,
    poisoned: &'a AtomicBool,
    /// Where the buckets of chunks that came scattered go back to.
    pool: &'a BucketPool,
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
    pub(super) fn new(
        part: &'a mut Part,
        threads: usize,
        poisoned: &'a AtomicBool,
        pool: &'a BucketPool,
    ) -> Self {
        Pipeline {
            me: part.me(),
            part,
            threads,
            poisoned,
            pool,
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
    pub(super) fn feed(&mut self, chunk: Arc<Chunk>) {
        if chunk.to_scatter {
            self.scatter(&chunk);
        }
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

    /// Scatters this thread's slice of `chunk` into its row of buckets.
    fn scatter(&mut self, chunk: &Chunk) {
        let mut out: Vec<Bucket> = (0..self.threads)
            .map(|_| self.spare_buckets.pop().unwrap_or_default())
            .collect();
        let (records, from) = chunk.slice(self.me, self.threads);
        self.part.scatter(records, from, &mut out);
        let row = chunk.buckets.iter().skip(self.me * self.threads);
        for (slot, bucket) in row.zip(out) {
            *slot.lock().expect("no thread panics holding a bucket") = bucket;
        }
        chunk.scattered.fetch_add(1, Ordering::Release);
    }

    /// Every pass over every chunk fed.
    pub(super) fn finish(&mut self) {
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
        for t in 0..chunk.rows {
            let Some(slot) = chunk.buckets.get(t * self.threads + self.me) else {
                continue;
            };
            let mut bucket =
                std::mem::take(&mut *slot.lock().expect("no thread panics holding a bucket"));
            self.part.l1_pass(&bucket, &chunk.l1, &mut queue);
            if chunk.to_scatter {
                bucket.clear();
                self.spare_buckets.push(bucket);
            } else {
                // back to the scatterer that filled it
                self.pool.put(bucket);
            }
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
pub(super) struct PoisonOnPanic<'a>(pub(super) &'a AtomicBool);

impl Drop for PoisonOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}
