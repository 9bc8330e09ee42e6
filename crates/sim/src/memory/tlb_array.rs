//! One set-associative, LRU array of translations: the building block of
//! every TLB level.
//!
//! An entry maps a virtual page (of one size) to the physical address of
//! its frame. The tag is the virtual page number with the page size in its
//! low bit, so a unified array (the STLB) holds both sizes; the set index
//! is the low bits of the page number of the entry's own size.

use super::error::MemoryError;
use super::page::PageSize;

const INVALID: u64 = u64::MAX;

/// Entries and ways of one TLB array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct TlbArrayConfig {
    /// Entries in all.
    pub entries: u32,
    /// Associativity (entries = ways: fully associative).
    pub ways: u32,
}

impl TlbArrayConfig {
    /// `entries` entries in `ways` ways.
    pub const fn new(entries: u32, ways: u32) -> TlbArrayConfig {
        TlbArrayConfig { entries, ways }
    }

    /// What [`TlbArray::new`] checks, without building the array (a
    /// platform checks its TLBs when it loads): 0 entries (an array that
    /// never hits), or entries that make a power-of-two number of sets of
    /// `ways`. `name` names the array in the error.
    pub fn check(&self, name: &'static str) -> Result<(), MemoryError> {
        if self.entries == 0 {
            return Ok(());
        }
        let whole = self.ways != 0 && self.entries.is_multiple_of(self.ways);
        if !whole || !(self.entries / self.ways).is_power_of_two() {
            return Err(MemoryError::TlbGeometry {
                name,
                entries: self.entries,
                ways: self.ways,
            });
        }
        Ok(())
    }
}

/// Host bytes an array keeps per entry (tag, frame and LRU stamp), for
/// the platform's memory check.
pub const HOST_BYTES_PER_ENTRY: u64 = 3 * std::mem::size_of::<u64>() as u64;

/// A set-associative LRU array of translations.
#[derive(Clone, Debug)]
pub struct TlbArray {
    ways: usize,
    sets_mask: u64,
    tags: Vec<u64>,
    /// Physical address of the page's frame, per entry.
    phys: Vec<u64>,
    stamp: Vec<u64>,
    clock: u64,
}

fn tag(size: PageSize, vpn: u64) -> u64 {
    (vpn << 1) | u64::from(size == PageSize::Huge)
}

/// The way of `tags` (one set) holding tag `t`: every way compared, a
/// compare and a conditional move each, without a branch per way (a tag
/// is in at most one way, so the last match is the only one). The usual
/// associativities (4, 8 and 12 ways) get a search of fixed width.
#[inline(always)]
fn find_way(tags: &[u64], t: u64) -> Option<usize> {
    #[inline(always)]
    fn search(tags: &[u64], t: u64) -> Option<usize> {
        let mut way = usize::MAX;
        for (w, &x) in tags.iter().enumerate() {
            if x == t {
                way = w;
            }
        }
        (way != usize::MAX).then_some(way)
    }
    match tags.len() {
        4 => search(&tags[..4], t),
        8 => search(&tags[..8], t),
        12 => search(&tags[..12], t),
        _ => search(tags, t),
    }
}

/// The way of a set (`tags`, `stamps`) that an insertion of tag `t` takes:
/// the first way holding `t` or no entry, else the least recently used
/// (the smallest stamp, the first of equals). One pass, without a
/// branch per way; the usual associativities (4, 8 and 12 ways) get a
/// pass of fixed width.
#[inline(always)]
fn insert_way(tags: &[u64], stamps: &[u64], t: u64) -> usize {
    #[inline(always)]
    fn pass(tags: &[u64], stamps: &[u64], t: u64) -> usize {
        let mut free = usize::MAX;
        for (w, &x) in tags.iter().enumerate().rev() {
            if x == t || x == INVALID {
                free = w;
            }
        }
        let mut lru = 0;
        let mut oldest = u64::MAX;
        for (w, &s) in stamps.iter().enumerate().take(tags.len()) {
            if s < oldest {
                oldest = s;
                lru = w;
            }
        }
        if free != usize::MAX {
            free
        } else {
            lru
        }
    }
    match tags.len() {
        4 => pass(&tags[..4], &stamps[..4], t),
        8 => pass(&tags[..8], &stamps[..8], t),
        12 => pass(&tags[..12], &stamps[..12], t),
        _ => pass(tags, stamps, t),
    }
}

impl TlbArray {
    /// An empty array; `name` names it in errors. Sets must be a power of
    /// two (0 entries: an array that never hits).
    pub fn new(name: &'static str, cfg: TlbArrayConfig) -> Result<TlbArray, MemoryError> {
        cfg.check(name)?;
        if cfg.entries == 0 {
            return Ok(TlbArray {
                ways: 0,
                sets_mask: 0,
                tags: Vec::new(),
                phys: Vec::new(),
                stamp: Vec::new(),
                clock: 0,
            });
        }
        let sets = cfg.entries / cfg.ways;
        let n = cfg.entries as usize;
        Ok(TlbArray {
            ways: cfg.ways as usize,
            sets_mask: u64::from(sets - 1),
            tags: vec![INVALID; n],
            phys: vec![0; n],
            stamp: vec![0; n],
            clock: 0,
        })
    }

    /// Whether the array holds any entry at all (0 entries: it never
    /// hits, and insertions do nothing).
    #[inline(always)]
    pub fn has_entries(&self) -> bool {
        self.ways != 0
    }

    fn base(&self, vpn: u64) -> usize {
        (vpn & self.sets_mask) as usize * self.ways
    }

    /// The frame address of page `vpn` of `size`, if present (and makes it
    /// the most recently used of its set).
    #[inline(always)]
    pub fn lookup(&mut self, size: PageSize, vpn: u64) -> Option<u64> {
        if self.ways == 0 {
            return None;
        }
        let t = tag(size, vpn);
        let base = self.base(vpn);
        let way = find_way(&self.tags[base..base + self.ways], t)?;
        self.clock += 1;
        self.stamp[base + way] = self.clock;
        Some(self.phys[base + way])
    }

    /// Inserts the translation of page `vpn` of `size` to `phys`,
    /// replacing an invalid entry or the least recently used one (inline:
    /// only the STLB hit's refill and the walk's fill insert).
    #[inline(always)]
    pub fn insert(&mut self, size: PageSize, vpn: u64, phys: u64) {
        if self.ways == 0 {
            return;
        }
        let t = tag(size, vpn);
        let base = self.base(vpn);
        let set = base..base + self.ways;
        let way = insert_way(&self.tags[set.clone()], &self.stamp[set], t);
        self.clock += 1;
        self.tags[base + way] = t;
        self.phys[base + way] = phys;
        self.stamp[base + way] = self.clock;
    }

    /// Drops the entry of page `vpn` of `size`, if present.
    pub fn invalidate(&mut self, size: PageSize, vpn: u64) {
        if self.ways == 0 {
            return;
        }
        let t = tag(size, vpn);
        let base = self.base(vpn);
        for x in &mut self.tags[base..base + self.ways] {
            if *x == t {
                *x = INVALID;
            }
        }
    }

    /// Drops every entry.
    pub fn flush(&mut self) {
        self.tags.fill(INVALID);
    }

    /// Valid entries.
    pub fn occupancy(&self) -> usize {
        self.tags.iter().filter(|&&t| t != INVALID).count()
    }

    /// Valid entries of pages of `size`.
    pub fn entries_of(&self, size: PageSize) -> usize {
        let huge = u64::from(size == PageSize::Huge);
        self.tags
            .iter()
            .filter(|&&t| t != INVALID && t & 1 == huge)
            .count()
    }
}

#[cfg(test)]
mod tests;
