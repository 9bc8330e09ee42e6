//! The "add a policy" walk of `CONTRIBUTING.md`, step by step: a trivial
//! policy written against the [`Policy`] trait, run on the table-driven
//! machine ([`ProfileMachine`]) and checked by the invariants every static
//! policy passes.

use cachepart_machine::{AppCurves, Machine, Plan};
use cachepart_policy::{Policy, PolicyError};
use cachepart_profile::{Mix, ModelConfig, ProfileMachine};
use cachepart_testkit::invariants::{check_plan, Promises};

/// Step 1: the policy. It gives the first app half the ways and the rest
/// of the apps the other half, shared.
struct HalfForTheFirst;

impl Policy for HalfForTheFirst {
    fn name(&self) -> &str {
        "half-for-the-first"
    }

    fn decide(&mut self, machine: &mut dyn Machine) -> Result<Plan, PolicyError> {
        let ways = machine.platform().ways;
        let n = machine.alone_curves()?.len();
        match n {
            0 => Err(PolicyError::EmptyMix),
            1 => Ok(Plan::shared_all(1, ways)),
            _ => {
                let first = ways / 2;
                Ok(Plan::from_clusters(vec![
                    (vec![0], first),
                    ((1..n).collect(), ways - first),
                ]))
            }
        }
    }
}

fn app(name: &str, ways: usize, sensitivity: f64) -> AppCurves {
    let ipc: Vec<f64> = (1..=ways)
        .map(|w| 1.0 + sensitivity * (w as f64).ln())
        .collect();
    let mpkc: Vec<f64> = (1..=ways)
        .map(|w| 10.0 / (1.0 + sensitivity * w as f64))
        .collect();
    let bw = mpkc.iter().map(|m| m * 64.0).collect();
    AppCurves::new(name, ipc, mpkc.clone(), mpkc, bw)
}

#[test]
fn a_new_policy_runs_on_the_table_driven_machine() {
    // Step 2: a mix on the table-driven machine (here from curves; from
    // PBBCache's metrics table with `Mix::from_table` in the experiments).
    let ways = 11;
    let mix = Mix::from_curves(vec![
        app("a", ways, 0.8),
        app("b", ways, 0.1),
        app("c", ways, 0.4),
    ])
    .unwrap();
    let mut machine = ProfileMachine::new(mix, ModelConfig::default());
    // Step 3: decide, and check the plan as the invariant suite does.
    let mut policy = HalfForTheFirst;
    let plan = policy.decide(&mut machine).unwrap();
    let promises = Promises {
        disjoint: true,
        all_ways: true,
        max_clusters: Some(2),
    };
    check_plan(&plan, 3, machine.platform(), promises).unwrap();
    assert_eq!(plan.clusters[0].apps, vec![0]);
    assert_eq!(plan.clusters[0].mask.0.count_ones(), 5);
    assert_eq!(plan.clusters[1].apps, vec![1, 2]);
    // Step 4: the plan is applied and evaluated like any other.
    machine.apply(&plan).unwrap();
    assert_eq!(policy.name(), "half-for-the-first");
}
