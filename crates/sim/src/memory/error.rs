//! The memory model's error type: what can go wrong when mapping pages,
//! allocating frames or configuring physical memory.

use thiserror::Error;

/// Every error of the memory model.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum MemoryError {
    /// No free block of the requested order (or a larger one) is left.
    /// [`crate::memory::AddressSpace::touch`] pages out one of the app's
    /// pages and retries when this comes back for a 4 KiB page.
    #[error("out of physical memory: no free block of order {order} ({free_frames} free 4 KiB frames left, fragmented)")]
    OutOfMemory {
        /// The order asked for (2^order frames of 4 KiB).
        order: u8,
        /// Frames still free, in blocks too small to serve the request.
        free_frames: u64,
    },
    /// The physical memory size is not usable.
    #[error("physical memory of {bytes} B: {reason}")]
    MemorySize {
        /// The size asked for.
        bytes: u64,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An order above the allocator's largest.
    #[error("order {order} is above the largest order {max}")]
    Order {
        /// The order asked for.
        order: u8,
        /// The largest order.
        max: u8,
    },
    /// A TLB array whose entries and ways do not make power-of-two sets.
    #[error(
        "TLB {name}: {entries} entries in {ways} ways do not make a power-of-two number of sets"
    )]
    TlbGeometry {
        /// The array (`l1d-4k`, `stlb`, ...).
        name: &'static str,
        /// Entries.
        entries: u32,
        /// Ways.
        ways: u32,
    },
    /// The page size does not divide the LLC's bytes per way, or is not a
    /// power of two, so colors are undefined.
    #[error("page size {page} B: colors need a power-of-two page size")]
    PageSize {
        /// The page size.
        page: u64,
    },
    /// The memory's bookkeeping would not fit in the host's memory.
    #[error(transparent)]
    TooLarge(#[from] cachepart_units::TooLarge),
    /// A page size the model does not map (not 4 KiB or 2 MiB).
    #[error("page size {page} B: the simulated pages are 4096 B (4 KiB) or 2097152 B (2 MiB)")]
    UnsupportedPage {
        /// The page size asked for.
        page: u64,
    },
    /// An aging window smaller than one frame.
    #[error("aging: window-bytes = {bytes} is less than one 4096 B frame")]
    AgingWindow {
        /// The window asked for.
        bytes: u64,
    },
    /// An aging fraction outside `0..=1`.
    #[error("aging: {field} = {value} is outside 0..=1")]
    Aging {
        /// The field.
        field: &'static str,
        /// Its value.
        value: f64,
    },
    /// A cache geometry whose sets or line size is not a power of two,
    /// so colors are undefined.
    #[error("colors: {sets} sets of {line} B lines: both must be powers of two")]
    ColorGeometry {
        /// Sets (per slice).
        sets: u64,
        /// Line size.
        line: u32,
    },
    /// A color set names a color the LLC does not have.
    #[error("color {color} is out of range: the LLC has {colors} colors (0-{last})", last = colors.saturating_sub(1))]
    ColorOutOfRange {
        /// The first color out of range.
        color: u32,
        /// Colors of the LLC.
        colors: u64,
    },
    /// A color set that does not parse.
    #[error("colors: {reason}")]
    ColorSyntax {
        /// The parser's message (text, item, what was expected).
        reason: String,
    },
    /// Per-app colors asked of an allocator that does not color.
    #[error("allocator {allocator} does not color pages: choose allocator tam or coloris to give app {app} colors")]
    NotColorAware {
        /// The allocator's name.
        allocator: &'static str,
        /// The app the colors were for.
        app: u32,
    },
    /// A colored app found no free frame of its colors (and no fallback
    /// was allowed): the caller pages one of the app's pages out.
    #[error("app {app}: no free frame of its colors {colors} ({free_frames} frames free in all)")]
    ColorsExhausted {
        /// The app.
        app: u32,
        /// Its colors, in the range syntax.
        colors: String,
        /// Frames still free, of other colors.
        free_frames: u64,
    },
    /// A memory configuration field with a bad value.
    #[error("memory config: {field}: {reason}")]
    Config {
        /// The field (kebab-case, as in scenario files).
        field: &'static str,
        /// What is wrong and what was expected.
        reason: String,
    },
    /// A page operation on a virtual page that is not a resident 4 KiB
    /// page.
    #[error("virtual page {vpn:#x} is not a resident 4 KiB page")]
    NotMapped {
        /// The virtual page number.
        vpn: u64,
    },
}
