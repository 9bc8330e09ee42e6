//! A model of Linux's binary buddy allocator (`mm/page_alloc.c`), the
//! default [`FrameAllocator`].
//!
//! Free memory is kept as blocks of `2^k` frames (`k` = 0..=[`MAX_ORDER`],
//! 4 KiB to 4 MiB), each aligned to its size, on one free list per order.
//! As in Linux:
//!
//! * an allocation of order `k` takes the **head** of the lowest non-empty
//!   list of order `>= k` (`__rmqueue_smallest`) and splits it, putting the
//!   upper halves on the lower lists (`expand`), keeping the lowest part;
//! * a free merges the block with its buddy (`pfn ^ 2^k`) while the buddy
//!   is a free block of the same order, then puts the result at the head
//!   of its list (`__free_one_page`), so recently freed blocks are reused
//!   first (LIFO).
//!
//! Lists are intrusive doubly-linked lists through per-frame arrays, so
//! removing a buddy is O(1); only the first frame of a free block carries
//! its order. The arrays are allocated lazily, 4 MiB of frames at a time
//! (`memory/frame_table.rs`), and largest blocks never handed out are
//! kept as a range, so a large simulated memory costs only what the run
//! touches. Memory need not be a multiple of 4 MiB: the tail is carved
//! into the largest aligned blocks that fit. A fresh allocator hands out
//! frames in ascending order; [`crate::memory::age`] churns it into the
//! scattered state of a machine that has been up for a while.
//!
//! Not modelled: zones, migrate types, per-CPU page lists, the
//! tail-insertion heuristic for likely merges. An exhausted allocator
//! returns [`MemoryError::OutOfMemory`]; the address space then pages out.

use super::allocator::{AllocHint, FrameAllocator};
use super::error::MemoryError;
use super::frame_table::{FrameTable, CHUNK_FRAMES, NIL, NOT_FREE};
use super::page::{Frame, FRAME_BYTES};

/// Largest order (Linux's `MAX_ORDER - 1` = 10: 4 MiB blocks).
pub const MAX_ORDER: u8 = 10;
const ORDERS: usize = MAX_ORDER as usize + 1;
const MAX: usize = MAX_ORDER as usize;

/// The buddy allocator over a finite physical memory.
///
/// The per-frame arrays are a lazily materialised frame table (4 MiB chunks), and the
/// largest blocks that have never been handed out are not on the
/// order-[`MAX_ORDER`] list as nodes: they are the range
/// `untouched..untouched_end`, which stands for the list's tail in
/// ascending order (where a fresh allocator puts them). Blocks of that
/// order are only ever taken from the list's head (a merge removes a
/// buddy of a lower order), so the list is always the pushed nodes
/// followed by that range, exactly as with eagerly built lists.
#[derive(Clone, Debug)]
pub struct BuddyAllocator {
    frames: u64,
    free: u64,
    /// Heads of the lists of pushed nodes (order [`MAX_ORDER`]: before the
    /// untouched range).
    head: [u32; ORDERS],
    /// Blocks per order, the untouched range included.
    len: [u64; ORDERS],
    table: FrameTable,
    /// First frame of the untouched largest blocks.
    untouched: u32,
    /// End of the untouched largest blocks.
    untouched_end: u32,
}

impl BuddyAllocator {
    /// All of `bytes` of physical memory free (a whole number of 4 KiB
    /// frames, at least one, fewer than 2^32). Its bookkeeping is
    /// allocated as frames are used, 4 MiB of frames at a time.
    pub fn new(bytes: u64) -> Result<BuddyAllocator, MemoryError> {
        let bad = |reason| MemoryError::MemorySize { bytes, reason };
        if bytes == 0 || !bytes.is_multiple_of(FRAME_BYTES) {
            return Err(bad("not a positive multiple of 4 KiB"));
        }
        let frames = bytes / FRAME_BYTES;
        if frames >= u64::from(NIL) {
            return Err(bad("more than 2^32 - 1 frames (16 TiB)"));
        }
        // Whole largest blocks from frame 0 up, the untouched range.
        let full = frames / CHUNK_FRAMES * CHUNK_FRAMES;
        let mut b = BuddyAllocator {
            frames,
            free: full,
            head: [NIL; ORDERS],
            len: [0; ORDERS],
            table: FrameTable::new(frames),
            untouched: 0,
            untouched_end: full as u32,
        };
        b.len[MAX] = full / CHUNK_FRAMES;
        // Carve the tail into the largest aligned blocks, then push them
        // highest first so that each list's head is its lowest block.
        let mut blocks = Vec::new();
        let mut pfn = full;
        while pfn < frames {
            let mut k = MAX_ORDER;
            while !pfn.is_multiple_of(1 << k) || pfn + (1 << k) > frames {
                k -= 1;
            }
            blocks.push((pfn, k));
            pfn += 1 << k;
        }
        for &(pfn, k) in blocks.iter().rev() {
            b.push(pfn as u32, k);
        }
        Ok(b)
    }

    /// The first block of order `k`'s free list, or [`NIL`].
    fn list_head(&self, k: u8) -> u32 {
        let h = self.head[usize::from(k)];
        if h == NIL && k == MAX_ORDER && self.untouched < self.untouched_end {
            self.untouched
        } else {
            h
        }
    }

    /// The order of the free block starting at `pfn`, or [`NOT_FREE`].
    fn order_at(&self, pfn: u32) -> u8 {
        if (self.untouched..self.untouched_end).contains(&pfn) {
            if u64::from(pfn).is_multiple_of(CHUNK_FRAMES) {
                MAX_ORDER
            } else {
                NOT_FREE
            }
        } else {
            self.table.order(pfn)
        }
    }

    fn push(&mut self, pfn: u32, k: u8) {
        let h = self.head[usize::from(k)];
        self.table.set(pfn, h, NIL, k);
        if h != NIL {
            self.table.set_prev(h, pfn);
        }
        self.head[usize::from(k)] = pfn;
        self.len[usize::from(k)] += 1;
        self.free += 1 << k;
    }

    /// Takes the head of order `k`'s list (known not to be empty).
    fn pop(&mut self, k: u8) -> u32 {
        if self.head[usize::from(k)] == NIL {
            // The untouched range is the list (list_head said so).
            let pfn = self.untouched;
            self.untouched += CHUNK_FRAMES as u32;
            self.len[MAX] -= 1;
            self.free -= CHUNK_FRAMES;
            return pfn;
        }
        let pfn = self.head[usize::from(k)];
        self.remove(pfn);
        pfn
    }

    fn remove(&mut self, pfn: u32) {
        let k = self.table.order(pfn);
        let (p, n) = (self.table.prev(pfn), self.table.next(pfn));
        if p == NIL {
            self.head[usize::from(k)] = n;
        } else {
            self.table.set_next(p, n);
        }
        if n != NIL {
            self.table.set_prev(n, p);
        }
        self.table.set_order(pfn, NOT_FREE);
        self.len[usize::from(k)] -= 1;
        self.free -= 1 << k;
    }

    /// Free blocks of order `k`, in list order (the next one handed out
    /// first).
    pub fn free_list(&self, k: u8) -> Vec<Frame> {
        let mut out = Vec::new();
        let mut p = self.head.get(usize::from(k)).copied().unwrap_or(NIL);
        while p != NIL {
            out.push(Frame(u64::from(p)));
            p = self.table.next(p);
        }
        if k == MAX_ORDER {
            out.extend(
                (self.untouched..self.untouched_end)
                    .step_by(CHUNK_FRAMES as usize)
                    .map(|p| Frame(u64::from(p))),
            );
        }
        out
    }

    /// Number of free blocks of order `k`.
    pub fn free_blocks(&self, k: u8) -> u64 {
        self.len.get(usize::from(k)).copied().unwrap_or(0)
    }

    /// Whether `frame` starts a free block, and of which order.
    pub fn free_order_at(&self, frame: Frame) -> Option<u8> {
        if frame.0 >= self.frames {
            return None;
        }
        match self.order_at(frame.0 as u32) {
            NOT_FREE => None,
            k => Some(k),
        }
    }

    /// Bytes of per-frame bookkeeping allocated so far (chunks of
    /// 1024 frames that have been written).
    pub fn bookkeeping_bytes(&self) -> u64 {
        self.table.chunks_in_use() as u64 * CHUNK_FRAMES * FrameTable::ENTRY_BYTES
    }
}

impl FrameAllocator for BuddyAllocator {
    fn alloc(&mut self, order: u8, _hint: AllocHint) -> Result<Frame, MemoryError> {
        if order > MAX_ORDER {
            return Err(MemoryError::Order {
                order,
                max: MAX_ORDER,
            });
        }
        let Some(mut k) = (order..=MAX_ORDER).find(|&k| self.list_head(k) != NIL) else {
            return Err(MemoryError::OutOfMemory {
                order,
                free_frames: self.free,
            });
        };
        let pfn = self.pop(k);
        while k > order {
            k -= 1;
            self.push(pfn + (1 << k), k);
        }
        Ok(Frame(u64::from(pfn)))
    }

    fn free(&mut self, frame: Frame, order: u8) {
        debug_assert!(frame.0 < self.frames && frame.0.is_multiple_of(1 << order));
        debug_assert!(self.order_at(frame.0 as u32) == NOT_FREE, "double free");
        let mut pfn = frame.0 as u32;
        let mut k = order;
        while k < MAX_ORDER {
            let buddy = pfn ^ (1 << k);
            if u64::from(buddy) >= self.frames || self.order_at(buddy) != k {
                break;
            }
            self.remove(buddy);
            pfn &= !(1 << k);
            k += 1;
        }
        self.push(pfn, k);
    }

    fn free_frames(&self) -> u64 {
        self.free
    }

    fn total_frames(&self) -> u64 {
        self.frames
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn free_state(b: &BuddyAllocator) -> Vec<Vec<Frame>> {
        (0..=MAX_ORDER)
            .map(|k| {
                let mut l = b.free_list(k);
                l.sort();
                l
            })
            .collect()
    }

    #[test]
    fn carves_the_tail_into_aligned_blocks() {
        // 4 MiB + 2 MiB + 12 KiB: one order-10, one order-9, order 1 and 0.
        let b = BuddyAllocator::new((4 << 20) + (2 << 20) + 12288).unwrap();
        assert_eq!(b.free_list(10), vec![Frame(0)]);
        assert_eq!(b.free_list(9), vec![Frame(1024)]);
        assert_eq!(b.free_list(1), vec![Frame(1536)]);
        assert_eq!(b.free_list(0), vec![Frame(1538)]);
        assert_eq!(b.free_frames(), 1539);
        assert!(BuddyAllocator::new(1000).is_err());
        assert!(BuddyAllocator::new(0).is_err());
    }

    #[test]
    fn splits_lowest_fit_and_merges_back() {
        let mut b = BuddyAllocator::new(8 << 20).unwrap();
        let h = AllocHint::default();
        let a = b.alloc(0, h).unwrap();
        assert_eq!(a, Frame(0));
        // The split left one free block of each order 0..=9 in block 0.
        for k in 0..10 {
            assert_eq!(b.free_list(k), vec![Frame(1 << k)]);
        }
        // An order-0 request now comes from the order-0 list.
        assert_eq!(b.alloc(0, h).unwrap(), Frame(1));
        assert_eq!(b.alloc(9, h).unwrap(), Frame(512));
        b.free(Frame(512), 9);
        b.free(Frame(1), 0);
        b.free(Frame(0), 0);
        assert_eq!(b.free_list(10), vec![Frame(0), Frame(1024)]);
        assert_eq!(b.free_frames(), 2048);
        // Freed blocks go to the head: LIFO reuse.
        let x = b.alloc(0, h).unwrap();
        let y = b.alloc(0, h).unwrap();
        b.free(x, 0);
        assert_eq!(b.alloc(0, h).unwrap(), x);
        let _ = y;
    }

    #[test]
    fn a_terabyte_costs_only_what_is_touched() {
        let mut b = BuddyAllocator::new(1 << 40).unwrap();
        assert_eq!(b.bookkeeping_bytes(), 0);
        assert_eq!(b.free_blocks(MAX_ORDER), 1 << 18);
        let h = AllocHint::default();
        let frames: Vec<Frame> = (0..3000).map(|_| b.alloc(0, h).unwrap()).collect();
        assert_eq!(frames[2999], Frame(2999));
        // Three 4 MiB blocks split: three chunks of bookkeeping.
        assert_eq!(b.bookkeeping_bytes(), 3 * 1024 * 12);
        assert_eq!(b.free_order_at(Frame(4096)), Some(MAX_ORDER));
        assert_eq!(b.free_order_at(Frame(4097)), None);
        for f in frames.into_iter().rev() {
            b.free(f, 0);
        }
        assert_eq!(b.free_frames(), 1 << 28);
        assert_eq!(
            b.free_list(MAX_ORDER)[..4],
            [Frame(0), Frame(1024), Frame(2048), Frame(3072)]
        );
    }

    #[test]
    fn out_of_memory_is_typed() {
        let mut b = BuddyAllocator::new(16384).unwrap();
        for _ in 0..4 {
            b.alloc(0, AllocHint::default()).unwrap();
        }
        assert_eq!(
            b.alloc(0, AllocHint::default()),
            Err(MemoryError::OutOfMemory {
                order: 0,
                free_frames: 0
            })
        );
        assert!(matches!(
            b.alloc(11, AllocHint::default()),
            Err(MemoryError::Order { .. })
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Random allocations and frees: blocks never overlap, are aligned
        /// and in range, the free count adds up, and freeing everything
        /// restores the initial free lists exactly.
        #[test]
        fn never_overlaps_and_merges_back(
            mb in 1u64..24,
            extra in 0u64..1024,
            ops in prop::collection::vec((0u8..=10, any::<bool>(), any::<u32>()), 1..400),
        ) {
            let bytes = (mb << 20) + extra * FRAME_BYTES;
            let mut b = BuddyAllocator::new(bytes).unwrap();
            let initial = free_state(&b);
            let total = b.total_frames();
            let mut owner = vec![false; total as usize];
            let mut held: Vec<(Frame, u8)> = Vec::new();
            for (order, free, pick) in ops {
                if free && !held.is_empty() {
                    let (f, k) = held.swap_remove(pick as usize % held.len());
                    for p in f.0..f.0 + (1 << k) {
                        owner[p as usize] = false;
                    }
                    b.free(f, k);
                } else {
                    match b.alloc(order, AllocHint::default()) {
                        Ok(f) => {
                            prop_assert_eq!(f.0 % (1 << order), 0);
                            prop_assert!(f.0 + (1 << order) <= total);
                            for p in f.0..f.0 + (1 << order) {
                                prop_assert!(!owner[p as usize], "frame {} handed out twice", p);
                                owner[p as usize] = true;
                            }
                            held.push((f, order));
                        }
                        Err(MemoryError::OutOfMemory { .. }) => {
                            // Really nothing large enough is free.
                            for k in order..=MAX_ORDER {
                                prop_assert_eq!(b.free_blocks(k), 0);
                            }
                        }
                        Err(e) => prop_assert!(false, "{}", e),
                    }
                }
                let used: u64 = held.iter().map(|&(_, k)| 1u64 << k).sum();
                prop_assert_eq!(b.free_frames() + used, total);
            }
            for (f, k) in held {
                b.free(f, k);
            }
            prop_assert_eq!(free_state(&b), initial);
        }
    }
}
