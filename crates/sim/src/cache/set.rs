//! One set's tag search and the per-set record (most recent block, dirty
//! and prefetched bits, valid count).

use super::INVALID;

/// The way of `tags` (one set, at most 64 ways) holding `block`: every
/// way is compared, without a branch per way (a block is in at most one
/// way, so this is the first match). The usual associativities (4, 8 and
/// 16 ways) get a search of fixed width, unrolled by the compiler.
#[inline(always)]
pub(super) fn find_way(tags: &[u64], block: u64) -> Option<usize> {
    match tags.len() {
        4 => find_way_fixed::<4>(tags, block),
        8 => find_way_fixed::<8>(tags, block),
        16 => find_way_fixed::<16>(tags, block),
        _ => find_way_any(tags, block),
    }
}

/// [`find_way`] of a set of exactly `N` ways.
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

/// [`find_way`] of a set of any width.
#[inline(always)]
pub(super) fn find_way_any(tags: &[u64], block: u64) -> Option<usize> {
    let mut hits = 0u64;
    for (w, &t) in tags.iter().enumerate() {
        hits |= u64::from(t == block) << w;
    }
    (hits != 0).then(|| hits.trailing_zeros() as usize)
}

/// The state of one set that is not per line, with its dirty bits, kept
/// together so that a lookup touches one host cache line for all of it
/// (32 bytes, aligned: never split across two host lines).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
pub(super) struct SetState {
    /// The block hit or filled last (looked at first), or [`INVALID`].
    pub(super) mru_block: u64,
    /// Dirty ways: bit `w` for way `w` (at most 64 ways).
    pub(super) dirty: u64,
    /// Ways holding a prefetched line no demand access has used yet.
    pub(super) prefetched: u64,
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
        valid: 0,
        mru_way: 0,
    };

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
