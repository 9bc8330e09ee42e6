//! Paging charges: the time of STLB hits and page walks (with walks
//! through the caches, of their page-table loads: [`walk_load_stall`]),
//! and of page-outs, page-ins and page copies ([`PagingStats::stall_ns`](crate::memory::PagingStats::stall_ns)),
//! charged to the app's clock and cycles. The paging time is checked only
//! on the page-walk path (a fault, a page-in or a lazy move happens only
//! there), when an app is installed on its core (copies done while it was
//! parked) and when [`System::recolor`](super::System::recolor) moves
//! pages at once; [`paging_ticks`] converts what accrued since the last
//! charge, in one place.
//!
//! **Page zeroing.** A frame handed to an app (first touch, page-in,
//! recoloring copy) is one the kernel zeroed (`clear_page`) or overwrote:
//! the app never finds the previous owner's data in the caches. Its lines
//! are dropped from the core's private levels and the LLC before the
//! access that faulted ([`zero_fresh`]), dirty ones written to memory
//! (counted as the app's memory writes). The zeroing's own writes and
//! cycles are not modelled (the kernel's `clear_page` of 4 KiB costs
//! about 64 stores, small next to the fault's cost in
//! [`PagingCosts`](crate::memory::PagingCosts)); frames never used before
//! hold no lines, so runs without frame reuse are unchanged. Only frames
//! the LLC's [`FrameMarks`](crate::cache::FrameMarks) marked (handed to
//! an app before, or reached by a prefetch across a page boundary) are
//! looked up: an unmarked frame has no line in any level. Under SWAP the
//! frames are pseudo-physical: their lines are found through the core's
//! swap map.

use super::{App, System};
use crate::cache::Cache;
use crate::hierarchy::Served;
use crate::memory::{Frame, PhysicalCore, FRAME_BYTES};
use crate::system::timing::StallTable;

/// A core's TLB counts before a translation: page walks and STLB hits.
#[derive(Clone, Copy)]
pub(super) struct TlbMark {
    walks: u64,
    stlb_hits: u64,
}

impl TlbMark {
    /// `pc`'s counts now.
    #[inline(always)]
    pub(super) fn of(pc: &PhysicalCore) -> TlbMark {
        let t = pc.tlb();
        TlbMark {
            walks: t.walks(),
            stlb_hits: t.stlb_hits(),
        }
    }
}

/// Stall ticks of the STLB hits and page walks (their fixed part) `pc`
/// made since `mark`, plus those of the faults, page-ins and lazy moves
/// the walks did (which happen only on a walk; also added to `paging`).
/// `stall_ns` is the app's paging time already charged.
#[inline(always)]
pub(super) fn walk_stall(
    pc: &PhysicalCore,
    mark: TlbMark,
    stalls: &StallTable,
    stall_ns: &mut u64,
    ticks_per_ns: f64,
    paging: &mut u64,
) -> u64 {
    let t = pc.tlb();
    let walked = t.walks() - mark.walks;
    let mut stall = walked * stalls.walk + (t.stlb_hits() - mark.stlb_hits) * stalls.stlb_hit;
    if walked > 0 {
        let ns = pc.address_space().stats().stall_ns();
        let d = paging_ticks(stall_ns, ns, ticks_per_ns);
        stall += d;
        *paging += d;
    }
    stall
}

/// Issues the page-table loads `pc`'s last walks left pending through its
/// caches and `llc` (walks through the caches); returns their stall
/// ticks, also counted in `beyond_private` (served by the LLC or memory:
/// uncore time, which clock modulation does not stretch) and `mem_stall`
/// (served by memory).
#[cold]
#[inline(never)]
pub(super) fn walk_load_stall(
    pc: &mut PhysicalCore,
    llc: &mut Cache,
    stalls: &StallTable,
    beyond_private: &mut u64,
    mem_stall: &mut u64,
) -> u64 {
    let mut stall = 0;
    pc.issue_walk_loads(llc, |served| {
        let s = stalls.walk_load[served as usize];
        stall += s;
        if served >= Served::Llc {
            *beyond_private += s;
            if served == Served::Memory {
                *mem_stall += s;
            }
        }
    });
    stall
}

/// Ticks of `ns` nanoseconds (cumulative counts convert exactly).
fn ns_ticks(ns: u64, ticks_per_ns: f64) -> u64 {
    (ns as f64 * ticks_per_ns).round() as u64
}
/// Ticks of the paging time not yet charged: `ns` is the app's cumulative
/// paging time, `charged` the part already charged (set to `ns`).
#[inline(always)]
pub(super) fn paging_ticks(charged: &mut u64, ns: u64, ticks_per_ns: f64) -> u64 {
    if ns == *charged {
        return 0;
    }
    let d = ns_ticks(ns, ticks_per_ns) - ns_ticks(*charged, ticks_per_ns);
    *charged = ns;
    d
}

impl App {
    /// Charges the paging time of its address space (`ns` cumulative) not
    /// yet charged to `clock` (its core's) and to its cycles.
    pub(super) fn charge_paging(&mut self, ns: u64, clock: &mut u64, ticks_per_ns: f64) {
        let d = paging_ticks(&mut self.stall_ns, ns, ticks_per_ns);
        *clock = clock.saturating_add(d);
        self.c.ticks += d;
        self.c.paging_ticks += d;
    }
}

/// Drops the cached lines of the frames `pc`'s address space was handed
/// since the last call (see the module docs), in `pc`'s levels and `llc`.
/// Frames `llc`'s [`FrameMarks`](crate::cache::FrameMarks) has not marked
/// cannot have lines in any level and are skipped; each frame handed out
/// is marked. Under SWAP the frames are pseudo-physical: each 4 KiB piece
/// is one physical frame, a pseudo-superpage's pieces scattered over 2^k
/// physical superpages.
#[cold]
#[inline(never)]
pub(super) fn zero_fresh(pc: &mut PhysicalCore, llc: &mut Cache) {
    let mut frames = Vec::new();
    pc.address_space_mut().take_fresh_frames(&mut frames);
    let swap = pc.swap().copied();
    let h = pc.hierarchy_mut();
    let mut dropped = 0;
    for &(f, order) in &frames {
        let mut piece = |p: Frame| {
            let marked = llc.frame_marks_mut().is_none_or(|m| m.mark(p.0));
            if marked {
                dropped += h.discard_range(llc, p.addr(), FRAME_BYTES);
            }
        };
        for i in 0..1u64 << order {
            let p = Frame(f.0 + i);
            piece(swap.map_or(p, |s| s.frame(p)));
        }
    }
    if let Some(m) = llc.frame_marks_mut() {
        m.count_dropped(dropped);
    }
}

impl System {
    /// Lines dropped from the caches so far because the frame holding
    /// them was handed to an app (the kernel zeroes a page before mapping
    /// it); 0 while the LLC keeps no frame marks (lines larger than a
    /// frame).
    pub fn lines_zeroed(&self) -> u64 {
        self.llc.frame_marks().map_or(0, |m| m.dropped())
    }

    /// From now on, looks up the lines of every frame handed to an app
    /// instead of skipping the frames that cannot hold any: the reference
    /// the skipping is checked against (every result stays the same, only
    /// slower).
    pub fn zero_every_frame(&mut self) {
        if let Some(m) = self.llc.frame_marks_mut() {
            m.mark_all();
        }
    }
}
