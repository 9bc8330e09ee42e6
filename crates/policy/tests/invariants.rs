//! The invariant suite of the static policies: for random mixes on the
//! fixed test machine, every policy's plan is valid for the platform, its
//! clusters are disjoint where the policy is strict, all ways are used
//! where it promises so, and deciding twice on the same input gives the
//! same plan (checks in `cachepart_testkit::invariants`).

use cachepart_machine::{AppCurves, Machine};
use cachepart_policy::{Dunn, EqualPart, Kpart, Lfoc, LfocPlus, Policy, Stock, YuPetrov};
use cachepart_testkit::invariants::{check_deterministic, check_plan, Promises};
use cachepart_testkit::{random_curves, FixedMachine};
use proptest::prelude::*;

/// Decides twice on fresh machines and checks both plans.
fn check(
    make: &dyn Fn() -> Box<dyn Policy>,
    curves: &[AppCurves],
    ways: usize,
    bw: Option<f64>,
    promises: Promises,
) -> Result<(), TestCaseError> {
    let machine = || {
        let m = FixedMachine::new(curves.to_vec(), ways as u32);
        match bw {
            Some(b) => m.with_bandwidth(b),
            None => m,
        }
    };
    let mut m = machine();
    let plan = make().decide(&mut m).unwrap();
    let name = make().name().to_string();
    check_plan(&plan, curves.len(), m.platform(), promises)
        .map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
    let again = make().decide(&mut machine()).unwrap();
    check_deterministic(&plan, &again).map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
    Ok(())
}

const STRICT: Promises = Promises {
    disjoint: true,
    all_ways: false,
    max_clusters: None,
};
const STRICT_ALL_WAYS: Promises = Promises {
    disjoint: true,
    all_ways: true,
    max_clusters: None,
};

proptest! {
    #[test]
    fn kpart((curves, ways) in random_curves(1, 20), bw in proptest::option::of(1.0f64..5000.0)) {
        check(&|| Box::new(Kpart), &curves, ways, bw, STRICT_ALL_WAYS)?;
    }

    #[test]
    fn lfoc((curves, ways) in random_curves(1, 24)) {
        check(&|| Box::new(Lfoc::default()), &curves, ways, None, STRICT)?;
    }

    #[test]
    fn lfoc_plus((curves, ways) in random_curves(1, 24)) {
        check(&|| Box::new(LfocPlus::default()), &curves, ways, None, STRICT)?;
    }

    #[test]
    fn yu_petrov((curves, ways) in random_curves(1, 11)) {
        prop_assume!(curves.len() <= ways);
        check(&|| Box::new(YuPetrov), &curves, ways, None, STRICT_ALL_WAYS)?;
    }

    #[test]
    fn dunn((mut curves, ways) in random_curves(1, 20),
            stalls in proptest::collection::vec(0.0f64..1.0, 20)) {
        for (c, s) in curves.iter_mut().zip(&stalls) {
            c.stalls_l2_miss = Some(vec![*s; ways]);
        }
        let promises = Promises { max_clusters: Some(8), ..Promises::default() };
        check(&|| Box::new(Dunn::default()), &curves, ways, None, promises)?;
    }

    #[test]
    fn equal_part((curves, ways) in random_curves(1, 16)) {
        prop_assume!(curves.len() <= ways);
        check(&|| Box::new(EqualPart), &curves, ways, None, STRICT_ALL_WAYS)?;
    }

    #[test]
    fn stock((curves, ways) in random_curves(1, 24)) {
        let promises = Promises { max_clusters: Some(1), ..Promises::default() };
        check(&|| Box::new(Stock), &curves, ways, None, promises)?;
    }
}
