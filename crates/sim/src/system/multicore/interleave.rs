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
use cachepart_trace::Kind;

use super::paging::{walk_load_stall, walk_stall, zero_fresh, TlbMark};
use super::recolor::ExhaustedResponder;
use super::{cfg_err, App, System};
use crate::cache::Cache;
use crate::hierarchy::Served;
use crate::memory::{FrameAllocator, MemoryError, PhysicalCore};
use crate::system::error::SystemError;
use crate::system::timing::{StallTable, TICKS_PER_CYCLE};

/// Runs `app`'s buffered records on `pc` until the clock reaches `stop`,
/// the buffer is empty or the app reaches its instruction limit.
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
        let mut stall = 0;
        let uncore_before = beyond_private;
        let single = match pc.translate_fast(rec) {
            // The common case: one record, no walk, no paging.
            Some(p) => Some(p),
            // An access within one page: the TLBs, else a walk.
            None => {
                let mark = TlbMark::of(pc);
                match pc.translate_single(rec, alloc) {
                    None => None,
                    Some(Ok(p)) => {
                        stall = walk_stall(
                            pc,
                            mark,
                            &stalls,
                            &mut app.stall_ns,
                            ticks_per_ns,
                            &mut paging,
                        );
                        if pc.address_space().has_fresh_frames() {
                            zero_fresh(pc, llc);
                        }
                        if !pc.walk_loads().is_empty() {
                            stall += walk_load_stall(
                                pc,
                                llc,
                                &stalls,
                                &mut beyond_private,
                                &mut mem_stall,
                            );
                        }
                        Some(p)
                    }
                    // The record is retried (after more colors, say).
                    Some(Err(e)) => break Err(e),
                }
            }
        };
        let kind = rec.kind();
        let store = kind == Kind::Store;
        let n = if let Some(p) = single {
            pos += 1;
            let served = pc.hierarchy_mut().access_at(llc, rec, p);
            stall += served_stall(&stalls, store, served, &mut beyond_private, &mut mem_stall);
            // An access's instructions (`Record::instructions`).
            u64::from(rec.gap()) + u64::from(kind == Kind::Ifetch)
        } else {
            let mark = TlbMark::of(pc);
            let tr = match pc.translate(rec, alloc) {
                Ok(tr) => tr,
                // The record is retried (after more colors, say).
                Err(e) => break Err(e),
            };
            pos += 1;
            stall = walk_stall(
                pc,
                mark,
                &stalls,
                &mut app.stall_ns,
                ticks_per_ns,
                &mut paging,
            );
            if pc.address_space().has_fresh_frames() {
                zero_fresh(pc, llc);
            }
            if !pc.walk_loads().is_empty() {
                stall += walk_load_stall(pc, llc, &stalls, &mut beyond_private, &mut mem_stall);
            }
            for &r in tr.records() {
                let served = pc.hierarchy_mut().access(llc, r);
                stall += served_stall(&stalls, store, served, &mut beyond_private, &mut mem_stall);
            }
            rec.instructions()
        };
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
            let r = run_records(
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
