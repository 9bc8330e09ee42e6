//! The per-record work of the record loops ([`run_records`](super::execute)
//! and its window variant) in the common cases, without the general
//! translation machinery of [`step`](super::execute): an access within one
//! 4 KiB page whose page the first-level TLB holds ([`fast_step`], inline
//! in each loop) or, after a first-level miss, the STLB ([`stlb_step`], out
//! of line), and the stall of a served access ([`served_stall`]).

use cachepart_trace::{Kind, Record};

use crate::cache::Cache;
use crate::hierarchy::Served;
use crate::memory::PhysicalCore;
use crate::system::timing::StallTable;

/// The common case of a record, inline: an access within one 4 KiB page
/// whose page the first-level TLB holds ([`PhysicalCore::translate_fast`]:
/// no walk, no paging), issued on `pc` and `llc`. Returns its
/// instructions and the level that served it; `None` (nothing done) for
/// any other record, which [`stlb_step`] or [`step`](super::execute) runs.
///
/// While frames handed out outside a walk (a superpage moved by
/// recoloring) wait for their lines to be dropped, only the page of the
/// last first-level hit is taken here: any other access drops them first,
/// in [`step`](super::execute).
///
/// With `PLAIN` ([`is_plain`]) the core has no swap and its hierarchy is
/// plain: neither is checked again.
#[inline(always)]
pub(super) fn fast_step<const PLAIN: bool>(
    pc: &mut PhysicalCore,
    llc: &mut Cache,
    rec: Record,
) -> Option<(u64, Served)> {
    let p = if pc.address_space().has_fresh_frames() {
        pc.translate_last(rec)?
    } else if PLAIN {
        pc.translate_fast_unswapped(rec)?
    } else {
        pc.translate_fast(rec)?
    };
    let served = access::<PLAIN>(pc, llc, rec, p);
    // An access's instructions (`Record::instructions`).
    let n = rec.gap_u64() + u64::from(rec.kind_code() == Kind::Ifetch as u64);
    Some((n, served))
}

/// A record for which [`fast_step`] gave `None` whose page the STLB holds
/// (out of line: the common first-level TLB miss): translated
/// ([`PhysicalCore::translate_stlb`]) and issued on `pc` and `llc` as
/// [`step`](super::execute) would, with nothing pending (no fresh frames,
/// no walk loads). Returns its instructions, the stall of its STLB hit and
/// the level that served it; `None` (nothing done) for any other record.
#[inline(never)]
pub(super) fn stlb_step<const PLAIN: bool>(
    pc: &mut PhysicalCore,
    llc: &mut Cache,
    rec: Record,
    stalls: &StallTable,
) -> Option<(u64, u64, Served)> {
    if pc.address_space().has_fresh_frames() || !pc.walk_loads().is_empty() {
        return None;
    }
    let p = pc.translate_stlb(rec)?;
    let served = if PLAIN {
        pc.hierarchy_mut().access_at_plain_inline(llc, rec, p)
    } else {
        pc.hierarchy_mut().access_at(llc, rec, p)
    };
    // An access's instructions (`Record::instructions`).
    let n = rec.gap_u64() + u64::from(rec.kind_code() == Kind::Ifetch as u64);
    Some((n, stalls.stlb_hit, served))
}

/// Whether `pc` has no swap and a plain hierarchy
/// ([`Hierarchy::is_plain`](crate::hierarchy::Hierarchy::is_plain)):
/// then a record loop runs [`fast_step`] and [`stlb_step`] with `PLAIN`.
/// Neither changes while a loop runs.
pub(super) fn is_plain(pc: &PhysicalCore) -> bool {
    pc.swap().is_none() && pc.hierarchy().is_plain()
}

/// Access record `rec` at translated address `p` on `pc`'s hierarchy.
#[inline(always)]
fn access<const PLAIN: bool>(
    pc: &mut PhysicalCore,
    llc: &mut Cache,
    rec: Record,
    p: u64,
) -> Served {
    if PLAIN {
        pc.hierarchy_mut().access_at_plain(llc, rec, p)
    } else {
        pc.hierarchy_mut().access_at(llc, rec, p)
    }
}

/// Stall ticks of an access served at `served`, also counted in
/// `beyond_private` (LLC or memory) and `mem_stall` (memory).
#[inline(always)]
pub(super) fn served_stall(
    stalls: &StallTable,
    store: bool,
    served: Served,
    beyond_private: &mut u64,
    mem_stall: &mut u64,
) -> u64 {
    // An L1 hit never stalls (`StallTable::new` sets its entry to 0: it is
    // part of `base-cpi`); said first, it keeps the common case to one
    // compare.
    if served == Served::L1 {
        return 0;
    }
    let s = stalls.stall(store, served);
    if served >= Served::Llc {
        *beyond_private += s;
        if served == Served::Memory {
            *mem_stall += s;
        }
    }
    s
}
