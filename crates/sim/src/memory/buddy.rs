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
//! its order. Memory need not be a multiple of 4 MiB: the tail is carved
//! into the largest aligned blocks that fit. A fresh allocator hands out
//! frames in ascending order; [`crate::memory::age`] churns it into the
//! scattered state of a machine that has been up for a while.
//!
//! Not modelled: zones, migrate types, per-CPU page lists, the
//! tail-insertion heuristic for likely merges. An exhausted allocator
//! returns [`MemoryError::OutOfMemory`]; the address space then pages out.

use super::allocator::{AllocHint, FrameAllocator};
use super::error::MemoryError;
use super::page::{Frame, FRAME_BYTES};

/// Largest order (Linux's `MAX_ORDER - 1` = 10: 4 MiB blocks).
pub const MAX_ORDER: u8 = 10;
const ORDERS: usize = MAX_ORDER as usize + 1;
const NIL: u32 = u32::MAX;
const NOT_FREE: u8 = u8::MAX;

/// The buddy allocator over a finite physical memory.
#[derive(Clone, Debug)]
pub struct BuddyAllocator {
    frames: u64,
    free: u64,
    head: [u32; ORDERS],
    len: [u64; ORDERS],
    next: Vec<u32>,
    prev: Vec<u32>,
    /// The order of the free block starting at each frame, or `NOT_FREE`.
    order: Vec<u8>,
}

impl BuddyAllocator {
    /// All of `bytes` of physical memory free (a whole number of 4 KiB
    /// frames, at least one, fewer than 2^32).
    pub fn new(bytes: u64) -> Result<BuddyAllocator, MemoryError> {
        let bad = |reason| MemoryError::MemorySize { bytes, reason };
        if bytes == 0 || !bytes.is_multiple_of(FRAME_BYTES) {
            return Err(bad("not a positive multiple of 4 KiB"));
        }
        let frames = bytes / FRAME_BYTES;
        if frames >= u64::from(NIL) {
            return Err(bad("more than 2^32 - 1 frames (16 TiB)"));
        }
        let n = frames as usize;
        let mut b = BuddyAllocator {
            frames,
            free: 0,
            head: [NIL; ORDERS],
            len: [0; ORDERS],
            next: vec![NIL; n],
            prev: vec![NIL; n],
            order: vec![NOT_FREE; n],
        };
        // Carve [0, frames) into the largest aligned blocks, then push them
        // highest first so that each list's head is its lowest block.
        let mut blocks = Vec::new();
        let mut pfn = 0u64;
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

    fn push(&mut self, pfn: u32, k: u8) {
        let h = self.head[usize::from(k)];
        self.next[pfn as usize] = h;
        self.prev[pfn as usize] = NIL;
        if h != NIL {
            self.prev[h as usize] = pfn;
        }
        self.head[usize::from(k)] = pfn;
        self.order[pfn as usize] = k;
        self.len[usize::from(k)] += 1;
        self.free += 1 << k;
    }

    fn remove(&mut self, pfn: u32) {
        let k = self.order[pfn as usize];
        let (p, n) = (self.prev[pfn as usize], self.next[pfn as usize]);
        if p == NIL {
            self.head[usize::from(k)] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        }
        self.order[pfn as usize] = NOT_FREE;
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
            p = self.next[p as usize];
        }
        out
    }

    /// Number of free blocks of order `k`.
    pub fn free_blocks(&self, k: u8) -> u64 {
        self.len.get(usize::from(k)).copied().unwrap_or(0)
    }

    /// Whether `frame` starts a free block, and of which order.
    pub fn free_order_at(&self, frame: Frame) -> Option<u8> {
        match self.order.get(frame.0 as usize) {
            Some(&k) if k != NOT_FREE => Some(k),
            _ => None,
        }
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
        let Some(mut k) = (order..=MAX_ORDER).find(|&k| self.head[usize::from(k)] != NIL) else {
            return Err(MemoryError::OutOfMemory {
                order,
                free_frames: self.free,
            });
        };
        let pfn = self.head[usize::from(k)];
        self.remove(pfn);
        while k > order {
            k -= 1;
            self.push(pfn + (1 << k), k);
        }
        Ok(Frame(u64::from(pfn)))
    }

    fn free(&mut self, frame: Frame, order: u8) {
        debug_assert!(frame.0 < self.frames && frame.0.is_multiple_of(1 << order));
        debug_assert!(self.order[frame.0 as usize] == NOT_FREE, "double free");
        let mut pfn = frame.0 as u32;
        let mut k = order;
        while k < MAX_ORDER {
            let buddy = pfn ^ (1 << k);
            if u64::from(buddy) >= self.frames || self.order[buddy as usize] != k {
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
