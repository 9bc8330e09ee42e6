//! One thread's share of a split cachegrind simulation: the I1, D1 and LL
//! sets of the lines it owns (see `partition`), and the three passes it
//! makes over each chunk of records.
//!
//! 0. **Scatter** (`scatter`): the chunk is sorted into one bucket per
//!    partition, so that no thread reads every record.
//! 1. **L1** (`l1_pass`, over this partition's bucket of each slice in
//!    turn): every reference's lines in this thread's partition are looked
//!    up in I1 or D1, in trace order. A reference
//!    wholly inside the partition is counted here, and queued for the LL if
//!    it missed. A reference that straddles partitions (`split`) is looked
//!    up in this thread's part only; a miss of that part sets the
//!    reference's bit in the chunk's shared L1 bitmap, and the reference is
//!    queued whatever the outcome.
//! 2. **LL** (`ll_pass`), once every thread has made pass 1 over the
//!    chunk: the queue in order. A split reference's L1 miss is the OR of
//!    every part's, now in the bitmap; when it missed, each part looks its
//!    lines up in the LL and a miss sets the reference's bit in the LL
//!    bitmap. The reference's owner (the thread of its first byte) counts
//!    the reference and its L1 miss.
//! 3. **Split LL misses** (`split_pass`), once every thread has made
//!    pass 2: the owner counts a split reference's LL miss from the LL
//!    bitmap.
//!
//! Each thread's I1, D1 and LL see the same lookups in the same order as
//! the one-thread simulator's sets of its partition, and every count is
//! made by exactly one thread, so the summed totals equal
//! [`CachegrindSim`](super::CachegrindSim)'s for any thread count.

use std::sync::atomic::{AtomicU64, Ordering};

use cachepart_trace::{Event, Kind, Record};

use super::mtf::MtfCache;
use super::scatter::{scatter, Bucket, Rule};
use super::CachegrindSummary;

/// What kind of reference a queued entry is, and how it is queued.
const INSTR: u8 = 0;
const READ: u8 = 1;
const WRITE: u8 = 2;
const KIND: u8 = 3;
/// The reference straddles partitions.
const SPLIT: u8 = 4;
/// This thread owns the split reference's first byte (and counts it).
const OWNER: u8 = 8;
/// A flush: the LL empties here.
const FLUSH: u8 = 16;

/// A reference (or flush) queued for the LL pass.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pending {
    addr: u64,
    /// The record's index in its chunk (split references).
    idx: u32,
    size: u8,
    tag: u8,
}

impl Pending {
    /// A reference wholly in one partition that missed its L1.
    fn miss(addr: u64, size: u32, kind: u8) -> Self {
        Pending {
            addr,
            idx: 0,
            size: size as u8,
            tag: kind,
        }
    }
}

/// One part's handling of references that straddle partitions.
#[derive(Clone, Copy)]
struct Split {
    me: u64,
    shift: u32,
    mask: u64,
}

impl Split {
    /// Pass 1 of a straddling reference `(addr, size, kind, chunk index)`
    /// in `cache`: this part's lines looked up, a miss set in `l1`, the
    /// reference queued for pass 2 and, by its owner, counted.
    #[cold]
    #[inline(never)]
    fn l1(
        self,
        cache: &mut MtfCache,
        l1: &Bitmap,
        queue: &mut Vec<Pending>,
        t: &mut CachegrindSummary,
        (addr, size, kind, idx): (u64, u32, u8, u32),
    ) {
        let Some(miss) = split_misses(cache, addr, size, self.shift, self.mask, self.me) else {
            return;
        };
        let owner = (addr >> self.shift) & self.mask == self.me;
        if miss {
            l1.set(idx);
        }
        if owner {
            count(t, kind, Level::Ref);
        }
        queue.push(Pending {
            addr,
            idx,
            size: size as u8,
            tag: kind | SPLIT | if owner { OWNER } else { 0 },
        });
    }
}

/// A split reference whose owner counts its LL miss in pass 3.
#[derive(Clone, Copy, Debug)]
pub(super) struct Owned {
    idx: u32,
    kind: u8,
}

/// One bit per record of a chunk, set by any thread.
#[derive(Debug)]
pub(super) struct Bitmap(Box<[AtomicU64]>);

impl Bitmap {
    pub(super) fn new(len: usize) -> Self {
        Bitmap((0..len.div_ceil(64)).map(|_| AtomicU64::new(0)).collect())
    }

    fn set(&self, i: u32) {
        if let Some(w) = self.0.get(i as usize / 64) {
            w.fetch_or(1 << (i % 64), Ordering::Relaxed);
        }
    }

    fn get(&self, i: u32) -> bool {
        self.0
            .get(i as usize / 64)
            .is_some_and(|w| w.load(Ordering::Relaxed) >> (i % 64) & 1 == 1)
    }
}

/// One thread's caches and counts.
#[derive(Clone, Debug)]
pub(super) struct Part {
    /// The partition this thread owns.
    me: u64,
    /// Bits `shift ..` of an address name its partition.
    shift: u32,
    /// `threads - 1`.
    mask: u64,
    /// The smallest line size: cachegrind clamps data references to it.
    clamp: u32,
    i1: MtfCache,
    d1: MtfCache,
    ll: MtfCache,
    totals: CachegrindSummary,
}

impl Part {
    /// Partition `me` of `threads` (bits from `shift`) with empty caches
    /// (full-sized: this part uses only its own sets of them).
    pub(super) fn new(
        me: usize,
        threads: usize,
        shift: u32,
        caches: (MtfCache, MtfCache, MtfCache),
        clamp: u32,
    ) -> Self {
        Part {
            me: me as u64,
            shift,
            mask: threads as u64 - 1,
            clamp,
            i1: caches.0,
            d1: caches.1,
            ll: caches.2,
            totals: CachegrindSummary::default(),
        }
    }

    /// The partition this part owns.
    pub(super) fn me(&self) -> usize {
        self.me as usize
    }

    pub(super) fn totals(&self) -> CachegrindSummary {
        self.totals
    }

    /// Scatters `records` (a slice of the chunk, its first at chunk index
    /// `from`) into `out`, one bucket per partition (see [`scatter`]).
    pub(super) fn scatter(&self, records: &[Record], from: u32, out: &mut [Bucket]) {
        scatter(self.rule(), records, from, out);
    }

    /// How this split places references into buckets.
    pub(super) fn rule(&self) -> Rule {
        Rule {
            shift: self.shift,
            mask: self.mask,
            clamp: u64::from(self.clamp),
            iline_bits: self.i1.line_bits(),
        }
    }

    /// Pass 1 over a bucket `scatter` filled for this part: I1 and D1
    /// lookups of this part's lines; queues the LL's work in `queue` and
    /// sets `l1` bits of split references whose part here missed.
    pub(super) fn l1_pass(&mut self, bucket: &Bucket, l1: &Bitmap, queue: &mut Vec<Pending>) {
        // the loop of `CachegrindSim::run`, but for references that
        // straddle partitions
        let mut t = self.totals;
        // the fetches the scatter counted instead of placing: I1 hits
        t.ir += bucket.folded;
        let (me, shift, mask, clamp) = (self.me, self.shift, self.mask, self.clamp);
        let (i1, d1) = (&mut self.i1, &mut self.d1);
        let mut splits = bucket.splits.iter().copied();
        let split = Split { me, shift, mask };
        for rec in &bucket.records {
            let code = rec.kind_code();
            if code == Kind::Ifetch as u64 {
                let (addr, size) = (rec.addr_unchecked(), rec.size_unchecked() as u32);
                if (addr ^ addr.wrapping_add(u64::from(size) - 1)) >> shift != 0 {
                    let idx = splits.next().unwrap_or(0);
                    split.l1(i1, l1, queue, &mut t, (addr, size, INSTR, idx));
                    continue;
                }
                t.ir += 1;
                if i1.misses(addr, size) {
                    t.i1mr += 1;
                    queue.push(Pending::miss(addr, size, INSTR));
                }
            } else if code != Kind::Escape as u64 {
                let addr = rec.addr_unchecked();
                let size = (rec.size_unchecked() as u32).min(clamp);
                // a modify and a dependent load count as reads
                let kind = if code == Kind::Store as u64 {
                    WRITE
                } else {
                    READ
                };
                if (addr ^ addr.wrapping_add(u64::from(size) - 1)) >> shift != 0 {
                    let idx = splits.next().unwrap_or(0);
                    split.l1(d1, l1, queue, &mut t, (addr, size, kind, idx));
                    continue;
                }
                let miss = d1.misses(addr, size);
                if kind == WRITE {
                    t.dw += 1;
                    t.d1mw += u64::from(miss);
                } else {
                    t.dr += 1;
                    t.d1mr += u64::from(miss);
                }
                if miss {
                    queue.push(Pending::miss(addr, size, kind));
                }
            } else if rec.as_event() == Some(Event::Flush) {
                i1.flush();
                d1.flush();
                queue.push(Pending {
                    addr: 0,
                    idx: 0,
                    size: 0,
                    tag: FLUSH,
                });
            }
        }
        self.totals = t;
    }

    /// Pass 2: the LL lookups queued by pass 1, in order; sets `ll` bits
    /// of split references whose part here missed the LL and lists the
    /// split references this part owns and must count in pass 3.
    pub(super) fn ll_pass(
        &mut self,
        queue: &[Pending],
        l1: &Bitmap,
        ll: &Bitmap,
        owned: &mut Vec<Owned>,
    ) {
        let (me, shift, mask) = (self.me, self.shift, self.mask);
        let t = &mut self.totals;
        for p in queue {
            let kind = p.tag & KIND;
            if p.tag & FLUSH != 0 {
                self.ll.flush();
            } else if p.tag & SPLIT == 0 {
                if self.ll.misses(p.addr, u32::from(p.size)) {
                    count(t, kind, Level::Ll);
                }
            } else if l1.get(p.idx) {
                if p.tag & OWNER != 0 {
                    count(t, kind, Level::L1);
                    owned.push(Owned { idx: p.idx, kind });
                }
                let size = u32::from(p.size);
                if split_misses(&mut self.ll, p.addr, size, shift, mask, me) == Some(true) {
                    ll.set(p.idx);
                }
            }
        }
    }

    /// Pass 3: the LL misses of the split references this part owns.
    pub(super) fn split_pass(&mut self, owned: &[Owned], ll: &Bitmap) {
        for o in owned {
            if ll.get(o.idx) {
                count(&mut self.totals, o.kind, Level::Ll);
            }
        }
    }
}

/// Which count of a reference to add one to.
enum Level {
    Ref,
    L1,
    Ll,
}

fn count(t: &mut CachegrindSummary, kind: u8, level: Level) {
    let c = match (kind, level) {
        (INSTR, Level::Ref) => &mut t.ir,
        (INSTR, Level::L1) => &mut t.i1mr,
        (INSTR, Level::Ll) => &mut t.ilmr,
        (WRITE, Level::Ref) => &mut t.dw,
        (WRITE, Level::L1) => &mut t.d1mw,
        (WRITE, Level::Ll) => &mut t.dlmw,
        (_, Level::Ref) => &mut t.dr,
        (_, Level::L1) => &mut t.d1mr,
        (_, Level::Ll) => &mut t.dlmr,
    };
    *c += 1;
}

/// Looks up the lines of the reference `addr .. addr + size` that lie in
/// partition `me`, block by block of `2^shift` bytes in address order;
/// `None` when it has none there, else whether any of them missed.
#[inline(never)]
fn split_misses(
    cache: &mut MtfCache,
    addr: u64,
    size: u32,
    shift: u32,
    mask: u64,
    me: u64,
) -> Option<bool> {
    let last = addr.wrapping_add(u64::from(size) - 1);
    let (first_block, last_block) = (addr >> shift, last >> shift);
    let block_mask = u64::MAX >> shift;
    if mask != 0 && last_block == first_block.wrapping_add(1) & block_mask {
        // the common straddle, over one boundary: two blocks of different
        // partitions (there are two or more), at most one of them this one
        let boundary = last_block << shift;
        return if first_block & mask == me {
            Some(cache.misses(addr, boundary.wrapping_sub(addr) as u32))
        } else if last_block & mask == me {
            Some(cache.misses(boundary, (last.wrapping_sub(boundary) + 1) as u32))
        } else {
            None
        };
    }
    let mut b = first_block;
    let mut found = None;
    loop {
        if b & mask == me {
            let start = if b == first_block { addr } else { b << shift };
            let end = if b == last_block {
                last
            } else {
                (b << shift) | ((1 << shift) - 1)
            };
            let miss = cache.misses(start, (end.wrapping_sub(start) + 1) as u32);
            found = Some(found.unwrap_or(false) | miss);
        }
        if b == last_block {
            return found;
        }
        b = b.wrapping_add(1) & block_mask;
    }
}
