//! One app's sampling mode (LFOC section 4.2): the app alone in a sampling
//! partition that grows one way at a time from 1, the other apps sharing
//! the complementary ways; IPC, LLC misses per kilo-cycle and the miss rate
//! measured over a window of the app's instructions at each size; an early
//! stop when more space would tell nothing (a low miss rate, or a
//! memory-intensive app that gains next to nothing from a way: streaming);
//! then the curves over every way count, the sizes not sampled extrapolated
//! from the last one, as the paper does.

use cachepart_machine::{AppCurves, Plan, Sample};
use serde::{Deserialize, Serialize};

use super::params::LfocOnlineParams;

/// Why a sampling session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// The miss rate fell below `low_miss_rate`.
    LowMissRate,
    /// Memory intensive and one more way gained less than
    /// `streaming_gain`.
    StreamingLike,
    /// Every size up to the largest sampling partition was measured.
    FullSweep,
}

/// One measured size.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Ways of the sampling partition.
    pub ways: u32,
    /// Instructions per cycle.
    pub ipc: f64,
    /// LLC misses per kilo-cycle.
    pub llc_mpkc: f64,
    /// LLC misses over LLC references.
    pub miss_rate: f64,
}

/// A running sampling session.
#[derive(Clone, Debug, PartialEq)]
pub struct Session {
    /// The app sampled.
    pub app: usize,
    /// The current size of its partition.
    pub ways: u32,
    /// The sizes measured so far.
    pub points: Vec<Point>,
    instructions: f64,
    cycles: f64,
    misses: f64,
    references: f64,
}

/// What one interval did to a session.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Still measuring this size.
    Measuring,
    /// This size is measured; the partition grows to `ways`.
    Grow(u32),
    /// The session is over.
    Done(StopReason),
}

impl Session {
    /// A session for `app`, starting at one way.
    pub fn new(app: usize) -> Session {
        Session {
            app,
            ways: 1,
            points: Vec::new(),
            instructions: 0.0,
            cycles: 0.0,
            misses: 0.0,
            references: 0.0,
        }
    }

    /// The plan while sampling: the app alone in its `ways` ways (the
    /// lowest), every other app of `n_apps` in the rest.
    pub fn plan(&self, n_apps: usize, total_ways: u32) -> Plan {
        let others: Vec<usize> = (0..n_apps).filter(|&a| a != self.app).collect();
        let mut clusters = vec![(vec![self.app], self.ways)];
        if !others.is_empty() {
            clusters.push((others, total_ways - self.ways));
        }
        Plan::from_clusters(clusters)
    }

    /// The largest sampling partition: every way but one for the others
    /// (all of them when the app is alone).
    fn max_ways(n_apps: usize, total_ways: u32) -> u32 {
        if n_apps > 1 {
            total_ways.saturating_sub(1).max(1)
        } else {
            total_ways
        }
    }

    /// Adds the app's sample of one interval.
    pub fn observe(
        &mut self,
        s: &Sample,
        p: &LfocOnlineParams,
        n_apps: usize,
        total_ways: u32,
    ) -> Step {
        if !s.ran {
            return Step::Measuring;
        }
        self.instructions += s.instructions;
        self.cycles += s.cycles;
        self.misses += s.llc_misses;
        self.references += s.llc_references;
        if self.instructions < p.window_instructions {
            return Step::Measuring;
        }
        let point = Point {
            ways: self.ways,
            ipc: ratio(self.instructions, self.cycles),
            llc_mpkc: 1000.0 * ratio(self.misses, self.cycles),
            miss_rate: ratio(self.misses, self.references),
        };
        let gain = self
            .points
            .last()
            .map(|prev| ratio(point.ipc, prev.ipc) - 1.0);
        self.points.push(point);
        self.instructions = 0.0;
        self.cycles = 0.0;
        self.misses = 0.0;
        self.references = 0.0;
        if point.miss_rate < p.low_miss_rate {
            return Step::Done(StopReason::LowMissRate);
        }
        if point.llc_mpkc >= p.high_threshold && gain.is_some_and(|g| g < p.streaming_gain) {
            return Step::Done(StopReason::StreamingLike);
        }
        if self.ways >= Self::max_ways(n_apps, total_ways) {
            return Step::Done(StopReason::FullSweep);
        }
        self.ways += 1;
        Step::Grow(self.ways)
    }

    /// The app's curves over `1..=total_ways` from the measured sizes:
    /// sizes above the last measured one repeat its values (the paper
    /// approximates larger sizes with the last IPC sample).
    pub fn curves(&self, name: &str, total_ways: u32) -> AppCurves {
        let at = |w: u32| {
            let i = self.points.partition_point(|q| q.ways < w);
            self.points
                .get(i)
                .filter(|q| q.ways == w)
                .or(self.points.last())
                .copied()
                .unwrap_or(Point {
                    ways: w,
                    ipc: 1.0,
                    llc_mpkc: 0.0,
                    miss_rate: 0.0,
                })
        };
        let pts: Vec<Point> = (1..=total_ways).map(at).collect();
        let ipc: Vec<f64> = pts.iter().map(|q| q.ipc.max(f64::MIN_POSITIVE)).collect();
        let mpkc: Vec<f64> = pts.iter().map(|q| q.llc_mpkc).collect();
        let zeros = vec![0.0; pts.len()];
        AppCurves::new(name, ipc, mpkc.clone(), mpkc, zeros)
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(ipc: f64, mpkc: f64, miss_rate: f64) -> Sample {
        let cycles = 1e6;
        let misses = mpkc * cycles / 1000.0;
        Sample {
            instructions: ipc * cycles,
            cycles,
            llc_misses: misses,
            llc_references: if miss_rate > 0.0 {
                misses / miss_rate
            } else {
                1e9
            },
            ran: true,
            ..Sample::default()
        }
    }

    fn params() -> LfocOnlineParams {
        // every sample below retires at least 2e5 instructions
        LfocOnlineParams {
            window_instructions: 1e5,
            ..LfocOnlineParams::default()
        }
    }

    #[test]
    fn a_streaming_app_stops_after_two_sizes_and_a_light_one_after_one() {
        let p = params();
        let mut s = Session::new(0);
        assert_eq!(
            s.observe(&sample(0.5, 30.0, 0.95), &p, 4, 11),
            Step::Grow(2)
        );
        assert_eq!(
            s.observe(&sample(0.505, 30.0, 0.95), &p, 4, 11),
            Step::Done(StopReason::StreamingLike)
        );
        let mut l = Session::new(1);
        assert_eq!(
            l.observe(&sample(1.0, 0.1, 0.01), &p, 4, 11),
            Step::Done(StopReason::LowMissRate)
        );
        // an interval the app did not run in measures nothing
        let parked = Sample {
            ran: false,
            ..sample(1.0, 0.1, 0.01)
        };
        assert_eq!(Session::new(2).observe(&parked, &p, 4, 11), Step::Measuring);
    }

    #[test]
    fn a_sensitive_app_sweeps_and_its_curve_extrapolates_the_last_size() {
        let p = params();
        let mut s = Session::new(0);
        let mut steps = Vec::new();
        for w in 1..=3u32 {
            steps.push(s.observe(&sample(0.2 * f64::from(w), 20.0, 0.5), &p, 2, 4));
        }
        assert_eq!(
            steps,
            [
                Step::Grow(2),
                Step::Grow(3),
                Step::Done(StopReason::FullSweep)
            ]
        );
        let c = s.curves("x", 4);
        assert_eq!(c.ipc.len(), 4);
        assert!((c.ipc[3] - c.ipc[2]).abs() < 1e-12, "{:?}", c.ipc);
        assert!((c.slowdown[0] - 3.0).abs() < 1e-9, "{:?}", c.slowdown);
        let plan = s.plan(2, 4);
        assert_eq!(plan.clusters[0].apps, [0]);
        assert_eq!(plan.clusters[0].mask.count(), 3);
        assert_eq!(plan.clusters[1].mask.count(), 1);
    }
}
