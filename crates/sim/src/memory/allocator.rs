//! The frame allocator interface that every physical page allocator
//! implements: the buddy allocator today, color-aware ones (issue 4)
//! later.
//!
//! An allocator hands out blocks of `2^order` contiguous, size-aligned
//! 4 KiB frames and takes them back. [`AllocHint`] tells it who asks and
//! for which virtual page, and may name a wanted color; an allocator free
//! to ignore the hint (the buddy allocator does) still returns a valid
//! block, so coloring is always best effort at this interface and its
//! success is checked by the caller through [`crate::memory::ColorLayout`].

use serde::{Deserialize, Serialize};

use super::error::MemoryError;
use super::page::Frame;

/// What the caller knows about an allocation, for allocators that place
/// frames by policy (colors, per-app pools).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AllocHint {
    /// The application (address space) the frame is for.
    pub app: u32,
    /// The virtual address of the page being mapped.
    pub vaddr: u64,
    /// A wanted color, if the caller has one.
    pub color: Option<u32>,
}

impl AllocHint {
    /// A hint for page `vaddr` of `app`, no color.
    pub fn for_page(app: u32, vaddr: u64) -> AllocHint {
        AllocHint {
            app,
            vaddr,
            color: None,
        }
    }
}

/// A physical frame allocator.
pub trait FrameAllocator {
    /// A free block of `2^order` frames, aligned to its size; its first
    /// frame is returned. [`MemoryError::OutOfMemory`] when no block fits.
    fn alloc(&mut self, order: u8, hint: AllocHint) -> Result<Frame, MemoryError>;
    /// Returns the block of `2^order` frames starting at `frame`. Freeing
    /// the frames of one allocated block in smaller pieces is allowed
    /// (a split superpage).
    fn free(&mut self, frame: Frame, order: u8);
    /// Frames currently free.
    fn free_frames(&self) -> u64;
    /// Frames managed in all.
    fn total_frames(&self) -> u64;
}

/// The allocators, by name (kebab-case, as in scenario files).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AllocatorKind {
    /// Linux's binary buddy allocator ([`crate::memory::BuddyAllocator`]).
    #[default]
    Buddy,
}
