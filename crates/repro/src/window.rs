//! A measurement window over a run, the papers' "fast-forward W
//! instructions, then simulate N": measurement starts at the first
//! interval end at which every app has retired `warmup` instructions, and
//! each app's window closes at the first interval end at which it has
//! retired `measure` instructions inside it; apps whose window closed run
//! on (replaying their traces) as co-runners until every window has
//! closed. Built from the per-interval [`Sample`]s, so the counters a
//! sample carries (instructions, cycles, LLC references and misses,
//! memory stalls and bytes, TLB misses, pages recolored) cover the window
//! only; the others in [`AppTotals`] stay whole-run.

use cachepart_machine::{Interval, Sample};
use cachepart_sim::system::AppTotals;

/// The window's state over a run of `n` apps.
#[derive(Clone, Debug)]
pub struct Window {
    warmup: f64,
    measure: f64,
    retired: Vec<f64>,
    open: bool,
    sums: Vec<Sample>,
    closed: Vec<bool>,
}

impl Window {
    /// A window after `warmup` instructions of every app, `measure` long.
    pub fn new(warmup: u64, measure: u64, apps: usize) -> Window {
        Window {
            warmup: warmup as f64,
            measure: measure as f64,
            retired: vec![0.0; apps],
            open: false,
            sums: vec![Sample::default(); apps],
            closed: vec![false; apps],
        }
    }

    /// Takes one interval's samples.
    pub fn observe(&mut self, iv: &Interval) {
        for s in &iv.samples {
            let Some(i) = (s.app < self.sums.len()).then_some(s.app) else {
                continue;
            };
            if self.open && !self.closed[i] {
                let w = &mut self.sums[i];
                w.instructions += s.instructions;
                w.cycles += s.cycles;
                w.llc_references += s.llc_references;
                w.llc_misses += s.llc_misses;
                w.memory_stall_cycles += s.memory_stall_cycles;
                w.l2_miss_stall_cycles += s.l2_miss_stall_cycles;
                w.memory_bytes += s.memory_bytes;
                w.tlb_misses += s.tlb_misses;
                w.pages_recolored += s.pages_recolored;
                if w.instructions >= self.measure {
                    self.closed[i] = true;
                }
            }
            self.retired[i] += s.instructions;
        }
        if !self.open && self.retired.iter().all(|&r| r >= self.warmup) {
            self.open = true;
        }
    }

    /// Whether every app's window has closed.
    pub fn done(&self) -> bool {
        self.closed.iter().all(|&c| c)
    }

    /// Replaces the sampled counters of `totals` by the window's; an
    /// error (what went wrong, in words) when the run ended before every
    /// window closed.
    pub fn apply(&self, totals: &mut [AppTotals]) -> Result<(), String> {
        if let Some(i) = self.closed.iter().position(|&c| !c) {
            let name = totals.get(i).map_or("?", |t| t.name.as_str());
            return Err(if self.open {
                format!(
                    "the run ended before {name} retired its {} measured instructions ({} so far)",
                    self.measure, self.sums[i].instructions
                )
            } else {
                format!(
                    "the run ended before every app retired its {} warm-up instructions ({name}: {})",
                    self.warmup, self.retired[i]
                )
            });
        }
        for (t, w) in totals.iter_mut().zip(&self.sums) {
            t.instructions = w.instructions.round() as u64;
            t.cycles = w.cycles;
            t.ipc = w.ipc();
            t.llc_references = w.llc_references.round() as u64;
            t.llc_misses = w.llc_misses.round() as u64;
            t.memory_stall_cycles = w.memory_stall_cycles;
            t.l2_miss_stall_cycles = w.l2_miss_stall_cycles;
            t.memory_bytes = w.memory_bytes.round() as u64;
            t.tlb_misses = w.tlb_misses.round() as u64;
            t.pages_recolored = w.pages_recolored.round() as u64;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(index: u64, per_app: &[(f64, f64, f64)]) -> Interval {
        Interval {
            index,
            end_cycles: 0,
            samples: per_app
                .iter()
                .enumerate()
                .map(|(app, &(instructions, cycles, tlb_misses))| Sample {
                    app,
                    instructions,
                    cycles,
                    tlb_misses,
                    ran: true,
                    ..Sample::default()
                })
                .collect(),
            events: Vec::new(),
        }
    }

    #[test]
    fn opens_after_every_app_warmed_and_closes_per_app() {
        let mut w = Window::new(100, 150, 2);
        // App 0 fast (100/interval), app 1 slow (50/interval).
        w.observe(&iv(0, &[(100.0, 10.0, 1.0), (50.0, 10.0, 7.0)]));
        assert!(!w.open); // app 1 has retired 50 of its 100
        w.observe(&iv(1, &[(100.0, 10.0, 1.0), (50.0, 10.0, 7.0)]));
        assert!(w.open); // both warmed: measured from the next interval

        // Window: app 0 closes after 2 intervals (200 >= 150), app 1 after 3.
        for k in 2..4 {
            w.observe(&iv(k, &[(100.0, 20.0, 2.0), (50.0, 10.0, 3.0)]));
        }
        assert!(!w.done());
        w.observe(&iv(4, &[(100.0, 20.0, 2.0), (50.0, 10.0, 3.0)]));
        assert!(w.done());
        let mut t = vec![AppTotals::default(), AppTotals::default()];
        w.apply(&mut t).unwrap();
        assert_eq!(t[0].instructions, 200);
        assert_eq!(t[0].tlb_misses, 4);
        assert!((t[0].ipc - 5.0).abs() < 1e-12);
        assert_eq!(t[1].instructions, 150);
        assert_eq!(t[1].tlb_misses, 9);
        assert!((t[1].ipc - 5.0).abs() < 1e-12);
    }

    #[test]
    fn a_run_that_ends_early_is_an_error() {
        let mut w = Window::new(100, 150, 1);
        w.observe(&iv(0, &[(50.0, 10.0, 0.0)]));
        let mut t = vec![AppTotals {
            name: "a".into(),
            ..AppTotals::default()
        }];
        assert!(w.apply(&mut t).unwrap_err().contains("warm-up"));
        w.observe(&iv(1, &[(60.0, 10.0, 0.0)]));
        w.observe(&iv(2, &[(60.0, 10.0, 0.0)]));
        assert!(w.apply(&mut t).unwrap_err().contains("measured"));
    }
}
