//! The sorting of a chunk of records into one bucket per partition of a
//! split cachegrind simulation (see `part`), so that each simulating
//! thread reads only the records it has a share in: by the simulating
//! threads themselves (`scatter`, a slice each), or ahead by the threads
//! that decode a trace's frames ([`Scatterer`]), each record put into its
//! bucket as it is decoded ([`Scattered`] is a [`RecordSink`]).
//!
//! An instruction fetch wholly in the I1 line of the fetch placed last in
//! its bucket (with no straddling reference or escape placed there since)
//! is not placed but counted in the bucket's `folded`: the line is then
//! its I1 set's most recent block in that partition (only fetches touch
//! I1, and other partitions' lines lie in other sets), so the fetch is a
//! hit that changes nothing, and its thread adds one to `Ir` for it. A
//! real program's fetches mostly repeat the line before them (95% of
//! `gzip -9`'s), and a loop's line lands on one thread, so folding them
//! here is what keeps that thread from doing most of the work.

use std::sync::{Arc, Mutex};

use cachepart_trace::{Kind, Record, RecordSink};

/// The records of one slice of a chunk that one partition has a share
/// in, in trace order.
#[derive(Debug)]
pub(super) struct Bucket {
    pub(super) records: Vec<Record>,
    /// The chunk indexes of the references among them that straddle
    /// partitions, in order.
    pub(super) splits: Vec<u32>,
    /// Instruction fetches counted here instead of placed: each an I1 hit
    /// that changes nothing (see the module docs).
    pub(super) folded: u64,
    /// The I1 line of the last fetch placed, while it lay in one line and
    /// nothing that may move I1's blocks came after it; else `NO_LINE`.
    last_iline: u64,
}

/// No I1 line (line numbers are below `2^48`).
const NO_LINE: u64 = u64::MAX;

impl Default for Bucket {
    fn default() -> Self {
        Bucket {
            records: Vec::new(),
            splits: Vec::new(),
            folded: 0,
            last_iline: NO_LINE,
        }
    }
}

impl Bucket {
    pub(super) fn clear(&mut self) {
        self.records.clear();
        self.splits.clear();
        self.folded = 0;
        self.last_iline = NO_LINE;
    }
}

/// How references are placed: the partition bits, the data clamp and the
/// I1 line of the fold.
#[derive(Clone, Copy, Debug)]
pub(super) struct Rule {
    /// Bits `shift ..` of an address name its partition.
    pub(super) shift: u32,
    /// `threads - 1`.
    pub(super) mask: u64,
    /// Data references are clamped to this many bytes.
    pub(super) clamp: u64,
    /// I1's line bits.
    pub(super) iline_bits: u32,
}

/// Emptied buckets of chunks that came scattered, handed back by the
/// simulating threads for the [`Scatterer`]'s next chunks: their memory
/// is reused rather than allocated (and faulted in) again for each chunk.
#[derive(Debug, Default)]
pub(super) struct BucketPool(Mutex<Vec<Bucket>>);

impl BucketPool {
    /// Keeps `bucket`, emptied, for a later chunk.
    pub(super) fn put(&self, mut bucket: Bucket) {
        bucket.clear();
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(bucket);
    }

    /// `n` buckets: kept ones first, new ones for the rest.
    fn take(&self, n: usize) -> Vec<Bucket> {
        let mut out = {
            let mut spare = self.0.lock().unwrap_or_else(|p| p.into_inner());
            let from = spare.len().saturating_sub(n);
            spare.split_off(from)
        };
        out.resize_with(n, Bucket::default);
        out
    }
}

/// Sorts chunks of records into one bucket per thread of a
/// [`ParallelCachegrind`](super::ParallelCachegrind), on any thread (a
/// decoder's, say), for
/// [`ParallelCachegrind::run_scattered`](super::ParallelCachegrind::run_scattered).
/// Clones share the memory of the buckets the simulation is done with.
#[derive(Clone, Debug)]
pub struct Scatterer {
    rule: Rule,
    threads: usize,
    pub(super) pool: Arc<BucketPool>,
}

impl Scatterer {
    /// The scatterer of `threads` partitions (a power of two) by `rule`.
    pub(super) fn new(rule: Rule, threads: usize) -> Self {
        Scatterer {
            rule,
            threads,
            pool: Arc::default(),
        }
    }

    /// An empty chunk: the records pushed to it ([`RecordSink::push`], as
    /// [`TraceFile::decode_frame`](cachepart_trace::TraceFile::decode_frame)
    /// does while it decodes a frame) go straight into their threads'
    /// buckets, in trace order. The buckets' memory comes from chunks the
    /// simulation is done with, where there are such.
    pub fn chunk(&self) -> Scattered {
        Scattered {
            buckets: self.pool.take(self.threads),
            len: 0,
            rule: self.rule,
        }
    }

    /// `records`, one chunk in trace order, sorted into one bucket per
    /// thread.
    pub fn scatter(&self, records: &[Record]) -> Scattered {
        let mut s = self.chunk();
        s.reserve(records.len());
        scatter(self.rule, records, 0, &mut s.buckets);
        s.len = records.len();
        s
    }
}

/// One chunk of records sorted into one bucket per thread by a
/// [`Scatterer`]: whole ([`Scatterer::scatter`]) or record by record as
/// they are decoded ([`Scatterer::chunk`]).
#[derive(Debug)]
pub struct Scattered {
    pub(super) buckets: Vec<Bucket>,
    /// Records in the chunk.
    pub(super) len: usize,
    rule: Rule,
}

impl Scattered {
    /// Records in the chunk.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the chunk holds no record.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl RecordSink for Scattered {
    fn reserve(&mut self, records: usize) {
        // an even share and an eighth for straddles and skew
        let each = records / self.buckets.len() * 9 / 8;
        for b in &mut self.buckets {
            b.records.reserve(each);
        }
    }

    #[inline(always)]
    fn push(&mut self, record: Record) {
        place(self.rule, self.len as u32, record, &mut self.buckets);
        self.len += 1;
    }

    /// A block of records (the frame decoder hands them over so): the
    /// chunk index kept in a register, not in `self`, across the block.
    #[inline]
    fn push_slice(&mut self, records: &[Record]) {
        let rule = self.rule;
        let from = self.len as u32;
        for (idx, rec) in (from..).zip(records) {
            place(rule, idx, *rec, &mut self.buckets);
        }
        self.len += records.len();
    }
}

/// Scatters `records` (a slice of a chunk, its first at chunk index
/// `from`) into `out`, one bucket per partition, by `rule` (see
/// [`place`]).
pub(super) fn scatter(rule: Rule, records: &[Record], from: u32, out: &mut [Bucket]) {
    for (idx, rec) in (from..).zip(records) {
        place(rule, idx, *rec, out);
    }
}

/// Puts `rec`, chunk index `idx`, into its buckets of `out`: a reference
/// wholly in one partition into that one's (an instruction fetch that
/// repeats the bucket's last I1 line only counted there, see the module
/// docs), a reference that straddles partitions into each of theirs (its
/// index also into the bucket's `splits`), an escape into every one.
#[inline(always)]
fn place(rule: Rule, idx: u32, rec: Record, out: &mut [Bucket]) {
    let code = rec.kind_code();
    let addr = rec.addr_unchecked();
    let size = rec.size_unchecked();
    let fetch = code == Kind::Ifetch as u64;
    // data references are clamped to the smallest line
    let size = if fetch { size } else { size.min(rule.clamp) };
    let last = addr.wrapping_add(size.max(1) - 1);
    if (addr ^ last) >> rule.shift == 0 && code != Kind::Escape as u64 {
        if let Some(b) = out.get_mut(((addr >> rule.shift) & rule.mask) as usize) {
            if fetch {
                let line = addr >> rule.iline_bits;
                if (addr ^ last) >> rule.iline_bits != 0 {
                    b.last_iline = NO_LINE;
                } else if line == b.last_iline {
                    b.folded += 1;
                    return;
                } else {
                    b.last_iline = line;
                }
            }
            b.records.push(rec);
        }
        return;
    }
    place_spread(rule.shift, rule.mask, idx, rec, addr, last, out);
}

/// [`place`] for an escape or a reference that spans blocks.
#[inline(never)]
fn place_spread(
    shift: u32,
    mask: u64,
    idx: u32,
    rec: Record,
    addr: u64,
    last: u64,
    out: &mut [Bucket],
) {
    if rec.kind_code() == Kind::Escape as u64 {
        // a flush empties I1: no line is known to be most recent after it
        for b in out.iter_mut() {
            b.records.push(rec);
            b.last_iline = NO_LINE;
        }
        return;
    }
    // the partitions of the blocks it spans, each once: blocks take the
    // partitions in turn, so its first `mask + 1` blocks name every
    // partition it has
    let last_block = last >> shift;
    let block_mask = u64::MAX >> shift;
    let mut b = addr >> shift;
    for _ in 0..out.len() {
        if let Some(bucket) = out.get_mut((b & mask) as usize) {
            bucket.records.push(rec);
            bucket.splits.push(idx);
            // a straddling fetch moves I1 blocks of this part
            bucket.last_iline = NO_LINE;
        }
        if b == last_block {
            break;
        }
        b = b.wrapping_add(1) & block_mask;
    }
}
