//! The scheduling-quantum settings of the best-fairness search
//! ([`crate::run::throttle::search`]): Zhang et al.'s software comparison,
//! scheduling-quantum adjustment with an idle process.
//!
//! The paper's Table 2 gives each setting as run/idle milliseconds: the
//! app runs 100 ms, then an idle process holds its core for 5 to 40 ms
//! ("100/30"); at most one app of a pair has an idle process ("NA" for
//! the other), and they "manually try all possible ... idle process
//! running time". Here one app at a time gets an idle process, with a
//! run length of `run_cycles` (a simulated run lasts milliseconds, not the
//! paper's minutes, so the 100 ms turn is scaled down) and an idle length
//! of 5%, 10%, ..., 100% of it ([`IDLE_PERCENT`]): the paper's settings
//! (5, 20, 25, 30, 40) and every step of 5 between and above them, up to
//! the app holding its core half of the time.

use cachepart_sim::system::IdleQuantum;

/// Idle lengths tried, in percent of the run length.
pub const IDLE_PERCENT: [u64; 20] = [
    5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95, 100,
];

/// The default run length of a turn, in cycles (the paper's 100 ms turn,
/// scaled to runs of a few million cycles: 10 turns in 4 M cycles).
pub const DEFAULT_RUN_CYCLES: u64 = 400_000;

/// Every per-app quantum vector the search tries for `n` apps: one app
/// with an idle process of each length of [`IDLE_PERCENT`], the others
/// without, app by app.
pub fn quantum_vectors(n: usize, run_cycles: u64) -> Vec<Vec<Option<IdleQuantum>>> {
    (0..n)
        .flat_map(|app| {
            IDLE_PERCENT.iter().map(move |&p| {
                let mut v = vec![None; n];
                v[app] = Some(IdleQuantum {
                    run_cycles,
                    idle_cycles: (run_cycles * p / 100).max(1),
                });
                v
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_app_at_a_time_with_the_papers_settings() {
        let v = quantum_vectors(2, 100);
        assert_eq!(v.len(), 40);
        assert!(v
            .iter()
            .all(|q| q.iter().filter(|x| x.is_some()).count() == 1));
        // The paper's Table 2 settings are among them, for either app.
        for idle in [5, 20, 25, 30, 40] {
            let q = Some(IdleQuantum {
                run_cycles: 100,
                idle_cycles: idle,
            });
            assert!(v.contains(&vec![q, None]) && v.contains(&vec![None, q]));
        }
        assert!(v.iter().flatten().flatten().all(|q| q.check().is_ok()));
    }
}
