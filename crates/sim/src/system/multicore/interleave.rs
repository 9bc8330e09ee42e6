//! Interleaving: the per-core clocks advanced in simulated-time order
//! within an interval.
//!
//! Each core has a clock (ticks, see [`timing`](crate::system::timing)).
//! The simulator always advances the core with the smallest clock (ties:
//! the lowest core index) and runs it until its clock passes the next
//! core's clock (plus `interleave-slack-cycles`), so a core that runs
//! faster issues more LLC accesses in the same simulated time. Cores
//! without a live app stop. A run slice executes the installed app's
//! records ([`execute`](super::execute): instructions, cycles and stall
//! cycles counted per record), reprices DRAM at the end of each bandwidth window and,
//! when the LLC is inclusive and shared, back-invalidates in the other
//! cores the blocks the core evicted from it (at the end of the slice: a
//! short delay, as slices end as soon as the core passes the next one).

use cachepart_machine::Sample;

use super::execute::{run_records, run_records_window};
use super::recolor::ExhaustedResponder;
use super::{cfg_err, System};
use crate::memory::MemoryError;
use crate::system::error::SystemError;
use crate::system::timing::{StallTable, TICKS_PER_CYCLE};

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
