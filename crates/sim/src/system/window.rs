//! The out-of-order window: memory-level parallelism derived from the
//! trace instead of a hand-set `mlp` ([`WindowConfig`], the platform's
//! `[timing] window = { ... }`, and [`Window`], one app's state).
//!
//! An interval model in the style of Karkhanis and Smith, in integer
//! ticks and deterministic:
//!
//! * **Misses.** Every data access that misses the L1 (served by the L2,
//!   the LLC or memory) *issues* at the core's clock and *completes* at
//!   issue + the serving level's whole latency (`l2-cycles`,
//!   `llc-cycles`, `llc-cycles + dram`). L2 hits go through the window
//!   too: they use the same L1 miss buffers (Intel's fill buffers) and a
//!   window of a few hundred instructions hides most of them, as on the
//!   real cores.
//! * **Reorder buffer.** The core keeps dispatching instructions at
//!   `base-cpi` while misses are outstanding; instruction `i` cannot
//!   dispatch before every load miss of an instruction at or below
//!   `i - rob-entries` has completed (the ROB retires in order), so the
//!   core waits for the oldest outstanding load miss once it is
//!   `rob-entries` instructions behind.
//! * **Miss buffers.** At most `mshrs` misses are in flight: a new one
//!   issues at the earliest completion of those in flight when they are
//!   all busy (the core itself goes on; the ROB stalls it later).
//! * **Dependent loads.** A load marked dependent
//!   ([`Kind::DepLoad`](cachepart_trace::Kind::DepLoad)) issues only once
//!   the previous load's data is there, so a pointer chase serialises:
//!   each of its misses costs its whole latency. Without hints every
//!   load is independent (the documented default).
//! * **Store buffer.** A store miss retires from the ROB into the store
//!   buffer and holds an entry until its miss completes; entries drain in
//!   order (x86 stores commit in order). A store finding the buffer full
//!   stalls the core until the oldest entry drains. Store hits in the L1
//!   take no entry. A modify (read-modify-write) is a load here.
//! * **Instruction fetches** that miss the L1I stall the front end for
//!   the whole latency (no overlap); page walks and their page-table
//!   loads stay serial as in the flat model.
//! * **Drains.** Outstanding misses drain (the core waits for all of
//!   them) at a context switch, before an idle process's turn and when
//!   the app finishes. Clock modulation needs no drain: a halted core
//!   dispatches nothing, and misses in flight complete in wall-clock time.
//!
//! The core's waits are its stall ticks: each wait is charged to the
//! level of the miss it waited for (`l2_miss_stall_ticks` for the LLC and
//! memory, `mem_stall_ticks` for memory), so a miss hidden under other
//! work costs nothing and one the core waited for costs what was left.
//!
//! Limits: no branch mispredictions, no limit on loads in flight other
//! than the miss buffers and the ROB, no issue-width or port model (the
//! ROB fills at `1 / base-cpi` instructions a cycle), prefetches take no
//! miss buffer, and the store part of a modify is not buffered.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use serde::{Deserialize, Serialize};

use super::clock_modulation::DutyClock;
use super::error::SystemError;
use crate::hierarchy::Served;

/// Largest `rob-entries` accepted.
pub const MAX_ROB_ENTRIES: u32 = 1 << 16;
/// Largest `mshrs` and `store-buffer-entries` accepted.
pub const MAX_BUFFER_ENTRIES: u32 = 4096;

/// A core's out-of-order window (`[timing] window = { rob-entries = 224,
/// mshrs = 10, store-buffer-entries = 56 }`). Every field is required.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct WindowConfig {
    /// Reorder-buffer entries: how far (in instructions) the core runs
    /// ahead of its oldest outstanding load miss.
    pub rob_entries: u32,
    /// Misses in flight at once (the L1D's fill buffers).
    pub mshrs: u32,
    /// Store-buffer entries (store misses waiting to complete).
    pub store_buffer_entries: u32,
}

impl WindowConfig {
    /// Checks every value; a refusal names the field
    /// (`timing.window.rob-entries`, ...).
    pub fn check(&self) -> Result<(), SystemError> {
        for (field, v, max) in [
            ("rob-entries", self.rob_entries, MAX_ROB_ENTRIES),
            ("mshrs", self.mshrs, MAX_BUFFER_ENTRIES),
            (
                "store-buffer-entries",
                self.store_buffer_entries,
                MAX_BUFFER_ENTRIES,
            ),
        ] {
            if v == 0 || v > max {
                return Err(SystemError::Config {
                    field: format!("timing.window.{field}"),
                    reason: format!("{v} is outside 1..={max}"),
                });
            }
        }
        Ok(())
    }
}

/// Stall ticks of the core's waits, by what it waited for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Waits {
    /// Every wait.
    pub all: u64,
    /// Waits for misses served by the LLC or memory.
    pub beyond_private: u64,
    /// Waits for misses served by memory.
    pub memory: u64,
}

/// What a data access is to the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A load (or a modify) whose address does not wait for another load.
    Load,
    /// A load that needs the previous load's data.
    DepLoad,
    /// A store.
    Store,
}

/// An outstanding miss: the instruction it belongs to, when it is done,
/// and the level serving it.
#[derive(Clone, Copy, Debug)]
struct Pending {
    instr: u64,
    ready: u64,
    level: Served,
}

/// One app's window state (times in ticks of its core's clock).
#[derive(Clone, Debug)]
pub struct Window {
    rob: u64,
    sb_cap: usize,
    /// Load misses not yet retired, in program order; `ready` strictly
    /// increasing (a miss done no later than one before it never holds
    /// the ROB on its own, so it is not kept).
    loads: VecDeque<Pending>,
    /// When each miss buffer frees (the earliest on top).
    buffers: BinaryHeap<Reverse<u64>>,
    /// Store misses in the store buffer, in order (`ready` non-decreasing).
    stores: VecDeque<Pending>,
    /// When the last load's data is there.
    last_load: u64,
}

impl Window {
    /// An empty window of `cfg` (checked).
    pub fn new(cfg: &WindowConfig) -> Window {
        Window {
            rob: u64::from(cfg.rob_entries),
            sb_cap: cfg.store_buffer_entries as usize,
            loads: VecDeque::new(),
            buffers: (0..cfg.mshrs.max(1)).map(|_| Reverse(0)).collect(),
            stores: VecDeque::new(),
            last_load: 0,
        }
    }

    /// Whether no miss is outstanding.
    pub fn is_empty(&self) -> bool {
        self.loads.is_empty() && self.stores.is_empty()
    }

    /// Dispatches the `n` instructions after instruction `done` (the
    /// app's count so far) from clock `t`, at `cpi` ticks each (through
    /// `duty` when throttled), waiting for the oldest load miss whenever
    /// the ROB is full.
    #[inline(always)]
    pub fn dispatch(
        &mut self,
        t: &mut u64,
        done: u64,
        n: u64,
        cpi: u64,
        duty: Option<&DutyClock>,
        w: &mut Waits,
    ) {
        // The common cases: no load miss outstanding, or the oldest one
        // neither done by now nor holding up any of these `n` (what
        // `dispatch_behind` would find first, without its call).
        if self
            .loads
            .front()
            .is_none_or(|f| f.ready > *t && f.instr + self.rob > done + n)
        {
            *t = run(duty, *t, n * cpi);
        } else {
            self.dispatch_behind(t, done, n, cpi, duty, w);
        }
    }

    /// [`Window::dispatch`] with load misses outstanding.
    #[inline(never)]
    fn dispatch_behind(
        &mut self,
        t: &mut u64,
        mut done: u64,
        n: u64,
        cpi: u64,
        duty: Option<&DutyClock>,
        w: &mut Waits,
    ) {
        let end = done + n;
        loop {
            while self.loads.front().is_some_and(|f| f.ready <= *t) {
                self.loads.pop_front();
            }
            let Some(&f) = self.loads.front() else { break };
            // The first instruction that waits for `f`.
            let k = f.instr + self.rob;
            if k > end {
                break;
            }
            if k > done + 1 {
                *t = run(duty, *t, (k - 1 - done) * cpi);
                done = k - 1;
            }
            wait(t, f, w);
            self.loads.pop_front();
        }
        *t = run(duty, *t, (end - done) * cpi);
    }

    /// Issues a data access of instruction `instr` served by `served`
    /// (latency `latency` ticks) at clock `t`. A store finding the store
    /// buffer full waits for its oldest entry first.
    #[inline]
    pub fn issue(
        &mut self,
        t: &mut u64,
        instr: u64,
        access: Access,
        served: Served,
        latency: u64,
        w: &mut Waits,
    ) {
        if served == Served::L1 {
            match access {
                Access::Store => {}
                Access::Load => self.l1_load(*t, false),
                Access::DepLoad => self.l1_load(*t, true),
            }
            return;
        }
        match access {
            Access::Store => {
                while let Some(&f) = self.stores.front() {
                    if f.ready <= *t {
                        self.stores.pop_front();
                    } else if self.stores.len() >= self.sb_cap {
                        wait(t, f, w);
                        self.stores.pop_front();
                    } else {
                        break;
                    }
                }
                let done = self.slot(*t, latency);
                let ready = self.stores.back().map_or(done, |b| b.ready.max(done));
                self.stores.push_back(Pending {
                    instr,
                    ready,
                    level: served,
                });
            }
            Access::Load | Access::DepLoad => {
                let at = if access == Access::DepLoad {
                    self.last_load.max(*t)
                } else {
                    *t
                };
                let done = self.slot(at, latency);
                self.last_load = done;
                if self.loads.back().is_none_or(|b| done > b.ready) {
                    self.loads.push_back(Pending {
                        instr,
                        ready: done,
                        level: served,
                    });
                }
            }
        }
    }

    /// A load (`dependent`: one that needs the previous load's data) that
    /// hit the L1 at `t`: its data is there at once (what [`Window::issue`]
    /// does for an L1 hit).
    #[inline(always)]
    pub fn l1_load(&mut self, t: u64, dependent: bool) {
        self.last_load = if dependent { self.last_load.max(t) } else { t };
    }

    /// Waits at `t` for every outstanding miss (a context switch, an idle
    /// turn, the end of the app).
    pub fn drain(&mut self, t: &mut u64, w: &mut Waits) {
        let last = [self.loads.back(), self.stores.back()]
            .into_iter()
            .flatten()
            .copied()
            .max_by_key(|p| p.ready);
        if let Some(p) = last {
            wait(t, p, w);
        }
        self.loads.clear();
        self.stores.clear();
        self.last_load = self.last_load.min(*t);
    }

    /// Issues a miss of `latency` ticks that wants to issue at `at`: at
    /// `at`, or when the earliest busy miss buffer frees if all are busy.
    /// The miss takes that buffer until its completion, which it returns.
    /// (Misses take buffers in program order, each the one that frees
    /// first: O(log mshrs) a miss.)
    #[inline]
    fn slot(&mut self, at: u64, latency: u64) -> u64 {
        let mut free = self
            .buffers
            .peek_mut()
            .expect("a window has at least one miss buffer");
        let done = at.max(free.0) + latency;
        free.0 = done;
        done
    }
}

/// `work` ticks of running from `t` (stretched by a duty cycle).
#[inline(always)]
fn run(duty: Option<&DutyClock>, t: u64, work: u64) -> u64 {
    match duty {
        None => t + work,
        Some(d) => d.run(t, work),
    }
}

/// The core waits at `t` for `p`; the wait is charged to `p`'s level.
#[inline(always)]
fn wait(t: &mut u64, p: Pending, w: &mut Waits) {
    if p.ready > *t {
        let d = p.ready - *t;
        w.all += d;
        if p.level >= Served::Llc {
            w.beyond_private += d;
            if p.level == Served::Memory {
                w.memory += d;
            }
        }
        *t = p.ready;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(rob: u32, mshrs: u32, sb: u32) -> Window {
        Window::new(&WindowConfig {
            rob_entries: rob,
            mshrs,
            store_buffer_entries: sb,
        })
    }

    /// Worked by hand: one tick per instruction, misses of 100 ticks.
    #[test]
    fn hand_worked_timelines() {
        let mut w = Waits::default();
        // Two independent loads, ROB of 4: the 5th instruction after the
        // first load waits for it (issued at 1, done at 101).
        let mut win = window(4, 8, 4);
        let mut t = 0;
        win.dispatch(&mut t, 0, 1, 1, None, &mut w);
        win.issue(&mut t, 1, Access::Load, Served::Memory, 100, &mut w);
        win.dispatch(&mut t, 1, 1, 1, None, &mut w);
        win.issue(&mut t, 2, Access::Load, Served::Memory, 100, &mut w);
        assert_eq!(t, 2);
        win.dispatch(&mut t, 2, 10, 1, None, &mut w);
        // Instructions 3 and 4 run (t = 4); 5 waits for load 1 (101);
        // 6 waits for load 2 (102); 6..12 run: 102 + 7 = 109.
        assert_eq!(t, 109);
        // (Load 2, done at 102, is ready when instruction 6 comes.)
        assert_eq!(w.all, 101 - 4);
        assert_eq!((w.memory, w.beyond_private), (w.all, w.all));
        // A dependent load issues when the previous one's data is there.
        let mut win = window(64, 8, 4);
        let (mut t, mut w) = (0, Waits::default());
        win.issue(&mut t, 0, Access::Load, Served::Llc, 100, &mut w);
        win.issue(&mut t, 0, Access::DepLoad, Served::L1, 0, &mut w);
        win.issue(&mut t, 0, Access::DepLoad, Served::Llc, 100, &mut w);
        win.drain(&mut t, &mut w);
        assert_eq!(t, 200);
        assert_eq!((w.all, w.beyond_private, w.memory), (200, 200, 0));
        // One miss buffer: the second miss issues when the first is done.
        let mut win = window(64, 1, 4);
        let (mut t, mut w) = (0, Waits::default());
        win.issue(&mut t, 0, Access::Load, Served::L2, 100, &mut w);
        win.issue(&mut t, 0, Access::Load, Served::L2, 100, &mut w);
        win.drain(&mut t, &mut w);
        assert_eq!((t, w.all, w.beyond_private), (200, 200, 0));
        // A store buffer of one: the second store miss waits for the
        // first; hits take no entry.
        let mut win = window(64, 8, 1);
        let (mut t, mut w) = (0, Waits::default());
        win.issue(&mut t, 0, Access::Store, Served::Memory, 100, &mut w);
        win.issue(&mut t, 0, Access::Store, Served::L1, 0, &mut w);
        assert_eq!(t, 0);
        win.issue(&mut t, 0, Access::Store, Served::Memory, 100, &mut w);
        assert_eq!((t, w.memory), (100, 100));
        assert!(!win.is_empty());
        win.drain(&mut t, &mut w);
        assert!(win.is_empty());
        assert_eq!((t, w.all), (200, 200));
    }
}
