//! Executing records: one app's buffered records run through its core's
//! TLBs and caches until the core's clock reaches the end of its slice,
//! under the flat timing model ([`run_records`]: each access stalls the
//! core for its level's latency) or the out-of-order window
//! ([`run_records_window`]: misses within the window overlap). The
//! per-record work shared by both (translation, walks, paging and the
//! accesses) is split in three: the common case ([`fast_step`]: one page,
//! a first-level TLB hit) inline in each loop with the stall of a served
//! access ([`served_stall`]), then a first-level miss that hits the STLB
//! ([`stlb_step`], out of line), both in `fast_step.rs`; the rest
//! ([`step`]) out of line here. The interleaving of cores
//! ([`interleave`](super::interleave)) calls the loops once per slice.

use cachepart_trace::{Kind, Record};

use super::fast_step::{fast_step, is_plain, served_stall, stlb_step};
use super::paging::{walk_load_stall, walk_stall, zero_fresh, TlbMark};
use super::App;
use crate::cache::Cache;
use crate::hierarchy::Served;
use crate::memory::{FrameAllocator, MemoryError, PhysicalCore};
use crate::system::timing::StallTable;
use crate::system::window::{Access, Waits};

/// One record run through the core's TLBs and caches: its
/// instructions, the serial stall of its translation (STLB hits, page
/// walks and their page-table loads, paging) and the levels that served
/// its parts (one, or two for an access across a page boundary).
#[derive(Clone, Copy)]
struct Step {
    n: u64,
    walk: u64,
    served: [Served; 2],
    parts: usize,
}

/// Translates `rec`, for which [`fast_step`] and [`stlb_step`] gave
/// `None`, and issues its accesses on `pc` and `llc` (out of line: a page
/// walk, an access across pages, an escape, or pending frames or walk
/// loads). Walk loads are counted in
/// `beyond_private` and `mem_stall` (as [`walk_load_stall`] does), paging
/// time in `paging`.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn step(
    pc: &mut PhysicalCore,
    llc: &mut Cache,
    alloc: &mut (dyn FrameAllocator + Send),
    rec: Record,
    stalls: &StallTable,
    stall_ns: &mut u64,
    ticks_per_ns: f64,
    paging: &mut u64,
    beyond_private: &mut u64,
    mem_stall: &mut u64,
) -> Result<Step, MemoryError> {
    let mark = TlbMark::of(pc);
    // An access within one page: the STLB, else a walk (the first-level
    // arrays too if `fast_step` did not look there).
    let single = if pc.address_space().has_fresh_frames() {
        pc.translate_single(rec, alloc)
    } else {
        pc.translate_missed(rec, alloc)
    };
    match single {
        None => {}
        Some(Ok(p)) => {
            let mut walk = walk_stall(pc, mark, stalls, stall_ns, ticks_per_ns, paging);
            if pc.address_space().has_fresh_frames() {
                zero_fresh(pc, llc);
            }
            if !pc.walk_loads().is_empty() {
                walk += walk_load_stall(pc, llc, stalls, beyond_private, mem_stall);
            }
            let served = pc.hierarchy_mut().access_at(llc, rec, p);
            return Ok(Step {
                // An access's instructions (`Record::instructions`).
                n: rec.gap_u64() + u64::from(rec.kind_code() == Kind::Ifetch as u64),
                walk,
                served: [served, Served::L1],
                parts: 1,
            });
        }
        // The record is retried (after more colors, say).
        Some(Err(e)) => return Err(e),
    }
    // An error leaves the record to be retried (after more colors, say).
    let tr = pc.translate(rec, alloc)?;
    let mut walk = walk_stall(pc, mark, stalls, stall_ns, ticks_per_ns, paging);
    if pc.address_space().has_fresh_frames() {
        zero_fresh(pc, llc);
    }
    if !pc.walk_loads().is_empty() {
        walk += walk_load_stall(pc, llc, stalls, beyond_private, mem_stall);
    }
    let mut served = [Served::L1; 2];
    let parts = tr.records().len().min(2);
    for (i, &r) in tr.records().iter().take(2).enumerate() {
        served[i] = pc.hierarchy_mut().access(llc, r);
    }
    Ok(Step {
        n: rec.instructions(),
        walk,
        served,
        parts,
    })
}

/// [`step`] on a record loop's locals ([`run_records`],
/// [`run_records_window`]: the core, the LLC, the allocator, the record,
/// the app, its stall table, ticks per nanosecond and the loop's paging,
/// uncore and memory stall sums), leaving the loop with the error when it
/// fails (the record is retried later).
macro_rules! step_or_break {
    ($pc:ident, $llc:ident, $alloc:ident, $rec:ident, $app:ident, $stalls:ident,
     $ticks_per_ns:ident, $paging:ident, $beyond_private:ident, $mem_stall:ident) => {
        match step(
            $pc,
            $llc,
            $alloc,
            $rec,
            &$stalls,
            &mut $app.stall_ns,
            $ticks_per_ns,
            &mut $paging,
            &mut $beyond_private,
            &mut $mem_stall,
        ) {
            Ok(s) => s,
            Err(e) => break Err(e),
        }
    };
}

/// Runs `app`'s buffered records on `pc` until the clock reaches `stop`,
/// the buffer is empty or the app reaches its instruction limit: the flat
/// model (each access stalls the core for its level's latency, LLC and
/// memory ones divided by the app's `mlp`; stores never stall).
pub(super) fn run_records(
    pc: &mut PhysicalCore,
    llc: &mut Cache,
    alloc: &mut (dyn FrameAllocator + Send),
    app: &mut App,
    clock: &mut u64,
    stop: u64,
    ticks_per_ns: f64,
) -> Result<(), MemoryError> {
    if is_plain(pc) {
        run_records_with::<true>(pc, llc, alloc, app, clock, stop, ticks_per_ns)
    } else {
        run_records_with::<false>(pc, llc, alloc, app, clock, stop, ticks_per_ns)
    }
}

/// [`run_records`], `PLAIN` when [`is_plain`] holds for `pc`.
#[inline(never)]
fn run_records_with<const PLAIN: bool>(
    pc: &mut PhysicalCore,
    llc: &mut Cache,
    alloc: &mut (dyn FrameAllocator + Send),
    app: &mut App,
    clock: &mut u64,
    stop: u64,
    ticks_per_ns: f64,
) -> Result<(), MemoryError> {
    let stalls = app.stalls;
    let duty = app.duty_clock;
    let limit = app.limit;
    let start = *clock;
    let mut t = start;
    let mut instr = app.c.instructions;
    let mut mem_stall = 0u64;
    let mut paging = 0u64;
    let mut beyond_private = 0u64;
    let mut all_stall = 0u64;
    let mut pos = app.pos;
    let buf = &app.buf[..];
    let result = loop {
        if t >= stop || instr >= limit {
            break Ok(());
        }
        let Some(&rec) = buf.get(pos) else {
            break Ok(());
        };
        let uncore_before = beyond_private;
        let store = rec.kind_code() == Kind::Store as u64;
        let (n, stall) = if let Some((n, served)) = fast_step::<PLAIN>(pc, llc, rec) {
            (
                n,
                served_stall(&stalls, store, served, &mut beyond_private, &mut mem_stall),
            )
        } else {
            match stlb_step::<PLAIN>(pc, llc, rec, &stalls) {
                Some((n, walk, served)) => (
                    n,
                    walk + served_stall(
                        &stalls,
                        store,
                        served,
                        &mut beyond_private,
                        &mut mem_stall,
                    ),
                ),
                None => {
                    let s = step_or_break!(
                        pc,
                        llc,
                        alloc,
                        rec,
                        app,
                        stalls,
                        ticks_per_ns,
                        paging,
                        beyond_private,
                        mem_stall
                    );
                    let mut stall = s.walk;
                    for &served in &s.served[..s.parts] {
                        stall += served_stall(
                            &stalls,
                            store,
                            served,
                            &mut beyond_private,
                            &mut mem_stall,
                        );
                    }
                    (s.n, stall)
                }
            }
        };
        pos += 1;
        instr += n;
        all_stall += stall;
        // A throttled core computes (instructions, L2 hits, walks) only
        // in the running parts of its modulation periods; LLC and memory
        // latencies run on regardless.
        t = match &duty {
            None => t + n * stalls.cpi + stall,
            Some(d) => {
                let uncore = beyond_private - uncore_before;
                d.run(t, n * stalls.cpi + stall - uncore) + uncore
            }
        };
    };
    app.pos = pos;
    app.c.instructions = instr;
    app.c.ticks += t - start;
    app.c.mem_stall_ticks += mem_stall;
    app.c.paging_ticks += paging;
    app.c.l2_miss_stall_ticks += beyond_private;
    app.c.stall_ticks += all_stall;
    *clock = t;
    result
}

/// [`run_records`] under the out-of-order window model
/// ([`Window`](crate::system::window::Window)): per record, the serial
/// stalls of its translation and of an instruction fetch that missed the
/// L1I, then its instructions dispatched through the ROB, then its data
/// accesses issued as misses that overlap.
pub(super) fn run_records_window(
    pc: &mut PhysicalCore,
    llc: &mut Cache,
    alloc: &mut (dyn FrameAllocator + Send),
    app: &mut App,
    clock: &mut u64,
    stop: u64,
    ticks_per_ns: f64,
) -> Result<(), MemoryError> {
    if is_plain(pc) {
        run_records_window_with::<true>(pc, llc, alloc, app, clock, stop, ticks_per_ns)
    } else {
        run_records_window_with::<false>(pc, llc, alloc, app, clock, stop, ticks_per_ns)
    }
}

/// [`run_records_window`], `PLAIN` when [`is_plain`] holds for `pc`.
#[inline(never)]
fn run_records_window_with<const PLAIN: bool>(
    pc: &mut PhysicalCore,
    llc: &mut Cache,
    alloc: &mut (dyn FrameAllocator + Send),
    app: &mut App,
    clock: &mut u64,
    stop: u64,
    ticks_per_ns: f64,
) -> Result<(), MemoryError> {
    let stalls = app.stalls;
    let duty = app.duty_clock;
    let limit = app.limit;
    let start = *clock;
    let mut t = start;
    let mut instr = app.c.instructions;
    let mut mem_stall = 0u64;
    let mut paging = 0u64;
    let mut beyond_private = 0u64;
    let mut all_stall = 0u64;
    let mut waits = Waits::default();
    let mut pos = app.pos;
    let Some(win) = app.ooo.as_mut() else {
        return Ok(());
    };
    let buf = &app.buf[..];
    let result = loop {
        if t >= stop || instr >= limit {
            break Ok(());
        }
        let Some(&rec) = buf.get(pos) else {
            break Ok(());
        };
        let uncore_before = beyond_private;
        let s = if let Some((n, served)) = fast_step::<PLAIN>(pc, llc, rec) {
            Step {
                n,
                walk: 0,
                served: [served, Served::L1],
                parts: 1,
            }
        } else {
            match stlb_step::<PLAIN>(pc, llc, rec, &stalls) {
                Some((n, walk, served)) => Step {
                    n,
                    walk,
                    served: [served, Served::L1],
                    parts: 1,
                },
                None => step_or_break!(
                    pc,
                    llc,
                    alloc,
                    rec,
                    app,
                    stalls,
                    ticks_per_ns,
                    paging,
                    beyond_private,
                    mem_stall
                ),
            }
        };
        pos += 1;
        let kind = rec.kind();
        // The common case, unthrottled: no walk and every part an L1 hit,
        // so nothing serial and no miss to issue (`Window::issue` of an L1
        // hit only notes when the load's data is there).
        if duty.is_none() && s.walk == 0 && s.served == [Served::L1; 2] {
            win.dispatch(&mut t, instr, s.n, stalls.cpi, None, &mut waits);
            instr += s.n;
            match kind {
                Kind::Load | Kind::Modify => win.l1_load(t, false),
                Kind::DepLoad => win.l1_load(t, true),
                Kind::Ifetch | Kind::Escape | Kind::Store => {}
            }
            continue;
        }
        // Serial: the translation, and a fetch that missed the L1I.
        let mut serial = s.walk;
        if kind == Kind::Ifetch {
            for &served in &s.served[..s.parts] {
                serial += served_stall(&stalls, false, served, &mut beyond_private, &mut mem_stall);
            }
        }
        all_stall += serial;
        let uncore = beyond_private - uncore_before;
        t = match &duty {
            None => t + serial,
            Some(d) => d.run(t, serial - uncore) + uncore,
        };
        win.dispatch(&mut t, instr, s.n, stalls.cpi, duty.as_ref(), &mut waits);
        instr += s.n;
        let access = match kind {
            Kind::Ifetch | Kind::Escape => continue,
            Kind::Store => Access::Store,
            Kind::DepLoad => Access::DepLoad,
            Kind::Load | Kind::Modify => Access::Load,
        };
        for &served in &s.served[..s.parts] {
            win.issue(
                &mut t,
                instr,
                access,
                served,
                stalls.latency(served),
                &mut waits,
            );
        }
    };
    app.pos = pos;
    app.c.instructions = instr;
    app.c.ticks += t - start;
    app.c.mem_stall_ticks += mem_stall + waits.memory;
    app.c.paging_ticks += paging;
    app.c.l2_miss_stall_ticks += beyond_private + waits.beyond_private;
    app.c.stall_ticks += all_stall + waits.all;
    *clock = t;
    result
}
