//! `dunn-dynamic`: Dunn's clustering as the LFOC paper ran it online
//! (section 5.2, a user-level implementation "that only requires the
//! continuous monitorization of the STALLS_L2_MISS performance event"):
//! every `period_cycles`, each app's fraction of cycles stalled on L2
//! misses over the period is measured, and [`dunn_plan`] (k-means on the
//! normalised fractions, the Dunn index choosing k, overlapping masks)
//! re-plans. Apps that did not run in the period keep their last fraction;
//! apps that never ran count as 0. A plan is applied only when it changes.

use cachepart_machine::{Action, Interval, Machine, Plan};
use serde::{Deserialize, Serialize};

use crate::controller::Controller;
use crate::dunn::dunn_plan;
use crate::error::PolicyError;

/// One re-plan: when, the fractions it saw, the plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DunnDecision {
    /// The interval it followed.
    pub interval: u64,
    /// The machine's clock, in cycles.
    pub at_cycles: u64,
    /// Each app's L2-miss stall fraction over the period.
    pub stalls: Vec<f64>,
    /// The plan applied, as `Plan` prints it.
    pub plan: String,
}

/// Dynamic Dunn (see the module docs).
pub struct DunnDynamic {
    period_cycles: u64,
    max_clusters: usize,
    ways: u32,
    /// Per app: cycles and stalled cycles of the period so far.
    acc: Vec<(f64, f64)>,
    last: Vec<f64>,
    period_start: u64,
    current: Option<Plan>,
    decisions: Vec<DunnDecision>,
}

impl DunnDynamic {
    /// Dynamic Dunn for `n_apps` apps, re-planning every `period_cycles`
    /// (the paper: 500 ms), with up to `max_clusters` clusters.
    pub fn new(
        n_apps: usize,
        period_cycles: u64,
        max_clusters: usize,
    ) -> Result<DunnDynamic, PolicyError> {
        if n_apps == 0 {
            return Err(PolicyError::EmptyMix);
        }
        let bad = |name: &str, value: String, expected: &str| PolicyError::BadParameter {
            policy: "dunn-dynamic".into(),
            name: name.into(),
            value,
            expected: expected.into(),
        };
        if period_cycles == 0 {
            return Err(bad("period_cycles", "0".into(), "at least 1 cycle"));
        }
        if max_clusters < 2 {
            return Err(bad("max_clusters", max_clusters.to_string(), "at least 2"));
        }
        Ok(DunnDynamic {
            period_cycles,
            max_clusters,
            ways: 0,
            acc: vec![(0.0, 0.0); n_apps],
            last: vec![0.0; n_apps],
            period_start: 0,
            current: None,
            decisions: Vec::new(),
        })
    }

    /// Every re-plan so far.
    pub fn decisions(&self) -> &[DunnDecision] {
        &self.decisions
    }
}

impl Controller for DunnDynamic {
    fn name(&self) -> &str {
        "dunn-dynamic"
    }

    fn start(&mut self, machine: &mut dyn Machine) -> Result<Vec<Action>, PolicyError> {
        self.ways = machine.platform().ways;
        let plan = Plan::shared_all(self.acc.len(), self.ways);
        self.current = Some(plan.clone());
        Ok(vec![Action::Apply(plan)])
    }

    fn on_interval(&mut self, iv: &Interval) -> Result<Vec<Action>, PolicyError> {
        for s in iv.samples.iter().filter(|s| s.ran) {
            if let Some(a) = self.acc.get_mut(s.app) {
                a.0 += s.cycles;
                a.1 += s.l2_miss_stall_cycles;
            }
        }
        if iv.end_cycles.saturating_sub(self.period_start) < self.period_cycles {
            return Ok(Vec::new());
        }
        self.period_start = iv.end_cycles;
        for (a, acc) in self.acc.iter_mut().enumerate() {
            if acc.0 > 0.0 {
                self.last[a] = acc.1 / acc.0;
            }
            *acc = (0.0, 0.0);
        }
        let plan = dunn_plan(&self.last, self.ways, self.max_clusters);
        if self.current.as_ref() == Some(&plan) {
            return Ok(Vec::new());
        }
        self.decisions.push(DunnDecision {
            interval: iv.index,
            at_cycles: iv.end_cycles,
            stalls: self.last.clone(),
            plan: plan.to_string(),
        });
        self.current = Some(plan.clone());
        Ok(vec![Action::Apply(plan)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{drive, Flow, Stop};
    use cachepart_testkit::{Behaviour, ScriptedMachine};

    #[test]
    fn replans_when_the_stall_fractions_change() {
        // app 0 turns from light (2% stalled) to streaming (50%) at 40
        let phases = vec![
            vec![(0, Behaviour::Light), (40, Behaviour::Streaming)],
            vec![(0, Behaviour::Sensitive)],
            vec![(0, Behaviour::Light)],
        ];
        let mut m = ScriptedMachine::new(11, phases);
        let mut c = DunnDynamic::new(3, 10_000_000, 8).unwrap();
        drive(&mut m, &mut c, Stop::After(100), &mut |_| Flow::Continue).unwrap();
        let d = c.decisions();
        assert!(d.len() >= 2, "{d:?}");
        // first plan: the sensitive app (30% stalled) apart from the two
        // light ones; after the change, app 0 leaves the light app's cluster
        let cluster_of = |plan: &str, app: usize| {
            plan.split(';')
                .position(|c| {
                    let apps = c.split('=').nth(1).unwrap();
                    apps.split(',').any(|x| {
                        x.split_once('-').map_or(x.parse() == Ok(app), |(a, b)| {
                            (a.parse::<usize>().unwrap()..=b.parse().unwrap()).contains(&app)
                        })
                    })
                })
                .unwrap()
        };
        assert_eq!(
            cluster_of(&d[0].plan, 0),
            cluster_of(&d[0].plan, 2),
            "{d:?}"
        );
        let last = d.last().unwrap();
        assert!(last.at_cycles > 40_000_000, "{d:?}");
        assert_ne!(
            cluster_of(&last.plan, 0),
            cluster_of(&last.plan, 2),
            "{d:?}"
        );
        assert!((last.stalls[0] - 0.5).abs() < 1e-9, "{d:?}");
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert!(DunnDynamic::new(2, 0, 8).is_err());
        assert!(DunnDynamic::new(2, 10, 1).is_err());
        assert!(matches!(
            DunnDynamic::new(0, 10, 8),
            Err(PolicyError::EmptyMix)
        ));
    }
}
