//! A deliberately plain cachegrind model: the yardstick of the benchmark
//! and an oracle for tests.
//!
//! [`reference_cachegrind`] is one function over flat tag arrays, with
//! bit-selection indexing and LRU kept by shifting each set's tags
//! (most recent first), as cachegrind's own `cg_sim.c` does. It shares no
//! code with [`Cache`](crate::Cache) or [`Hierarchy`](crate::Hierarchy)
//! beyond record decoding, so agreement between the two is evidence, and
//! its speed is what the abstractions are measured against.

use cachepart_trace::{Kind, Record};

use crate::cachegrind::CachegrindSummary;

/// `(size in bytes, ways, line bytes)` of one level.
pub type Geom = (u64, u32, u32);

/// Simulates `records` on I1, D1 and LL of the given geometries (LRU;
/// power-of-two sets and lines, lines of at least 16 bytes, as cachegrind
/// requires; not checked here) and returns cachegrind's totals.
pub fn reference_cachegrind(records: &[Record], i1: Geom, d1: Geom, ll: Geom) -> CachegrindSummary {
    let ways = [i1.1 as usize, d1.1 as usize, ll.1 as usize];
    let bits = [
        i1.2.trailing_zeros(),
        d1.2.trailing_zeros(),
        ll.2.trailing_zeros(),
    ];
    let sets = [
        i1.0 / u64::from(i1.1 * i1.2),
        d1.0 / u64::from(d1.1 * d1.2),
        ll.0 / u64::from(ll.1 * ll.2),
    ];
    let mut t_i1 = vec![u64::MAX; (sets[0] as usize) * ways[0]];
    let mut t_d1 = vec![u64::MAX; (sets[1] as usize) * ways[1]];
    let mut t_ll = vec![u64::MAX; (sets[2] as usize) * ways[2]];
    let clamp = i1.2.min(d1.2).min(ll.2);
    let mut c = [0u64; 9];
    for r in records {
        let (slot, l1) = match r.kind() {
            Kind::Ifetch => (0, 0),
            Kind::Load | Kind::DepLoad | Kind::Modify => (3, 1),
            Kind::Store => (6, 1),
            Kind::Escape => continue,
        };
        let addr = r.addr();
        let size = r.size().min(clamp);
        c[slot] += 1;
        let miss = if l1 == 0 {
            refer(&mut t_i1, ways[0], sets[0] - 1, bits[0], addr, size)
        } else {
            refer(&mut t_d1, ways[1], sets[1] - 1, bits[1], addr, size)
        };
        if miss {
            c[slot + 1] += 1;
            if refer(&mut t_ll, ways[2], sets[2] - 1, bits[2], addr, size) {
                c[slot + 2] += 1;
            }
        }
    }
    CachegrindSummary::from_values(c)
}

/// One reference: both lines of a straddling access, one miss at most.
#[inline(always)]
fn refer(tags: &mut [u64], ways: usize, set_mask: u64, bits: u32, addr: u64, size: u32) -> bool {
    let b1 = addr >> bits;
    let b2 = (addr + u64::from(size) - 1) >> bits;
    let m1 = set_miss(tags, ways, set_mask, b1);
    if b1 == b2 {
        m1
    } else {
        set_miss(tags, ways, set_mask, b2) | m1
    }
}

/// Looks `block` up in its set, moving it to the front (most recent).
#[inline(always)]
fn set_miss(tags: &mut [u64], ways: usize, set_mask: u64, block: u64) -> bool {
    let base = (block & set_mask) as usize * ways;
    let set = &mut tags[base..base + ways];
    if set[0] == block {
        return false;
    }
    let mut i = 1;
    while i < ways {
        if set[i] == block {
            set.copy_within(0..i, 1);
            set[0] = block;
            return false;
        }
        i += 1;
    }
    set.copy_within(0..ways - 1, 1);
    set[0] = block;
    true
}
