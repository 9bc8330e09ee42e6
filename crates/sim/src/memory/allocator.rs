//! The frame allocator interface that every physical page allocator
//! implements: the buddy allocator and the color-aware `tam` and
//! `coloris`.
//!
//! An allocator hands out blocks of `2^order` contiguous, size-aligned
//! 4 KiB frames and takes them back. [`AllocHint`] tells it who asks and
//! for which virtual page, and may name a wanted color; an allocator free
//! to ignore the hint (the buddy allocator does) still returns a valid
//! block, so coloring is always best effort at this interface and its
//! success is checked by the caller through [`crate::memory::ColorLayout`].
//!
//! Color-aware allocators ([`crate::memory::TamAllocator`],
//! [`crate::memory::ColorisAllocator`]) also take per-app color sets at
//! run time ([`FrameAllocator::set_app_colors`]); the buddy allocator
//! refuses them with [`MemoryError::NotColorAware`].

use cachepart_units::{IdSet, Kind};
use serde::{Deserialize, Serialize};

use super::color::ColorLayout;
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
    /// A wanted color, if the caller has one (recoloring to a target).
    pub color: Option<u32>,
    /// The page is shared between applications (COLORIS gives such pages
    /// random colors or a reserved set).
    pub shared: bool,
}

impl AllocHint {
    /// A hint for page `vaddr` of `app`, no color, private.
    pub fn for_page(app: u32, vaddr: u64) -> AllocHint {
        AllocHint {
            app,
            vaddr,
            color: None,
            shared: false,
        }
    }
}

/// Per-app counters of a color-aware allocator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct AppAllocStats {
    /// Order-0 frames handed to the app.
    pub frames: u64,
    /// Frames handed out of the app's colors because its colors had none
    /// left (Tam et al.'s MaxTry fallback); each breaks isolation.
    pub fallbacks: u64,
    /// Frames pulled from the buddy allocator into the per-color lists
    /// while serving the app.
    pub refills: u64,
    /// Requests that found no frame of the app's colors and no fallback
    /// ([`MemoryError::ColorsExhausted`]: a page-out follows).
    pub exhausted: u64,
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

    /// The allocator's kind.
    fn kind(&self) -> AllocatorKind {
        AllocatorKind::Buddy
    }

    /// Gives `app` the colors `colors` from now on (frames already mapped
    /// stay where they are: recoloring moves them, see
    /// [`crate::memory::recolor`]). An empty set removes the app's set:
    /// it gets any color. Colors out of range are
    /// [`MemoryError::ColorOutOfRange`]; an allocator that does not color
    /// returns [`MemoryError::NotColorAware`].
    fn set_app_colors(&mut self, app: u32, colors: &IdSet) -> Result<(), MemoryError> {
        let _ = colors;
        Err(MemoryError::NotColorAware {
            allocator: self.kind().name(),
            app,
        })
    }

    /// The colors of `app`, if it has a set.
    fn app_colors(&self, app: u32) -> Option<&IdSet> {
        let _ = app;
        None
    }

    /// The color layout the allocator colors by, if it colors.
    fn color_layout(&self) -> Option<&ColorLayout> {
        None
    }

    /// The counters of `app` (zero for allocators that do not color).
    fn app_stats(&self, app: u32) -> AppAllocStats {
        let _ = app;
        AppAllocStats::default()
    }

    /// Whether `frame` is of one of `app`'s colors (true when the app has
    /// no set or the allocator does not color).
    fn frame_fits(&self, app: u32, frame: Frame) -> bool {
        match (self.color_layout(), self.app_colors(app)) {
            (Some(l), Some(set)) => set.contains(l.color_of_frame(frame)),
            _ => true,
        }
    }
}

/// The allocators, by name (kebab-case, as in scenario files).
#[cachepart_units::kind]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[strum(
    parse_err_ty = MemoryError,
    parse_err_fn = unknown_allocator
)]
pub enum AllocatorKind {
    /// Linux's binary buddy allocator ([`crate::memory::BuddyAllocator`]).
    #[default]
    Buddy,
    /// Tam et al.'s per-color free lists with a MaxTry fallback
    /// ([`crate::memory::TamAllocator`]).
    Tam,
    /// COLORIS's color-aware allocator over a memory pool
    /// ([`crate::memory::ColorisAllocator`]).
    Coloris,
}

/// The error of an unknown allocator name.
fn unknown_allocator(s: &str) -> MemoryError {
    MemoryError::Config {
        field: "allocator",
        reason: format!(
            "unknown allocator {s:?}: expected {}",
            AllocatorKind::expected()
        ),
    }
}
