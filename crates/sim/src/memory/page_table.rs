//! The 4 KiB page-table entries of one address space, by virtual page
//! number: what a page walk reads on every TLB miss.
//!
//! Entries are grouped by 2 MiB region (512 pages, one page-table page of
//! a real machine). A region's frames and flags lie in one dense array of
//! 8 bytes an entry (4 KiB a region), found through a small hash map of
//! regions, and the entries' page-out order numbers in a second array the
//! walk never reads. A walk thus costs a probe of the region map (a few
//! entries per application, which stay in the host's caches) and one read
//! of an 8-byte entry, where a hash map of whole entries scattered them
//! over four times the memory and missed the host's caches on nearly
//! every walk of a large footprint. Regions are kept once created (their
//! entries emptied), so the memory held is bounded by the footprint.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::page::Frame;

/// A fixed multiplicative hash for page numbers (deterministic and fast;
/// page numbers are not adversarial).
#[derive(Default)]
pub(super) struct PageHasher(u64);

impl Hasher for PageHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(26);
    }
}

/// A hash map keyed by page numbers.
pub(super) type PageMap<V> = HashMap<u64, V, BuildHasherDefault<PageHasher>>;

/// Pages of one region (a 2 MiB page-table page).
const REGION_PAGES: usize = 512;
const REGION_BITS: u32 = REGION_PAGES.trailing_zeros();

/// Bit of a packed entry saying it is present (flags use the bits below
/// it, the frame number the bits above).
const PRESENT: u64 = 0x80;
const FLAG_BITS: u32 = 8;

/// A 4 KiB page-table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Pte {
    pub(super) frame: Frame,
    /// Position in the FIFO of page-out victims.
    pub(super) seq: u64,
    pub(super) flags: u8,
}

/// One region's entries.
#[derive(Clone, Debug)]
struct Region {
    /// The region number (virtual page number / 512).
    number: u64,
    /// Per page: frame number, present bit and flags (0: absent).
    packed: Box<[u64]>,
    /// Per page: the entry's page-out order number.
    seq: Box<[u64]>,
}

/// The 4 KiB page-table entries of one address space.
#[derive(Clone, Debug, Default)]
pub(super) struct SmallPages {
    /// Region number -> index into `regions`.
    index: PageMap<u32>,
    regions: Vec<Region>,
    /// Entries present.
    len: usize,
}

#[inline(always)]
fn split(vpn: u64) -> (u64, usize) {
    (
        vpn >> REGION_BITS,
        (vpn & (REGION_PAGES as u64 - 1)) as usize,
    )
}

#[inline(always)]
fn pack(frame: Frame, flags: u8) -> u64 {
    debug_assert!(
        frame.0 < 1 << (64 - FLAG_BITS),
        "frame number {} too large",
        frame.0
    );
    frame.0 << FLAG_BITS | PRESENT | u64::from(flags & !(PRESENT as u8))
}

#[inline(always)]
fn unpack(p: u64) -> (Frame, u8) {
    (Frame(p >> FLAG_BITS), (p & (PRESENT - 1)) as u8)
}

impl SmallPages {
    /// Entries present.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The packed entry slot of `vpn`, if its region exists.
    #[inline(always)]
    fn slot(&self, vpn: u64) -> Option<(usize, usize)> {
        let (r, i) = split(vpn);
        let &at = self.index.get(&r)?;
        Some((at as usize, i))
    }

    /// The frame and flags of `vpn`, if mapped (the walk's read).
    #[inline]
    pub(super) fn frame_flags(&self, vpn: u64) -> Option<(Frame, u8)> {
        let (r, i) = self.slot(vpn)?;
        let p = self.regions[r].packed[i];
        (p != 0).then(|| unpack(p))
    }

    /// The entry of `vpn`, if mapped.
    pub(super) fn get(&self, vpn: u64) -> Option<Pte> {
        let (r, i) = self.slot(vpn)?;
        let reg = &self.regions[r];
        let p = reg.packed[i];
        (p != 0).then(|| {
            let (frame, flags) = unpack(p);
            Pte {
                frame,
                seq: reg.seq[i],
                flags,
            }
        })
    }

    /// Whether `vpn` is mapped.
    pub(super) fn contains(&self, vpn: u64) -> bool {
        self.frame_flags(vpn).is_some()
    }

    /// Sets the flags of mapped `vpn` to `f(flags)` and returns its frame
    /// and old flags; `None` (nothing done) if it is not mapped.
    #[inline]
    pub(super) fn update_flags(
        &mut self,
        vpn: u64,
        f: impl FnOnce(u8) -> u8,
    ) -> Option<(Frame, u8)> {
        let (r, i) = self.slot(vpn)?;
        let e = &mut self.regions[r].packed[i];
        if *e == 0 {
            return None;
        }
        let (frame, flags) = unpack(*e);
        *e = pack(frame, f(flags));
        Some((frame, flags))
    }

    /// Sets the frame of mapped `vpn` (its flags and order number stay);
    /// false if it is not mapped.
    pub(super) fn set_frame(&mut self, vpn: u64, frame: Frame) -> bool {
        let Some((r, i)) = self.slot(vpn) else {
            return false;
        };
        let e = &mut self.regions[r].packed[i];
        if *e == 0 {
            return false;
        }
        *e = pack(frame, unpack(*e).1);
        true
    }

    /// Maps `vpn` to `pte` (replacing its entry if it had one).
    pub(super) fn insert(&mut self, vpn: u64, pte: Pte) {
        let (r, i) = split(vpn);
        let at = match self.index.get(&r) {
            Some(&at) => at as usize,
            None => {
                let at = self.regions.len();
                self.index.insert(
                    r,
                    u32::try_from(at).expect("fewer than 2^32 regions of 2 MiB"),
                );
                self.regions.push(Region {
                    number: r,
                    packed: vec![0; REGION_PAGES].into_boxed_slice(),
                    seq: vec![0; REGION_PAGES].into_boxed_slice(),
                });
                at
            }
        };
        let reg = &mut self.regions[at];
        self.len += usize::from(reg.packed[i] == 0);
        reg.packed[i] = pack(pte.frame, pte.flags);
        reg.seq[i] = pte.seq;
    }

    /// Unmaps `vpn`; returns its entry if it had one.
    pub(super) fn remove(&mut self, vpn: u64) -> Option<Pte> {
        let (r, i) = self.slot(vpn)?;
        let reg = &mut self.regions[r];
        let p = std::mem::take(&mut reg.packed[i]);
        if p == 0 {
            return None;
        }
        self.len -= 1;
        let (frame, flags) = unpack(p);
        Some(Pte {
            frame,
            seq: reg.seq[i],
            flags,
        })
    }

    /// Every entry with its virtual page number, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u64, Pte)> + '_ {
        self.regions.iter().flat_map(|reg| {
            reg.packed
                .iter()
                .zip(reg.seq.iter())
                .enumerate()
                .filter(|(_, (&p, _))| p != 0)
                .map(move |(i, (&p, &seq))| {
                    let (frame, flags) = unpack(p);
                    (
                        reg.number << REGION_BITS | i as u64,
                        Pte { frame, seq, flags },
                    )
                })
        })
    }

    /// The virtual page numbers mapped, in no particular order.
    pub(super) fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.iter().map(|(v, _)| v)
    }

    /// Sets every entry's flags to `f(flags)`.
    pub(super) fn map_flags(&mut self, f: impl Fn(u8) -> u8) {
        for reg in &mut self.regions {
            for e in reg.packed.iter_mut().filter(|e| **e != 0) {
                let (frame, flags) = unpack(*e);
                *e = pack(frame, f(flags));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The table answers exactly as a hash map of the same entries
        /// after any inserts, removals, flag and frame changes.
        #[test]
        fn behaves_as_a_map(ops in prop::collection::vec((0u8..5, 0u64..3000, 0u64..(1 << 32), 0u8..4), 1..600)) {
            let mut t = SmallPages::default();
            let mut m: std::collections::BTreeMap<u64, Pte> = Default::default();
            for (seq, &(op, vpn, frame, flags)) in ops.iter().enumerate() {
                // Page numbers in a few regions far apart.
                let vpn = (vpn % 3) << 30 | vpn;
                match op {
                    0 | 1 => {
                        let pte = Pte { frame: Frame(frame), seq: seq as u64, flags };
                        t.insert(vpn, pte);
                        m.insert(vpn, pte);
                    }
                    2 => prop_assert_eq!(t.remove(vpn), m.remove(&vpn)),
                    3 => {
                        let want = m.get_mut(&vpn).map(|p| {
                            let old = (p.frame, p.flags);
                            p.flags |= flags;
                            old
                        });
                        prop_assert_eq!(t.update_flags(vpn, |f| f | flags), want);
                    }
                    _ => {
                        let want = m.get_mut(&vpn).map(|p| p.frame = Frame(frame)).is_some();
                        prop_assert_eq!(t.set_frame(vpn, Frame(frame)), want);
                    }
                }
                prop_assert_eq!(t.get(vpn), m.get(&vpn).copied());
                prop_assert_eq!(t.frame_flags(vpn), m.get(&vpn).map(|p| (p.frame, p.flags)));
                prop_assert_eq!(t.len(), m.len());
            }
            let mut all: Vec<(u64, Pte)> = t.iter().collect();
            all.sort_by_key(|e| e.0);
            prop_assert_eq!(all, m.into_iter().collect::<Vec<_>>());
        }
    }
}
