//! Page sizes and physical frame numbers.
//!
//! Physical memory is counted in 4 KiB **frames**; a block of order `k`
//! is `2^k` contiguous frames aligned to its size (the buddy allocator's
//! unit). A 4 KiB page takes an order-0 block, a 2 MiB superpage an
//! order-9 block.

use serde::{Deserialize, Serialize};

use super::error::MemoryError;

/// log2 of the base page (frame) size.
pub const FRAME_BITS: u32 = 12;
/// Bytes per frame (4 KiB).
pub const FRAME_BYTES: u64 = 1 << FRAME_BITS;
/// log2 of the superpage size.
pub const HUGE_BITS: u32 = 21;
/// Order of a 2 MiB superpage (512 frames).
pub const HUGE_ORDER: u8 = (HUGE_BITS - FRAME_BITS) as u8;

/// A physical frame number: physical address / 4 KiB.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Frame(pub u64);

impl Frame {
    /// The physical address of the frame's first byte.
    #[inline]
    pub fn addr(self) -> u64 {
        self.0 << FRAME_BITS
    }

    /// The frame holding physical address `paddr`.
    #[inline]
    pub fn of_addr(paddr: u64) -> Frame {
        Frame(paddr >> FRAME_BITS)
    }
}

/// The two page sizes of x86-64 user memory that the model maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PageSize {
    /// 4 KiB.
    #[serde(rename = "4k")]
    Small,
    /// 2 MiB (a superpage, "huge page").
    #[serde(rename = "2m")]
    Huge,
}

impl PageSize {
    /// The page size of `bytes`: 4096 or 2097152; any other size is an
    /// error (the model maps no other page).
    pub fn from_bytes(bytes: u64) -> Result<PageSize, MemoryError> {
        [PageSize::Small, PageSize::Huge]
            .into_iter()
            .find(|p| p.bytes() == bytes)
            .ok_or(MemoryError::UnsupportedPage { page: bytes })
    }

    /// log2 of the size in bytes.
    #[inline]
    pub fn bits(self) -> u32 {
        match self {
            PageSize::Small => FRAME_BITS,
            PageSize::Huge => HUGE_BITS,
        }
    }

    /// Size in bytes.
    #[inline]
    pub fn bytes(self) -> u64 {
        1 << self.bits()
    }

    /// The buddy order of one page (0 or 9).
    #[inline]
    pub fn order(self) -> u8 {
        (self.bits() - FRAME_BITS) as u8
    }

    /// The virtual page number of `vaddr` at this size.
    #[inline]
    pub fn page_of(self, vaddr: u64) -> u64 {
        vaddr >> self.bits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_orders() {
        assert_eq!(PageSize::Small.bytes(), 4096);
        assert_eq!(PageSize::from_bytes(4096), Ok(PageSize::Small));
        assert_eq!(PageSize::from_bytes(2 << 20), Ok(PageSize::Huge));
        for bad in [0, 1, 3000, 8192, 1 << 30] {
            let e = PageSize::from_bytes(bad).unwrap_err().to_string();
            assert!(e.contains(&format!("{bad} B")) && e.contains("4096"), "{e}");
        }
        assert_eq!(PageSize::Huge.bytes(), 2 << 20);
        assert_eq!(PageSize::Huge.order(), HUGE_ORDER);
        assert_eq!(HUGE_ORDER, 9);
        assert_eq!(Frame::of_addr(0x5123).addr(), 0x5000);
        assert_eq!(PageSize::Huge.page_of(0x40_0000), 2);
    }
}
