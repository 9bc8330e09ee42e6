//! The cachegrind-compatible simulation split over threads
//! ([`ParallelCachegrind`]): each thread simulates the lines of its
//! [`Partition`] (see `part` for the three passes per chunk), and the
//! totals are summed at the end, equal to one thread's for any thread
//! count.
//!
//! The calling thread reads the chunks, hands each to the other threads
//! (shared, not copied) and simulates partition 0 itself. A thread's
//! passes over one chunk wait only for the other threads' earlier passes
//! over the same chunk, and a thread scatters the next chunk before pass 1
//! over this one (and so on down the passes), so a thread rarely waits: it
//! would have to fall a whole chunk behind.

use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::sync_channel;
use std::sync::Arc;

use cachepart_trace::Record;

use super::mtf::MtfCache;
use super::part::Part;
use super::pipeline::{worker, Chunk, Pipeline, PoisonOnPanic};
use super::scatter::{Scattered, Scatterer};
use super::{CachegrindConfig, CachegrindSim, CachegrindSummary, Partition};
use crate::error::{Result, SimError};

/// Records per chunk that [`ParallelCachegrind::run`] asks for.
pub const CHUNK_RECORDS: usize = 1 << 16;

/// Chunks a thread may have waiting to be taken.
pub(super) const QUEUE_DEPTH: usize = 4;

/// The cachegrind-compatible simulator split over threads by
/// [`Partition`]: the same totals as [`CachegrindSim`] for any thread
/// count.
#[derive(Clone, Debug)]
pub struct ParallelCachegrind {
    partition: Partition,
    scatterer: Scatterer,
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
        let parts: Vec<Part> = (0..threads)
            .map(|me| {
                let caches = (MtfCache::new(&i1), MtfCache::new(&d1), MtfCache::new(&ll));
                Part::new(me, threads, partition.shift(), caches, clamp)
            })
            .collect();
        let scatterer = Scatterer::new(parts[0].rule(), threads);
        Ok(ParallelCachegrind {
            partition,
            scatterer,
            parts,
        })
    }

    /// How the simulation is split.
    pub fn partition(&self) -> Partition {
        self.partition
    }

    /// The scatterer of chunks for [`ParallelCachegrind::run_scattered`].
    pub fn scatterer(&self) -> Scatterer {
        self.scatterer.clone()
    }

    /// Simulates the records of every chunk `next` gives, in order, until
    /// it gives `None` or fails (the chunks before a failure stay
    /// simulated). `next` is handed an empty vector to fill, whose capacity
    /// may come from an earlier chunk; chunks of about [`CHUNK_RECORDS`]
    /// records suit it. The simulating threads scatter each chunk
    /// themselves. With one thread, `next` runs on the calling thread and
    /// no thread is started.
    pub fn run<E, F>(&mut self, mut next: F) -> std::result::Result<(), E>
    where
        F: FnMut(Vec<Record>) -> std::result::Result<Option<Vec<Record>>, E>,
    {
        let threads = self.parts.len();
        self.drive(|handed| {
            let buf = reuse(handed).unwrap_or_default();
            Ok(next(buf)?.map(|records| Chunk::new(records, threads)))
        })
    }

    /// As [`ParallelCachegrind::run`], for chunks already scattered (by
    /// [`ParallelCachegrind::scatterer`], on other threads): the
    /// simulating threads then only simulate.
    pub fn run_scattered<E, F>(&mut self, mut next: F) -> std::result::Result<(), E>
    where
        F: FnMut() -> std::result::Result<Option<Scattered>, E>,
    {
        let threads = self.parts.len();
        self.drive(|_| Ok(next()?.map(|s| Chunk::scattered(s, threads))))
    }

    /// Hands each chunk `next` makes to every thread, simulating
    /// partition 0 on this one.
    fn drive<E, F>(&mut self, mut next: F) -> std::result::Result<(), E>
    where
        F: FnMut(&mut VecDeque<Arc<Chunk>>) -> std::result::Result<Option<Chunk>, E>,
    {
        let threads = self.parts.len();
        let poisoned = AtomicBool::new(false);
        let poisoned = &poisoned;
        let pool = &*self.scatterer.pool;
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
                    worker(part, threads, poisoned, pool, rx)
                });
            }
            let _guard = PoisonOnPanic(poisoned);
            let mut mine = Pipeline::new(first, threads, poisoned, pool);
            // chunks handed out, oldest first, whose vectors come back
            // once every thread is done with them
            let mut handed: VecDeque<Arc<Chunk>> = VecDeque::new();
            let result = loop {
                match next(&mut handed) {
                    Err(e) => break Err(e),
                    Ok(None) => break Ok(()),
                    Ok(Some(chunk)) => {
                        let chunk = Arc::new(chunk);
                        for tx in &senders {
                            // a thread gone has panicked; the scope says so
                            let _ = tx.send(Arc::clone(&chunk));
                        }
                        mine.feed(Arc::clone(&chunk));
                        handed.push_back(chunk);
                        // keep only what may come back soon
                        while handed.len() > 4 * QUEUE_DEPTH {
                            handed.pop_front();
                        }
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
