//! Which 4 KiB physical frames may have lines in a cache hierarchy
//! ([`FrameMarks`]), so that dropping a frame's lines when the kernel
//! zeroes it can skip frames that cannot hold any.
//!
//! A line enters a cache only through a demand access, a page-table load
//! or a prefetch (write-backs and victim-cache moves carry lines already
//! in a cache). The owner of the hierarchy marks a frame when it hands
//! the frame to an application (before its first access: from then on
//! demand accesses may bring its lines in) and when a prefetch fetches a
//! line outside the frame of the access that triggered it (a next-line
//! or stride prefetch across a page boundary). Page tables lie in a
//! region of their own, above memory. So an unmarked frame has no line
//! in any level, and dropping its lines would drop nothing.

use std::collections::HashMap;

/// Frames per chunk of marks (4 MiB of memory, 16 words of bits).
const CHUNK_BITS: u32 = 10;
const WORDS: usize = 1 << (CHUNK_BITS - 6);

/// Bits of a 4 KiB frame's address.
const FRAME_BITS: u32 = 12;

/// The frames marked, in chunks of 1024 frames created on first mark, and
/// the lines dropped by zeroing (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct FrameMarks {
    chunks: HashMap<u64, [u64; WORDS]>,
    /// Every frame counts as marked (nothing is skipped).
    all: bool,
    /// Lines dropped from the hierarchy by zeroing frames.
    dropped: u64,
}

impl FrameMarks {
    /// Marks frame `frame` (a physical address / 4 KiB); returns whether it
    /// was marked before.
    pub fn mark(&mut self, frame: u64) -> bool {
        let chunk = self.chunks.entry(frame >> CHUNK_BITS).or_default();
        let i = (frame as usize) & ((1 << CHUNK_BITS) - 1);
        let bit = 1u64 << (i % 64);
        let was = chunk[i / 64] & bit != 0;
        chunk[i / 64] |= bit;
        was || self.all
    }

    /// Whether frame `frame` is marked.
    pub fn is_marked(&self, frame: u64) -> bool {
        if self.all {
            return true;
        }
        let i = (frame as usize) & ((1 << CHUNK_BITS) - 1);
        self.chunks
            .get(&(frame >> CHUNK_BITS))
            .is_some_and(|c| c[i / 64] & (1 << (i % 64)) != 0)
    }

    /// Marks every frame that line `block` of `1 << line_bits` bytes
    /// overlaps.
    pub fn mark_line(&mut self, block: u64, line_bits: u32) {
        let (first, last) = line_frames(block, line_bits);
        for f in first..=last {
            self.mark(f);
        }
    }

    /// Makes every frame count as marked from now on (no frame is
    /// skipped: the reference the skipping is checked against).
    pub fn mark_all(&mut self) {
        self.all = true;
    }

    /// Counts `n` lines dropped by zeroing.
    pub fn count_dropped(&mut self, n: u64) {
        self.dropped += n;
    }

    /// Lines dropped from the hierarchy by zeroing so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

/// The first and last frame that line `block` of `1 << line_bits` bytes
/// overlaps (one frame unless lines are larger than frames).
pub fn line_frames(block: u64, line_bits: u32) -> (u64, u64) {
    let addr = block.wrapping_shl(line_bits);
    let end = addr.saturating_add((1u64 << line_bits) - 1);
    (addr >> FRAME_BITS, end >> FRAME_BITS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_is_marked_once_and_stays_marked() {
        let mut m = FrameMarks::default();
        assert!(!m.is_marked(5));
        assert!(!m.mark(5));
        assert!(m.mark(5));
        assert!(m.is_marked(5));
        // Neighbours, in the same chunk and in others, stay unmarked.
        for f in [4, 6, 1023, 1024, 5 + 1024, u64::MAX >> 12] {
            assert!(!m.is_marked(f), "{f}");
        }
        assert!(!m.mark(u64::MAX >> 12));
        assert!(m.is_marked(u64::MAX >> 12));
    }

    #[test]
    fn lines_mark_the_frames_they_overlap() {
        let mut m = FrameMarks::default();
        // 64-byte lines: line 64 is the first of frame 1.
        m.mark_line(64, 6);
        assert!(m.is_marked(1) && !m.is_marked(0) && !m.is_marked(2));
        // 8 KiB lines span two frames.
        m.mark_line(3, 13);
        assert!(m.is_marked(6) && m.is_marked(7) && !m.is_marked(8));
        assert_eq!(
            line_frames(u64::MAX >> 6, 6),
            (u64::MAX >> 12, u64::MAX >> 12)
        );
    }

    #[test]
    fn mark_all_counts_every_frame_as_marked() {
        let mut m = FrameMarks::default();
        m.mark_all();
        assert!(m.is_marked(123));
        assert!(m.mark(9));
    }
}
