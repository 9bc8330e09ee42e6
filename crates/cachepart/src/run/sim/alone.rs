//! Each app of a scenario alone on the same platform, for its slowdown:
//! run as the scenario's method runs the mix (to completion, for a fixed
//! time, or to a number of completed runs), at full speed with the run's
//! prefetchers and without an idle process. The runs go in parallel, each
//! its own simulation.

use cachepart_sim::system::{run_alone, run_alone_for, run_alone_runs, AppTotals, SystemError};
use rayon::prelude::*;

use crate::registry::method::{gmean, RunMethod};
use crate::spec::scenario::Scenario;

/// Each app's totals alone and, under the restart method, the geometric
/// mean of its runs' cycles alone; in scenario order.
pub(super) fn alone_totals(
    scenario: &Scenario,
) -> Result<Vec<(AppTotals, Option<f64>)>, SystemError> {
    let file = &scenario.file;
    scenario
        .apps
        .par_iter()
        .map(|a| {
            // Standalone performance is the app's at full speed
            // with the run's prefetchers (Zhang et al.'s
            // normalisation), however the mix throttles it, and
            // without an idle process.
            let mut a = a.clone();
            a.duty = cachepart_machine::Duty::FULL;
            a.prefetch_word = None;
            a.idle_quantum = None;
            a
        })
        .map(|a| match file.method {
            RunMethod::FixedTime { cycles } => run_alone_for(
                &scenario.platform,
                &a,
                cycles,
                file.interval_cycles,
                file.seed,
            )
            .map(|t| (t, None)),
            RunMethod::Restart { completions } => run_alone_runs(
                &scenario.platform,
                &a,
                completions,
                file.interval_cycles,
                file.seed,
            )
            .map(|(t, runs)| (t, gmean(&runs))),
            RunMethod::ToCompletion {} => {
                run_alone(&scenario.platform, &a, None, file.seed).map(|t| (t, None))
            }
        })
        .collect()
}
