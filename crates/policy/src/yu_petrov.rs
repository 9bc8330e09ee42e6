//! `yu-petrov`: strict partitioning driven by how much memory bandwidth each
//! extra way saves (Yu and Petrov), as PBBCache runs it.
//!
//! Every app starts at one way. The saving of app `a` at table position `i`
//! is `inc_a[i] = bw_a(i + 1) - bw_a(i + 2)` (MB/s saved by growing from
//! `i + 1` to `i + 2` ways). While some positive saving remains at a
//! position `i` below the number of free ways, the largest one (the first
//! found, apps in order and positions ascending, on ties) sets its app to
//! `i + 1` ways, and the savings `inc_a[0..=i]` are cleared. PBBCache sets
//! the app to `i + 1` ways, not `i + 2`, although the saving is the one of
//! the `(i + 2)`-th way; that quirk defines the reference results and is
//! kept. Ways left over when no positive saving remains are handed out one
//! at a time round-robin from app 0 (PBBCache spreads them with a float
//! division and truncates; both agree when one way is left, the only case in
//! the reference runs).

use crate::{require_ways, Policy, PolicyError};
use cachepart_machine::{AppCurves, Machine, Plan};

/// Bandwidth-saving way allocation (Yu and Petrov).
#[derive(Clone, Debug, Default)]
pub struct YuPetrov;

/// Way counts per app for `curves` over `ways` ways (requires
/// `1 <= curves.len() <= ways` and curves of at least `ways` entries).
pub fn yu_petrov_ways(curves: &[AppCurves], ways: usize) -> Vec<usize> {
    let n = curves.len();
    let steps = ways.saturating_sub(1);
    // inc[a * steps + i] = bw_a(i + 1) - bw_a(i + 2)
    let mut inc = vec![0.0f64; n * steps];
    for (a, c) in curves.iter().enumerate() {
        let bw = &c.bandwidth_mbps;
        for i in 0..steps {
            inc[a * steps + i] = bw[i] - bw[i + 1];
        }
    }
    let mut alloc = vec![1usize; n];
    let mut avail = ways - n;
    while avail > 0 {
        let mut best: Option<(usize, usize, f64)> = None;
        for a in 0..n {
            for i in 0..avail.min(steps) {
                let b = inc[a * steps + i];
                let better = match best {
                    None => b > 0.0,
                    Some((_, _, m)) => b > m,
                };
                if better {
                    best = Some((a, i + 1, b));
                }
            }
        }
        let Some((a, w, _)) = best else { break };
        inc[a * steps..a * steps + w].fill(0.0);
        // w <= avail and alloc[a] >= 1, so this never underflows.
        avail = avail + alloc[a] - w;
        alloc[a] = w;
    }
    let mut i = 0;
    while avail > 0 {
        alloc[i % n] += 1;
        avail -= 1;
        i += 1;
    }
    alloc
}

impl Policy for YuPetrov {
    fn name(&self) -> &str {
        "yu-petrov"
    }

    fn decide(&mut self, machine: &mut dyn Machine) -> Result<Plan, PolicyError> {
        let ways = machine.platform().ways;
        let curves = machine.alone_curves()?;
        require_ways(curves.len(), ways, "yu-petrov")?;
        let alloc = yu_petrov_ways(curves, ways as usize);
        let counts: Vec<u32> = alloc.iter().map(|&w| w as u32).collect();
        Ok(Plan::from_way_counts(&counts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_testkit::{curves_from_bw, FixedMachine};

    #[test]
    fn largest_saving_first_and_the_quirk() {
        // app 0 saves 100 MB/s going from 1 to 2 ways (position 0): it is
        // set to 0 + 1 = 1 way (the quirk), and that saving is cleared.
        // app 1 saves 50 at position 1 (2 -> 3 ways): set to 2 ways.
        let a = curves_from_bw("a", &[300.0, 200.0, 200.0, 200.0]);
        let b = curves_from_bw("b", &[300.0, 300.0, 250.0, 250.0]);
        // free ways 2; round 1: best is a@0 (100) -> a = 1 way, free stays 2;
        // round 2: best is b@1 (50) -> b = 2 ways, free 1; round 3: nothing
        // positive below position 1 -> leftover 1 way to app 0.
        assert_eq!(yu_petrov_ways(&[a, b], 4), vec![2, 2]);
    }

    #[test]
    fn flat_bandwidth_splits_round_robin() {
        let a = curves_from_bw("a", &[1.0; 5]);
        let b = curves_from_bw("b", &[1.0; 5]);
        assert_eq!(yu_petrov_ways(&[a, b], 5), vec![3, 2]);
    }

    #[test]
    fn rejects_empty_and_oversubscribed_mixes() {
        let mut m = FixedMachine::new(vec![], 4);
        assert!(matches!(
            YuPetrov.decide(&mut m),
            Err(PolicyError::EmptyMix)
        ));
        let c = curves_from_bw("a", &[1.0, 1.0]);
        let mut m = FixedMachine::new(vec![c.clone(), c.clone(), c], 2);
        assert!(matches!(
            YuPetrov.decide(&mut m),
            Err(PolicyError::NotEnoughWays { .. })
        ));
    }
}
