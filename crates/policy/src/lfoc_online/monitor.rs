//! What LFOC watches of a classified app between samplings (section 4.2):
//! per monitoring period (a number of the app's instructions) its LLC
//! misses per kilo-cycle, the fraction of cycles stalled on L2 misses and
//! its LLC occupancy; and the heuristics that signal a class change from
//! the mean over the last periods.

use std::collections::VecDeque;

use cachepart_machine::Sample;

use super::params::LfocOnlineParams;
use crate::lfoc::AppClass;

/// One monitoring period's figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Period {
    /// LLC misses per kilo-cycle.
    pub llc_mpkc: f64,
    /// Fraction of cycles stalled on L2 misses.
    pub stall_fraction: f64,
    /// LLC occupancy at the period's end, in bytes.
    pub occupancy_bytes: f64,
}

/// A classified app's monitor.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Monitor {
    instructions: f64,
    cycles: f64,
    misses: f64,
    stalls: f64,
    occupancy: f64,
    periods: VecDeque<Period>,
    /// Periods ended since the last reset.
    ended: u32,
}

impl Monitor {
    /// Adds an interval's sample; returns true when a period ended.
    pub fn observe(&mut self, s: &Sample, p: &LfocOnlineParams) -> bool {
        if !s.ran {
            return false;
        }
        self.instructions += s.instructions;
        self.cycles += s.cycles;
        self.misses += s.llc_misses;
        self.stalls += s.l2_miss_stall_cycles;
        self.occupancy = s.llc_occupancy_bytes;
        if self.instructions < p.period_instructions || self.cycles <= 0.0 {
            return false;
        }
        self.periods.push_back(Period {
            llc_mpkc: 1000.0 * self.misses / self.cycles,
            stall_fraction: self.stalls / self.cycles,
            occupancy_bytes: self.occupancy,
        });
        while self.periods.len() > p.history {
            self.periods.pop_front();
        }
        self.ended = self.ended.saturating_add(1);
        self.instructions = 0.0;
        self.cycles = 0.0;
        self.misses = 0.0;
        self.stalls = 0.0;
        true
    }

    /// The mean over the last `history` periods, once there are that many.
    pub fn mean(&self, p: &LfocOnlineParams) -> Option<Period> {
        if self.periods.len() < p.history {
            return None;
        }
        let n = self.periods.len() as f64;
        let sum = |f: fn(&Period) -> f64| self.periods.iter().map(f).sum::<f64>() / n;
        Some(Period {
            llc_mpkc: sum(|q| q.llc_mpkc),
            stall_fraction: sum(|q| q.stall_fraction),
            occupancy_bytes: self.periods.back().map_or(0.0, |q| q.occupancy_bytes),
        })
    }

    /// Why the app of `class` (with `critical_ways`, for a sensitive one)
    /// likely changed class, if it did.
    pub fn class_change(
        &self,
        class: AppClass,
        critical_ways: u32,
        p: &LfocOnlineParams,
    ) -> Option<String> {
        let m = self.mean(p)?;
        let intensive = m.llc_mpkc > p.high_threshold || m.stall_fraction > p.stall_threshold;
        let calm = m.llc_mpkc < p.low_threshold() && m.stall_fraction <= p.stall_threshold;
        match class {
            AppClass::Light if intensive => Some(format!(
                "light app memory intensive: mean LLCMPKC {:.2} (high {}), L2-miss stalls {:.0}%",
                m.llc_mpkc,
                p.high_threshold,
                100.0 * m.stall_fraction
            )),
            AppClass::Streaming if m.llc_mpkc < p.low_threshold() => Some(format!(
                "streaming app below low_threshold: mean LLCMPKC {:.2} < {:.2}",
                m.llc_mpkc,
                p.low_threshold()
            )),
            AppClass::Streaming => p
                .streaming_resample_periods
                .filter(|&n| self.ended >= n)
                .map(|n| {
                    format!(
                        "streaming app resampled after {n} monitoring periods \
                         (streaming-resample-periods; not in the paper)"
                    )
                }),
            AppClass::Sensitive => {
                let effective = p.way_bytes.map(|b| m.occupancy_bytes / b);
                match effective {
                    Some(e) if calm && e < f64::from(critical_ways) => Some(format!(
                        "sensitive app calm at {e:.1} effective ways, under its critical size {critical_ways}"
                    )),
                    Some(e) if m.llc_mpkc > p.high_threshold && e > f64::from(critical_ways) => {
                        Some(format!(
                            "sensitive app memory intensive at {e:.1} effective ways, over its critical size {critical_ways}"
                        ))
                    }
                    // without occupancy, a calm phase alone signals it
                    None if calm => Some(format!(
                        "sensitive app calm: mean LLCMPKC {:.2} < {:.2}",
                        m.llc_mpkc,
                        p.low_threshold()
                    )),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Forgets every period (after a resampling).
    pub fn reset(&mut self) {
        *self = Monitor::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn period(mpkc: f64, stall: f64) -> Sample {
        Sample {
            instructions: 1e6,
            cycles: 1e6,
            llc_misses: mpkc * 1000.0,
            l2_miss_stall_cycles: stall * 1e6,
            llc_occupancy_bytes: 2.0 * 1024.0,
            ran: true,
            ..Sample::default()
        }
    }

    fn params() -> LfocOnlineParams {
        LfocOnlineParams {
            period_instructions: 1e6,
            way_bytes: Some(1024.0),
            ..LfocOnlineParams::default()
        }
    }

    #[test]
    fn heuristics_wait_for_five_periods_and_filter_spikes() {
        let p = params();
        let mut m = Monitor::default();
        // one spike among calm periods does not make a light app intensive
        for mpkc in [0.5, 40.0, 0.5, 0.5, 0.5] {
            assert!(m.observe(&period(mpkc, 0.0), &p));
        }
        assert_eq!(m.class_change(AppClass::Light, 0, &p), None);
        for _ in 0..4 {
            m.observe(&period(15.0, 0.0), &p);
            assert_eq!(
                m.class_change(AppClass::Light, 0, &p).is_some(),
                m.mean(&p).unwrap().llc_mpkc > 10.0
            );
        }
        assert!(m
            .class_change(AppClass::Light, 0, &p)
            .unwrap()
            .contains("LLCMPKC"));
        // stalls alone are enough
        let mut s = Monitor::default();
        for _ in 0..5 {
            s.observe(&period(1.0, 0.4), &p);
        }
        assert!(s
            .class_change(AppClass::Light, 0, &p)
            .unwrap()
            .contains("stalls 40%"));
        // a streaming app gone quiet, a sensitive one calm under its critical size
        let mut q = Monitor::default();
        for _ in 0..5 {
            q.observe(&period(1.0, 0.0), &p);
        }
        assert!(q.class_change(AppClass::Streaming, 0, &p).is_some());
        assert!(q
            .class_change(AppClass::Sensitive, 4, &p)
            .unwrap()
            .contains("critical size 4"));
        assert_eq!(q.class_change(AppClass::Sensitive, 1, &p), None);
    }

    #[test]
    fn a_busy_streaming_app_is_resampled_only_when_asked() {
        let mut p = params();
        let mut m = Monitor::default();
        for _ in 0..7 {
            m.observe(&period(30.0, 0.5), &p);
        }
        assert_eq!(m.class_change(AppClass::Streaming, 0, &p), None);
        p.streaming_resample_periods = Some(8);
        assert_eq!(m.class_change(AppClass::Streaming, 0, &p), None);
        m.observe(&period(30.0, 0.5), &p);
        assert!(m
            .class_change(AppClass::Streaming, 0, &p)
            .unwrap()
            .contains("after 8 monitoring periods"));
        m.reset();
        assert_eq!(m.class_change(AppClass::Streaming, 0, &p), None);
    }
}
