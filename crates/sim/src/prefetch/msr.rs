//! The prefetcher control word, laid out as Intel's MSR 0x1A4
//! (`MISC_FEATURE_CONTROL`): a set bit turns a prefetcher off, so 0 is
//! every prefetcher on, and the same word can later go to real hardware.
//!
//! | bit | prefetcher |
//! |---|---|
//! | 0 | L2 hardware prefetcher (the streamer) |
//! | 1 | L2 adjacent cache line prefetcher |
//! | 2 | DCU (L1 data) next-line prefetcher |
//! | 3 | DCU IP (instruction pointer) stride prefetcher |
//!
//! Every other bit is reserved and refused.

#[cfg(test)]
use cachepart_units::Kind as _;

/// One of the four prefetchers, in MSR bit order; the kebab-case names are
/// those of platform and scenario files.
#[cachepart_units::kind]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// L2 streamer: streams within a 4 KiB page, prefetched into L2.
    L2Streamer,
    /// L2 adjacent line: the other line of the 128-byte pair, into L2.
    L2Adjacent,
    /// L1 DCU next line: the next line after a load, into L1D.
    L1NextLine,
    /// L1 DCU IP stride: a load instruction's constant stride, into L1D.
    L1IpStride,
}

impl Kind {
    /// Its bit in the control word.
    pub fn bit(self) -> u64 {
        1 << (self as u32)
    }
}

/// The bits a control word may set.
pub const VALID_BITS: u64 = 0xf;

/// A checked control word.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Word(u64);

impl Word {
    /// Every prefetcher off.
    pub const ALL_OFF: Word = Word(VALID_BITS);

    /// Checks `bits`: reserved bits (4 and up) are refused.
    pub fn new(bits: u64) -> Result<Word, String> {
        if bits & !VALID_BITS != 0 {
            return Err(format!(
                "{bits:#x}: reserved bits {:#x} set (MSR 0x1A4 uses bits 0-3: \
                 L2 streamer, L2 adjacent line, DCU next line, DCU IP stride; a set bit turns one off)",
                bits & !VALID_BITS
            ));
        }
        Ok(Word(bits))
    }

    /// The raw bits.
    pub fn bits(self) -> u64 {
        self.0
    }

    /// Whether `kind` is on.
    pub fn is_on(self, kind: Kind) -> bool {
        self.0 & kind.bit() == 0
    }

    /// The word with only `kinds` on.
    pub fn only(kinds: &[Kind]) -> Word {
        Word(kinds.iter().fold(VALID_BITS, |w, k| w & !k.bit()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_follow_msr_0x1a4() {
        assert_eq!(Kind::L2Streamer.bit(), 1);
        assert_eq!(Kind::L2Adjacent.bit(), 2);
        assert_eq!(Kind::L1NextLine.bit(), 4);
        assert_eq!(Kind::L1IpStride.bit(), 8);
        let w = Word::new(0x4).unwrap();
        assert!(!w.is_on(Kind::L1NextLine));
        assert!(
            w.is_on(Kind::L2Streamer) && w.is_on(Kind::L2Adjacent) && w.is_on(Kind::L1IpStride)
        );
        assert_eq!(Word::only(&[Kind::L2Streamer]).bits(), 0xe);
        assert!(Word::ALL_OFF.bits() == 0xf && Kind::all().all(|k| !Word::ALL_OFF.is_on(k)));
    }

    #[test]
    fn reserved_bits_are_refused() {
        let e = Word::new(0x10).unwrap_err();
        assert!(e.contains("reserved bits 0x10"), "{e}");
        assert!(Word::new(1 << 63).is_err());
        assert_eq!(Kind::from_name("l2-streamer"), Some(Kind::L2Streamer));
        assert_eq!(Kind::from_name("l3-magic"), None);
    }
}
