//! The buddy allocator's per-frame bookkeeping (free-list links and the
//! order of the free block starting at a frame), allocated lazily.
//!
//! Frames are grouped in chunks of one largest buddy block (1024 frames,
//! 4 MiB); a chunk's arrays exist only once one of its frames is written.
//! Until then every frame of it reads as "no link, not a free block
//! head". So a simulated memory costs a pointer per 4 MiB until it is
//! used, and 12 bytes per frame of the 4 MiB blocks it has touched:
//! a platform with 1 TiB of memory runs a small program in a few MB.

use super::buddy::MAX_ORDER;

/// Frames per chunk: one block of the largest order.
pub(crate) const CHUNK_FRAMES: u64 = 1 << MAX_ORDER;
const N: usize = CHUNK_FRAMES as usize;
/// No link (end of a list).
pub(crate) const NIL: u32 = u32::MAX;
/// Not the first frame of a free block.
pub(crate) const NOT_FREE: u8 = u8::MAX;

/// One frame's links and order, side by side (one cache line serves a
/// list operation on the frame).
#[derive(Clone, Copy, Debug)]
struct Entry {
    next: u32,
    prev: u32,
    order: u8,
}

const EMPTY: Entry = Entry {
    next: NIL,
    prev: NIL,
    order: NOT_FREE,
};

#[derive(Clone, Debug)]
struct Chunk([Entry; N]);

impl Chunk {
    fn empty() -> Box<Chunk> {
        Box::new(Chunk([EMPTY; N]))
    }
}

/// `next`, `prev` and `order` of every frame, materialised per chunk on
/// first write.
#[derive(Clone, Debug)]
pub(crate) struct FrameTable {
    chunks: Vec<Option<Box<Chunk>>>,
}

impl FrameTable {
    /// A table for `frames` frames, nothing materialised.
    pub(crate) fn new(frames: u64) -> FrameTable {
        FrameTable {
            chunks: vec![None; frames.div_ceil(CHUNK_FRAMES) as usize],
        }
    }

    #[inline]
    fn split(pfn: u32) -> (usize, usize) {
        (
            (pfn >> MAX_ORDER) as usize,
            (pfn & (CHUNK_FRAMES as u32 - 1)) as usize,
        )
    }

    #[inline]
    fn get(&self, pfn: u32) -> &Entry {
        let (c, i) = Self::split(pfn);
        match self.chunks.get(c) {
            Some(Some(ch)) => &ch.0[i],
            _ => &EMPTY,
        }
    }

    #[inline]
    fn get_mut(&mut self, pfn: u32) -> &mut Entry {
        let (c, i) = Self::split(pfn);
        &mut self.chunks[c].get_or_insert_with(Chunk::empty).0[i]
    }

    /// The next block on `pfn`'s free list.
    #[inline]
    pub(crate) fn next(&self, pfn: u32) -> u32 {
        self.get(pfn).next
    }

    /// The previous block on `pfn`'s free list.
    #[inline]
    pub(crate) fn prev(&self, pfn: u32) -> u32 {
        self.get(pfn).prev
    }

    /// The order of the free block starting at `pfn`, or [`NOT_FREE`].
    #[inline]
    pub(crate) fn order(&self, pfn: u32) -> u8 {
        self.get(pfn).order
    }

    #[inline]
    pub(crate) fn set_next(&mut self, pfn: u32, v: u32) {
        self.get_mut(pfn).next = v;
    }

    #[inline]
    pub(crate) fn set_prev(&mut self, pfn: u32, v: u32) {
        self.get_mut(pfn).prev = v;
    }

    #[inline]
    pub(crate) fn set_order(&mut self, pfn: u32, v: u8) {
        self.get_mut(pfn).order = v;
    }

    /// Sets all three of `pfn`'s fields.
    #[inline]
    pub(crate) fn set(&mut self, pfn: u32, next: u32, prev: u32, order: u8) {
        *self.get_mut(pfn) = Entry { next, prev, order };
    }

    /// Bytes per materialised frame.
    pub(crate) const ENTRY_BYTES: u64 = std::mem::size_of::<Entry>() as u64;

    /// Bytes of the chunk index per chunk (materialised or not).
    pub(crate) const INDEX_BYTES_PER_CHUNK: u64 = std::mem::size_of::<Option<Box<Chunk>>>() as u64;

    /// Chunks materialised so far.
    pub(crate) fn chunks_in_use(&self) -> usize {
        self.chunks.iter().filter(|c| c.is_some()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_defaults_and_materialises_on_write() {
        let mut t = FrameTable::new(1 << 28); // 1 TiB of frames
        assert_eq!(t.chunks_in_use(), 0);
        assert_eq!((t.next(5), t.prev(5), t.order(5)), (NIL, NIL, NOT_FREE));
        t.set_order(3000, 2);
        t.set_next(3000, 7);
        t.set_prev(3001, 9);
        assert_eq!(t.chunks_in_use(), 1);
        assert_eq!((t.next(3000), t.order(3000), t.prev(3001)), (7, 2, 9));
        assert_eq!(t.order(3001), NOT_FREE);
        assert_eq!(t.next(2047), NIL);
    }
}
