//! The memory model's error type: what can go wrong when mapping pages,
//! allocating frames or configuring physical memory.

use thiserror::Error;

/// Every error of the memory model.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum MemoryError {
    /// No free block of the requested order (or a larger one) is left.
    /// Page-outs (issue 4) will hook in where this is returned.
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
    /// An aging fraction outside `0..=1`.
    #[error("aging: {field} = {value} is outside 0..=1")]
    Aging {
        /// The field.
        field: &'static str,
        /// Its value.
        value: f64,
    },
}
