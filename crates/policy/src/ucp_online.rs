//! `ucp-online`: Utility-Based Cache Partitioning as Qureshi and Patt
//! (MICRO'06) run it, from utility monitors rather than offline curves.
//! Each app's UMON (a sampled tag directory with the LLC's ways and one
//! hit counter per LRU stack position, read from the samples'
//! `umon_hits` and `umon_misses`) tells how many of its references would
//! hit with `w` ways of its own. Every `period_cycles` (UCP: 5 M cycles)
//! the lookahead algorithm hands out the ways to maximise the total hits
//! (minimise the total misses) over the counts so far, and every count
//! is halved, so that older periods weigh less. The run starts on an
//! equal split; a plan is applied only when it changes.
//!
//! The machine must provide the monitors: on the simulator a scenario
//! with `policy = "ucp-online"` turns them on; samples without them are
//! refused with [`PolicyError::MissingData`].

use cachepart_machine::{Action, Interval, Machine, Plan};
use serde::{Deserialize, Serialize};

use crate::controller::Controller;
use crate::equal_part::equal_split;
use crate::error::PolicyError;
use crate::lookahead::lookahead;
use crate::require_ways;

/// One re-plan: when, and the ways each app got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UcpDecision {
    /// The interval it followed.
    pub interval: u64,
    /// The machine's clock, in cycles.
    pub at_cycles: u64,
    /// Ways per app.
    pub ways: Vec<u32>,
    /// The plan applied, as `Plan` prints it.
    pub plan: String,
}

/// UCP on utility monitors (see the module docs).
pub struct UcpOnline {
    period_cycles: u64,
    ways: u32,
    /// Per app: decayed hits per stack position, and decayed misses.
    hits: Vec<Vec<f64>>,
    misses: Vec<f64>,
    period_start: u64,
    current: Option<Plan>,
    decisions: Vec<UcpDecision>,
}

impl UcpOnline {
    /// UCP for `n_apps` apps, re-partitioning every `period_cycles`.
    pub fn new(n_apps: usize, period_cycles: u64) -> Result<UcpOnline, PolicyError> {
        if n_apps == 0 {
            return Err(PolicyError::EmptyMix);
        }
        if period_cycles == 0 {
            return Err(PolicyError::BadParameter {
                policy: "ucp-online".into(),
                name: "period_cycles".into(),
                value: "0".into(),
                expected: "at least 1 cycle".into(),
            });
        }
        Ok(UcpOnline {
            period_cycles,
            ways: 0,
            hits: vec![Vec::new(); n_apps],
            misses: vec![0.0; n_apps],
            period_start: 0,
            current: None,
            decisions: Vec::new(),
        })
    }

    /// Every re-plan so far.
    pub fn decisions(&self) -> &[UcpDecision] {
        &self.decisions
    }

    /// Per app, the misses it would have with `1..=ways` ways of its own
    /// (the counts so far).
    fn miss_curves(&self) -> Vec<Vec<f64>> {
        let w = self.ways as usize;
        self.hits
            .iter()
            .zip(&self.misses)
            .map(|(h, &m)| {
                let total: f64 = h.iter().sum::<f64>() + m;
                let mut hit = 0.0;
                (0..w)
                    .map(|p| {
                        hit += h.get(p).copied().unwrap_or(0.0);
                        total - hit
                    })
                    .collect()
            })
            .collect()
    }
}

impl Controller for UcpOnline {
    fn name(&self) -> &str {
        "ucp-online"
    }

    fn start(&mut self, machine: &mut dyn Machine) -> Result<Vec<Action>, PolicyError> {
        self.ways = machine.platform().ways;
        require_ways(self.hits.len(), self.ways, "ucp-online")?;
        for h in &mut self.hits {
            *h = vec![0.0; self.ways as usize];
        }
        let plan = Plan::from_way_counts(&equal_split(self.hits.len(), self.ways));
        self.current = Some(plan.clone());
        Ok(vec![Action::Apply(plan)])
    }

    fn on_interval(&mut self, iv: &Interval) -> Result<Vec<Action>, PolicyError> {
        for s in iv.samples.iter().filter(|s| s.ran) {
            let Some(h) = self.hits.get_mut(s.app) else {
                continue;
            };
            if s.umon_hits.is_empty() {
                return Err(PolicyError::MissingData {
                    policy: "ucp-online".into(),
                    what: "utility monitors (UMON counts in the samples); this machine has none"
                        .into(),
                });
            }
            for (acc, &x) in h.iter_mut().zip(&s.umon_hits) {
                *acc += x;
            }
            self.misses[s.app] += s.umon_misses;
        }
        if iv.end_cycles.saturating_sub(self.period_start) < self.period_cycles {
            return Ok(Vec::new());
        }
        self.period_start = iv.end_cycles;
        let alloc = lookahead(&self.miss_curves(), self.ways as usize);
        for (h, m) in self.hits.iter_mut().zip(&mut self.misses) {
            h.iter_mut().for_each(|x| *x /= 2.0);
            *m /= 2.0;
        }
        let ways: Vec<u32> = alloc.iter().map(|&w| w as u32).collect();
        let plan = Plan::from_way_counts(&ways);
        if self.current.as_ref() == Some(&plan) {
            return Ok(Vec::new());
        }
        self.decisions.push(UcpDecision {
            interval: iv.index,
            at_cycles: iv.end_cycles,
            ways,
            plan: plan.to_string(),
        });
        self.current = Some(plan.clone());
        Ok(vec![Action::Apply(plan)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_machine::Sample;
    use cachepart_testkit::FixedMachine;

    fn interval(index: u64, end: u64, per_app: &[(Vec<f64>, f64)]) -> Interval {
        Interval {
            index,
            end_cycles: end,
            samples: per_app
                .iter()
                .enumerate()
                .map(|(app, (h, m))| Sample {
                    app,
                    ran: true,
                    cycles: 1e6,
                    umon_hits: h.clone(),
                    umon_misses: *m,
                    ..Sample::default()
                })
                .collect(),
            ..Interval::default()
        }
    }

    #[test]
    fn ways_go_where_the_monitors_count_hits() {
        // 4 ways, two apps: app 0's hits sit at stack positions 0..3
        // (it gains from every way), app 1's only at position 0 and the
        // rest miss (a stream): the lookahead gives app 0 three ways.
        let mut m = FixedMachine::new(Vec::new(), 4);
        let mut c = UcpOnline::new(2, 2_000_000).unwrap();
        let first = c.start(&mut m).unwrap();
        assert_eq!(first, vec![Action::Apply(Plan::from_way_counts(&[2, 2]))]);
        let counts = [
            (vec![100.0, 90.0, 80.0, 70.0], 10.0),
            (vec![50.0, 0.0, 0.0, 0.0], 500.0),
        ];
        assert!(c
            .on_interval(&interval(0, 1_000_000, &counts))
            .unwrap()
            .is_empty());
        let acts = c.on_interval(&interval(1, 2_000_000, &counts)).unwrap();
        assert_eq!(acts, vec![Action::Apply(Plan::from_way_counts(&[3, 1]))]);
        assert_eq!(c.decisions()[0].ways, vec![3, 1]);
        // the same counts again: the same plan, not applied twice
        assert!(c
            .on_interval(&interval(2, 4_000_000, &counts))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn older_periods_weigh_half() {
        let mut m = FixedMachine::new(Vec::new(), 4);
        let mut c = UcpOnline::new(2, 1).unwrap();
        c.start(&mut m).unwrap();
        let a = [
            (vec![100.0, 90.0, 80.0, 70.0], 10.0),
            (vec![50.0, 0.0, 0.0, 0.0], 500.0),
        ];
        c.on_interval(&interval(0, 1, &a)).unwrap();
        // the phases swap: after one period the halved old counts lose
        let b = [
            (vec![50.0, 0.0, 0.0, 0.0], 500.0),
            (vec![300.0, 270.0, 240.0, 210.0], 30.0),
        ];
        let acts = c.on_interval(&interval(1, 2, &b)).unwrap();
        assert_eq!(acts, vec![Action::Apply(Plan::from_way_counts(&[1, 3]))]);
    }

    #[test]
    fn a_machine_without_monitors_and_bad_parameters_are_refused() {
        let mut m = FixedMachine::new(Vec::new(), 4);
        let mut c = UcpOnline::new(2, 10).unwrap();
        c.start(&mut m).unwrap();
        let e = c
            .on_interval(&interval(0, 5, &[(vec![], 0.0), (vec![], 0.0)]))
            .unwrap_err();
        assert!(e.to_string().contains("utility monitors"), "{e}");
        assert!(UcpOnline::new(2, 0).is_err());
        assert!(matches!(UcpOnline::new(0, 10), Err(PolicyError::EmptyMix)));
        let mut tiny = FixedMachine::new(Vec::new(), 1);
        assert!(UcpOnline::new(2, 10).unwrap().start(&mut tiny).is_err());
    }
}
