//! Interleaving: the per-core clocks advanced in simulated-time order
//! within an interval.
//!
//! Each core has a clock (ticks, see [`timing`](crate::system::timing)).
//! The simulator always advances the core with the smallest clock (ties:
//! the lowest core index) and runs it until its clock passes the next
//! core's clock (plus `interleave-slack-cycles`), so a core that runs
//! faster issues more LLC accesses in the same simulated time. Cores
//! without a live app stop. A run slice executes the installed app's
//! records ([`run_records`]: instructions, cycles and stall cycles counted
//! per record), reprices DRAM at the end of each bandwidth window and,
//! when the LLC is inclusive and shared, back-invalidates in the other
//! cores the blocks the core evicted from it (at the end of the slice: a
//! short delay, as slices end as soon as the core passes the next one).

use cachepart_machine::Sample;
use cachepart_trace::{Kind, Record};

use super::paging::{walk_load_stall, walk_stall, zero_fresh, TlbMark};
use super::recolor::ExhaustedResponder;
use super::{cfg_err, App, System};
use crate::cache::Cache;
use crate::hierarchy::Served;
use crate::memory::{FrameAllocator, MemoryError, PhysicalCore};
use crate::system::error::SystemError;
use crate::system::timing::{StallTable, TICKS_PER_CYCLE};
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

/// Translates `rec` and issues its accesses on `pc` and `llc`. Walk loads
/// are counted in `beyond_private` and `mem_stall` (as
/// [`walk_load_stall`] does), paging time in `paging`.
#[inline(always)]
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
    let mut walk = 0;
    let single = match pc.translate_fast(rec) {
        // The common case: one record, no walk, no paging.
        Some(p) => Some(p),
        // An access within one page: the TLBs, else a walk.
        None => {
            let mark = TlbMark::of(pc);
            match pc.translate_single(rec, alloc) {
                None => None,
                Some(Ok(p)) => {
                    walk = walk_stall(pc, mark, stalls, stall_ns, ticks_per_ns, paging);
                    if pc.address_space().has_fresh_frames() {
                        zero_fresh(pc, llc);
                    }
                    if !pc.walk_loads().is_empty() {
                        walk += walk_load_stall(pc, llc, stalls, beyond_private, mem_stall);
                    }
                    Some(p)
                }
                // The record is retried (after more colors, say).
                Some(Err(e)) => return Err(e),
            }
        }
    };
    if let Some(p) = single {
        let served = pc.hierarchy_mut().access_at(llc, rec, p);
        return Ok(Step {
            // An access's instructions (`Record::instructions`).
            n: u64::from(rec.gap()) + u64::from(rec.kind() == Kind::Ifetch),
            walk,
            served: [served, Served::L1],
            parts: 1,
        });
    }
    let mark = TlbMark::of(pc);
    // An error leaves the record to be retried (after more colors, say).
    let tr = pc.translate(rec, alloc)?;
    walk = walk_stall(pc, mark, stalls, stall_ns, ticks_per_ns, paging);
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

/// Runs `app`'s buffered records on `pc` until the clock reaches `stop`,
/// the buffer is empty or the app reaches its instruction limit: the flat
/// model (each access stalls the core for its level's latency, LLC and
/// memory ones divided by the app's `mlp`; stores never stall).
#[inline(never)]
fn run_records(
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
        let s = match step(
            pc,
            llc,
            alloc,
            rec,
            &stalls,
            &mut app.stall_ns,
            ticks_per_ns,
            &mut paging,
            &mut beyond_private,
            &mut mem_stall,
        ) {
            Ok(s) => s,
            Err(e) => break Err(e),
        };
        pos += 1;
        let store = rec.kind() == Kind::Store;
        let mut stall = s.walk;
        for &served in &s.served[..s.parts] {
            stall += served_stall(&stalls, store, served, &mut beyond_private, &mut mem_stall);
        }
        let n = s.n;
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
#[inline(never)]
fn run_records_window(
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
        let s = match step(
            pc,
            llc,
            alloc,
            rec,
            &stalls,
            &mut app.stall_ns,
            ticks_per_ns,
            &mut paging,
            &mut beyond_private,
            &mut mem_stall,
        ) {
            Ok(s) => s,
            Err(e) => break Err(e),
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

/// Stall ticks of an access served at `served`, also counted in
/// `beyond_private` (LLC or memory) and `mem_stall` (memory).
#[inline(always)]
fn served_stall(
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

impl System {
    /// Runs `cycles` more cycles of global time and returns one sample per
    /// app (deltas over the interval; occupancy at its end). An app whose
    /// colors run out is an error.
    pub fn run_interval(&mut self, cycles: u64) -> Result<Vec<Sample>, SystemError> {
        self.run_interval_with(cycles, &mut |_| None)
    }

    /// [`System::run_interval`], asking `more_colors` for an app's whole
    /// new color set when its colors run out (`None`: the run fails).
    pub fn run_interval_with(
        &mut self,
        cycles: u64,
        more_colors: ExhaustedResponder<'_>,
    ) -> Result<Vec<Sample>, SystemError> {
        let target = self
            .now
            .saturating_add(cycles.saturating_mul(TICKS_PER_CYCLE));
        self.advance(target, more_colors)?;
        self.now = target;
        Ok(self.take_samples())
    }

    /// Runs intervals of `interval_cycles` until every app has finished,
    /// handing each interval's samples to `on_interval`.
    pub fn run_to_end(
        &mut self,
        interval_cycles: u64,
        mut on_interval: impl FnMut(&[Sample]),
    ) -> Result<(), SystemError> {
        if interval_cycles == 0 {
            return Err(cfg_err("interval-cycles".into(), "must be positive".into()));
        }
        while !self.is_done() {
            let s = self.run_interval(interval_cycles)?;
            on_interval(&s);
        }
        Ok(())
    }

    /// Runs every core until its clock reaches `target` (ticks) or it has
    /// nothing left to run.
    fn advance(
        &mut self,
        target: u64,
        more_colors: ExhaustedResponder<'_>,
    ) -> Result<(), SystemError> {
        loop {
            let mut best: Option<usize> = None;
            let mut next = u64::MAX;
            for (i, c) in self.cores.iter().enumerate() {
                if c.running.is_none() {
                    continue;
                }
                match best {
                    Some(b) if c.clock >= self.cores[b].clock => next = next.min(c.clock),
                    Some(b) => {
                        next = self.cores[b].clock;
                        best = Some(i);
                    }
                    None => best = Some(i),
                }
            }
            let Some(b) = best else { break };
            let clock = self.cores[b].clock;
            if clock >= target {
                break;
            }
            if clock >= self.dram.window_end() {
                self.update_dram(clock);
            }
            if clock >= self.cores[b].run_end {
                self.run_idle(b);
                continue;
            }
            let core = &self.cores[b];
            let sliced = core.queue.len() > 1;
            if sliced && clock >= core.quantum_end {
                let next_app = core
                    .running
                    .and_then(|r| core.queue.iter().position(|&a| a == r))
                    .map(|p| core.queue[(p + 1) % core.queue.len()]);
                self.switch_to(b, next_app, true)?;
                continue;
            }
            let mut stop = target
                .min(self.dram.window_end())
                .min(next.saturating_add(self.slack + 1));
            if sliced {
                stop = stop.min(core.quantum_end);
            }
            stop = stop.min(core.run_end);
            self.run_slice(b, stop, more_colors)?;
        }
        Ok(())
    }

    /// Closes a bandwidth window at global time `now` and reprices memory
    /// accesses.
    fn update_dram(&mut self, now: u64) {
        let lines: u64 = self
            .cores
            .iter()
            .map(|c| {
                let m = c.pc.hierarchy().stats().mem;
                m.reads + m.writes
            })
            .sum();
        let lat = self.dram.update(now, lines * self.line);
        for a in &mut self.apps {
            a.stalls = StallTable::new(
                &a.spec.timing,
                &self.platform.timing,
                &self.platform.tlb,
                lat,
                self.platform.l3_victim.map(|v| v.cycles),
            );
        }
    }

    /// Runs core `b`'s app until the core's clock reaches `stop`.
    fn run_slice(
        &mut self,
        b: usize,
        stop: u64,
        more_colors: ExhaustedResponder<'_>,
    ) -> Result<(), SystemError> {
        let Some(a) = self.cores[b].running else {
            return Ok(());
        };
        self.llc.set_owner(a as u16);
        loop {
            let app = &mut self.apps[a];
            if app.c.instructions >= app.limit {
                self.finish(b)?;
                break;
            }
            if app.pos >= app.buf.len() {
                if !self.refill(a)? {
                    self.finish(b)?;
                    break;
                }
                continue;
            }
            let core = &mut self.cores[b];
            let run = if app.ooo.is_some() {
                run_records_window
            } else {
                run_records
            };
            let r = run(
                &mut core.pc,
                &mut self.llc,
                &mut *self.alloc,
                app,
                &mut core.clock,
                stop,
                self.ticks_per_ns,
            );
            match r {
                Ok(()) => {}
                Err(source @ MemoryError::ColorsExhausted { .. }) => {
                    self.more_colors(a, source, more_colors)?;
                    continue;
                }
                Err(source) => {
                    return Err(SystemError::Memory {
                        app: Some(app.spec.name.clone()),
                        source,
                    })
                }
            }
            let core = &mut self.cores[b];
            let app = &mut self.apps[a];
            if core.clock >= stop {
                if app.c.instructions >= app.limit {
                    self.finish(b)?;
                }
                break;
            }
        }
        if self.apps[a].window && self.cores[b].running == Some(a) {
            self.poll_window(b, a);
        }
        if self.inclusive_shared {
            self.cores[b]
                .pc
                .hierarchy_mut()
                .take_llc_evictions(&mut self.evicted);
            for &blk in &self.evicted {
                for (i, c) in self.cores.iter_mut().enumerate() {
                    if i != b {
                        c.pc.hierarchy_mut().back_invalidate(blk);
                    }
                }
            }
            self.evicted.clear();
        }
        Ok(())
    }
}
