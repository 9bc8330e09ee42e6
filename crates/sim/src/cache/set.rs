//! One set's tag search and the per-set record (most recent block, dirty
//! and prefetched bits, tag signatures, valid count).
//!
//! A set of 5 to 16 ways is searched by signature first: each of its first
//! 16 ways has an 8-bit hash of its block in the set's record, eight to a
//! word, and a lookup compares a word of them at once (the zero-byte trick
//! on the signatures XOR the block's), then checks the full tag of each
//! way flagged. Every way holding the block is flagged (a false flag costs
//! one compare), so the search finds what a compare of every tag finds.

use super::INVALID;

/// A byte of 1 in every byte of a word.
const BYTE_ONES: u64 = 0x0101_0101_0101_0101;

/// The signature of `block`: the top byte of a multiplicative hash (the
/// blocks of one set share their low bits, so every bit is mixed in).
#[inline(always)]
pub(super) fn signature(block: u64) -> u64 {
    block.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56
}

/// The way of `tags` (one set, at most 64 ways) holding `block`: by the
/// signatures of `st` where the set has 5 to 16 ways, else by comparing
/// every tag without a branch per way (a block is in at most one way, so
/// that is the first match; 4 ways get a search of fixed width, unrolled
/// by the compiler).
#[inline(always)]
pub(super) fn find(st: &SetState, tags: &[u64], block: u64) -> Option<usize> {
    match tags.len() {
        4 => find_way_fixed::<4>(tags, block),
        5..=8 => st.find_by_signature::<1>(tags, block),
        9..=16 => st.find_by_signature::<2>(tags, block),
        _ => find_way_any(tags, block),
    }
}

/// [`find`] of a set of exactly `N` ways by comparing every tag.
#[inline(always)]
pub(super) fn find_way_fixed<const N: usize>(tags: &[u64], block: u64) -> Option<usize> {
    let Ok(tags) = <&[u64; N]>::try_from(tags) else {
        return find_way_any(tags, block);
    };
    // A select per way (a compare and a conditional move) instead of a
    // bit per way gathered into a mask: fewer instructions, and as the
    // block is in at most one way, the last match is the only one.
    let mut way = N;
    for (w, &t) in tags.iter().enumerate() {
        if t == block {
            way = w;
        }
    }
    (way < N).then_some(way)
}

/// [`find`] of a set of any width by comparing every tag.
#[inline(always)]
pub(super) fn find_way_any(tags: &[u64], block: u64) -> Option<usize> {
    let mut hits = 0u64;
    for (w, &t) in tags.iter().enumerate() {
        hits |= u64::from(t == block) << w;
    }
    (hits != 0).then(|| hits.trailing_zeros() as usize)
}

/// The state of one set that is not per line, with its dirty bits and
/// signatures, kept together so that a lookup touches one host cache line
/// for all of it (64 bytes, aligned: never split across two host lines).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(super) struct SetState {
    /// The block hit or filled last (looked at first), or [`INVALID`].
    pub(super) mru_block: u64,
    /// Dirty ways: bit `w` for way `w` (at most 64 ways).
    pub(super) dirty: u64,
    /// Ways holding a prefetched line no demand access has used yet.
    pub(super) prefetched: u64,
    /// The [`signature`] of the block of each of the first 16 ways (any
    /// value for an invalid way), read eight at a time as little-endian
    /// words.
    pub(super) signatures: [u8; 16],
    /// Valid lines, to skip the search for an invalid way once full.
    pub(super) valid: u8,
    /// The way of `mru_block`.
    pub(super) mru_way: u8,
}

impl SetState {
    pub(super) const EMPTY: SetState = SetState {
        mru_block: INVALID,
        dirty: 0,
        prefetched: 0,
        signatures: [0; 16],
        valid: 0,
        mru_way: 0,
    };

    /// [`find`] by signature in a set of at most `8 * WORDS` ways.
    #[inline(always)]
    fn find_by_signature<const WORDS: usize>(&self, tags: &[u64], block: u64) -> Option<usize> {
        let want = BYTE_ONES * signature(block);
        for (k, word) in self.signatures.chunks_exact(8).take(WORDS).enumerate() {
            let x = u64::from_le_bytes(word.try_into().expect("8 signatures")) ^ want;
            // Every zero byte is flagged (and maybe a byte of 1 above one).
            let mut flags = x.wrapping_sub(BYTE_ONES) & !x & BYTE_ONES << 7;
            while flags != 0 {
                let way = 8 * k + (flags.trailing_zeros() / 8) as usize;
                // Bytes past the set's ways have no tag.
                if tags.get(way) == Some(&block) {
                    return Some(way);
                }
                flags &= flags - 1;
            }
        }
        None
    }

    /// Records the signature of `block`, now in `way`.
    #[inline(always)]
    pub(super) fn set_signature(&mut self, way: usize, block: u64) {
        if let Some(s) = self.signatures.get_mut(way) {
            *s = signature(block) as u8;
        }
    }

    #[inline(always)]
    pub(super) fn is_dirty(&self, way: usize) -> bool {
        self.dirty >> way & 1 != 0
    }

    #[inline(always)]
    pub(super) fn set_dirty(&mut self, way: usize, dirty: bool) {
        self.dirty = self.dirty & !(1 << way) | u64::from(dirty) << way;
    }

    #[inline(always)]
    pub(super) fn mark_dirty(&mut self, way: usize) {
        self.dirty |= 1 << way;
    }

    /// Whether `way` held an unused prefetched line; it is used now.
    #[inline(always)]
    pub(super) fn take_prefetched(&mut self, way: usize) -> bool {
        if self.prefetched == 0 {
            return false;
        }
        let was = self.prefetched >> way & 1 != 0;
        self.prefetched &= !(1 << way);
        was
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The search by signature finds what a compare of every tag
        /// finds, with invalid ways and stale signatures about, in sets of
        /// 1 to 20 ways.
        #[test]
        fn signature_search_equals_a_full_compare(
            ways in 1usize..=20,
            blocks in prop::collection::vec(
                prop_oneof![Just(INVALID), 0u64..64, any::<u64>()], 20),
            stale in prop::collection::vec(any::<u8>(), 16),
            queries in prop::collection::vec(prop_oneof![0u64..64, any::<u64>()], 40),
        ) {
            // One way per block at most, as in a cache.
            let mut tags: Vec<u64> = Vec::new();
            for &b in &blocks[..ways] {
                tags.push(if b != INVALID && tags.contains(&b) { INVALID } else { b });
            }
            let mut st = SetState::EMPTY;
            st.signatures.copy_from_slice(&stale);
            for (w, &t) in tags.iter().enumerate() {
                if t != INVALID {
                    st.set_signature(w, t);
                }
            }
            for q in queries.into_iter().chain(tags.iter().copied().filter(|&t| t != INVALID)) {
                prop_assert_eq!(find(&st, &tags, q), find_way_any(&tags, q), "block {}", q);
            }
        }
    }
}
