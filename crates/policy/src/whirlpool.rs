//! `whirlpool` and `whirlpool-c`: no partitioning, with the split of the
//! shared cache estimated from MPKI (Whirlpool) or MPKC (Whirlpool-C).
//!
//! Both give the plan of `stock` (one cluster holding every app and every
//! way); they differ only in the [`ShareModel`] the plan carries, which only
//! the table-driven model reads. MPKC is that model's default share model
//! (PBBCache evaluates every shared cluster on MPKC), so `whirlpool-c`'s plan
//! *is* `stock`'s plan and gives `stock`'s results on every mix; `whirlpool`
//! differs from `stock` only where the MPKI split differs from the MPKC one.
//! On machines that measure rather than estimate, both equal `stock`.
//! `docs/policies/whirlpool.md` has the numbers.

use crate::{Policy, PolicyError};
use cachepart_machine::{Machine, Plan, ShareModel};

/// Unpartitioned sharing with a chosen estimate of the split.
#[derive(Clone, Debug)]
pub struct Whirlpool {
    /// The curve the split is estimated from.
    pub share_model: ShareModel,
}

impl Policy for Whirlpool {
    fn name(&self) -> &str {
        match self.share_model {
            ShareModel::Llcmpki => "whirlpool",
            ShareModel::Llcmpkc => "whirlpool-c",
        }
    }

    fn decide(&mut self, machine: &mut dyn Machine) -> Result<Plan, PolicyError> {
        let ways = machine.platform().ways;
        let n = machine.app_count()?;
        if n == 0 {
            return Err(PolicyError::EmptyMix);
        }
        let mut plan = Plan::shared_all(n, ways);
        plan.share_model = self.share_model;
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Stock;
    use cachepart_machine::AppCurves;
    use cachepart_profile::{effective_ways, Mix};
    use cachepart_testkit::FixedMachine;

    /// Two apps on two ways whose MPKC and MPKI curves rank them the other
    /// way round: A misses more per cycle, B more per instruction.
    fn crossed() -> Vec<AppCurves> {
        let one = vec![1.0, 1.0];
        vec![
            AppCurves::new("a", one.clone(), one.clone(), vec![3.0, 1.0], one.clone()),
            AppCurves::new("b", one.clone(), vec![3.0, 1.0], one.clone(), one),
        ]
    }

    fn plan_of(policy: &mut dyn Policy, curves: Vec<AppCurves>) -> Plan {
        let mut m = FixedMachine::new(curves, 2);
        policy.decide(&mut m).unwrap()
    }

    #[test]
    fn whirlpool_c_plan_is_stocks_plan() {
        let stock = plan_of(&mut Stock, crossed());
        let c = plan_of(
            &mut Whirlpool {
                share_model: ShareModel::Llcmpkc,
            },
            crossed(),
        );
        let i = plan_of(
            &mut Whirlpool {
                share_model: ShareModel::Llcmpki,
            },
            crossed(),
        );
        // Identical plans, share model included: the table model cannot tell
        // whirlpool-c from stock on any mix.
        assert_eq!(c, stock);
        assert_eq!(stock.share_model, ShareModel::Llcmpkc);
        // whirlpool is the same clusters with the other share model.
        assert_ne!(i, stock);
        assert_eq!(i.clusters, stock.clusters);
        assert_eq!(i.share_model, ShareModel::Llcmpki);
    }

    /// Worked by hand from the split (`docs/profile-model.md`): way 1 is
    /// split 3:1 by the curves at one way; way 2 by the curves read at the
    /// fractional sizes so far (A at 0.75 ways: 0.25 x 3 + 0.75 x 1 = 1.5,
    /// B at 0.25 ways: 1), 1.5:1. So the app with the higher curve ends
    /// with 0.75 + 0.6 = 1.35 ways and the other with 0.25 + 0.4 = 0.65.
    #[test]
    fn the_two_share_models_split_a_crossed_mix_opposite_ways() {
        let mix = Mix::from_curves(crossed()).unwrap();
        let close =
            |got: &[f64], want: [f64; 2]| got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-12);
        let stock = effective_ways(&mix, &plan_of(&mut Stock, crossed()));
        let c = effective_ways(
            &mix,
            &plan_of(
                &mut Whirlpool {
                    share_model: ShareModel::Llcmpkc,
                },
                crossed(),
            ),
        );
        let i = effective_ways(
            &mix,
            &plan_of(
                &mut Whirlpool {
                    share_model: ShareModel::Llcmpki,
                },
                crossed(),
            ),
        );
        assert!(close(&stock, [1.35, 0.65]), "{stock:?}");
        assert!(close(&c, [1.35, 0.65]), "{c:?}");
        assert!(close(&i, [0.65, 1.35]), "{i:?}");
    }

    #[test]
    fn an_empty_mix_is_refused() {
        let mut m = FixedMachine::new(vec![], 4);
        let mut p = Whirlpool {
            share_model: ShareModel::Llcmpkc,
        };
        assert!(matches!(p.decide(&mut m), Err(PolicyError::EmptyMix)));
    }
}
