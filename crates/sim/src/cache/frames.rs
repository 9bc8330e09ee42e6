//! Which 4 KiB frames may have lines in the cache, so that dropping a
//! frame's lines ([`Cache::discard_range`], a frame handed to a new owner)
//! looks up only frames the cache may hold.
//!
//! After [`Cache::set_frame_tracking`], each fill sets its frame's bit in
//! a bitmap covering the physical addresses below a bound; a discard that
//! covers a whole frame clears the bit after dropping its lines, and a
//! flush clears them all. A clear bit means no line of the frame is
//! present, so the frame's lookups (all of which would miss, changing
//! nothing) are skipped. Frames at or above the bound are always looked
//! up. Off by default (the bitmap is empty and a fill pays one compare).

use super::{Cache, INVALID};
use crate::replacement::Replacement;

/// Bytes of a frame (the tracking granularity).
const FRAME_BITS: u32 = 12;

/// The most physical memory a bitmap covers (64 GiB: 2 MiB of bits).
const MAX_TRACKED_BYTES: u64 = 64 << 30;

impl<R: Replacement> Cache<R> {
    /// Tracks which frames below `bytes` (at most 64 GiB) may have lines
    /// present, the lines already present included; `0` turns it off. A
    /// cache whose lines are larger than a frame is never tracked.
    pub fn set_frame_tracking(&mut self, bytes: u64) {
        let line_bits = self.geom.line_bits();
        if line_bits > FRAME_BITS || bytes == 0 {
            self.frame_bits = Vec::new();
            return;
        }
        self.frame_shift = FRAME_BITS - line_bits;
        let frames = bytes.min(MAX_TRACKED_BYTES).div_ceil(1 << FRAME_BITS);
        self.frame_bits = vec![0; frames.div_ceil(64) as usize];
        for i in 0..self.tags.len() {
            let t = self.tags[i];
            if t != INVALID {
                self.note_frame(t);
            }
        }
    }

    /// Notes that a line of `block`'s frame is present (a fill).
    #[inline(always)]
    pub(super) fn note_frame(&mut self, block: u64) {
        let f = block >> self.frame_shift;
        if let Some(w) = self.frame_bits.get_mut((f / 64) as usize) {
            *w |= 1 << (f % 64);
        }
    }

    /// Drops every line of byte range `[addr, addr + bytes)` (`bytes > 0`);
    /// returns the lines dropped and how many of them were dirty. Frames
    /// known to have no line present are skipped.
    pub fn discard_range(&mut self, addr: u64, bytes: u64) -> (u64, u64) {
        let (first, last) = (
            self.geom.block_of(addr),
            self.geom.block_of(addr + bytes - 1),
        );
        let (mut dropped, mut dirty) = (0, 0);
        let shift = self.frame_shift;
        let mut b = first;
        loop {
            // The blocks of `b`'s frame within the range.
            let f = b >> shift;
            let frame_last = b | ((1u64 << shift) - 1);
            let end = frame_last.min(last);
            let word = (f / 64) as usize;
            let bit = 1u64 << (f % 64);
            let tracked = word < self.frame_bits.len();
            if !tracked || self.frame_bits[word] & bit != 0 {
                for block in b..=end {
                    if let Some(d) = self.invalidate(block) {
                        dropped += 1;
                        dirty += u64::from(d);
                    }
                }
                if tracked && b == f << shift && end == frame_last {
                    self.frame_bits[word] &= !bit;
                }
            }
            if end == last {
                return (dropped, dirty);
            }
            b = end + 1;
        }
    }

    /// Forgets every frame (the cache was emptied).
    pub(super) fn clear_frames(&mut self) {
        self.frame_bits.fill(0);
    }
}
