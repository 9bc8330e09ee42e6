//! The buddy allocator's per-frame bookkeeping (free-list links and the
//! order of the free block starting at a frame), allocated lazily.
//!
//! Frames are grouped in chunks of one largest buddy block (1024 frames,
//! 4 MiB); a chunk's arrays exist only once one of its frames is written.
//! Until then every frame of it reads as "no link, not a free block
//! head". So a simulated memory costs a pointer per 4 MiB until it is
//! used, and about 9 bytes per frame of the 4 MiB blocks it has touched:
//! a platform with 1 TiB of memory runs a small program in a few MB.

use super::buddy::MAX_ORDER;

/// Frames per chunk: one block of the largest order.
pub(crate) const CHUNK_FRAMES: u64 = 1 << MAX_ORDER;
const N: usize = CHUNK_FRAMES as usize;
/// No link (end of a list).
pub(crate) const NIL: u32 = u32::MAX;
/// Not the first frame of a free block.
pub(crate) const NOT_FREE: u8 = u8::MAX;

#[derive(Clone, Debug)]
struct Chunk {
    next: [u32; N],
    prev: [u32; N],
    order: [u8; N],
}

impl Chunk {
    fn empty() -> Box<Chunk> {
        Box::new(Chunk {
            next: [NIL; N],
            prev: [NIL; N],
            order: [NOT_FREE; N],
        })
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
    fn chunk(&self, pfn: u32) -> Option<(&Chunk, usize)> {
        let (c, i) = Self::split(pfn);
        self.chunks.get(c)?.as_deref().map(|ch| (ch, i))
    }

    #[inline]
    fn chunk_mut(&mut self, pfn: u32) -> (&mut Chunk, usize) {
        let (c, i) = Self::split(pfn);
        (self.chunks[c].get_or_insert_with(Chunk::empty), i)
    }

    /// The next block on `pfn`'s free list.
    #[inline]
    pub(crate) fn next(&self, pfn: u32) -> u32 {
        self.chunk(pfn).map_or(NIL, |(ch, i)| ch.next[i])
    }

    /// The previous block on `pfn`'s free list.
    #[inline]
    pub(crate) fn prev(&self, pfn: u32) -> u32 {
        self.chunk(pfn).map_or(NIL, |(ch, i)| ch.prev[i])
    }

    /// The order of the free block starting at `pfn`, or [`NOT_FREE`].
    #[inline]
    pub(crate) fn order(&self, pfn: u32) -> u8 {
        self.chunk(pfn).map_or(NOT_FREE, |(ch, i)| ch.order[i])
    }

    #[inline]
    pub(crate) fn set_next(&mut self, pfn: u32, v: u32) {
        let (ch, i) = self.chunk_mut(pfn);
        ch.next[i] = v;
    }

    #[inline]
    pub(crate) fn set_prev(&mut self, pfn: u32, v: u32) {
        let (ch, i) = self.chunk_mut(pfn);
        ch.prev[i] = v;
    }

    #[inline]
    pub(crate) fn set_order(&mut self, pfn: u32, v: u8) {
        let (ch, i) = self.chunk_mut(pfn);
        ch.order[i] = v;
    }

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
