//! The search's options checked against its scenario before anything
//! runs (every refusal names the option).

use cachepart_sim::memory::AllocatorKind;
use cachepart_sim::system::IdleQuantum;

use super::{platform_colors, SearchOptions};
use crate::error::Error;
use crate::spec::scenario::Scenario;

/// Refuses what the search cannot run; returns the platform's duty-cycle
/// steps, and its color count when the coloring stage is on.
pub(super) fn check(
    scenario: &Scenario,
    opts: &SearchOptions,
) -> Result<(u32, Option<u32>), Error> {
    let whence = &scenario.name;
    let Some(modulation) = scenario.platform.clock_modulation else {
        return Err(Error::config(
            format_args!("scenario {whence}"),
            "",
            format_args!(
                "platform {} has no duty-cycle modulation (no [clock-modulation] section)",
                scenario.platform.name
            ),
        ));
    };
    let steps = modulation.steps;
    if scenario.policy == Some(crate::Algorithm::ThrottleOnline) {
        return Err(Error::config(
            format_args!("scenario {whence}"),
            "policy",
            "the search sets duty cycles and prefetchers itself; run it on the scenario without policy = \"throttle-online\" and its [throttle-online] section",
        ));
    }
    if opts.prefetchers && scenario.platform.prefetchers.run_word.is_none() {
        return Err(Error::config(
            format_args!("scenario {whence}"),
            "prefetchers",
            "the hybrid search tunes prefetchers, but the scenario runs without them (set prefetchers = \"platform\")",
        ));
    }
    if scenario.apps.len() < 2 {
        return Err(Error::config(
            format_args!("scenario {whence}"),
            "app",
            "fairness needs at least two apps",
        ));
    }
    if let Some(i) = scenario
        .apps
        .iter()
        .position(|a| !a.duty.is_full() || a.prefetch_word.is_some() || a.idle_quantum.is_some())
    {
        return Err(Error::config(
            format_args!("scenario {whence}"),
            format!("app[{i}] ({})", scenario.apps[i].name),
            "the search sets duty cycles, prefetchers and idle processes itself; remove the app's duty, prefetchers and quantum",
        ));
    }
    if opts.quantum {
        IdleQuantum {
            run_cycles: opts.quantum_run_cycles,
            idle_cycles: opts.quantum_run_cycles,
        }
        .check()
        .map_err(|(_, why)| Error::Usage(format!("quantum-run-cycles: {why}")))?;
        let cores: Vec<u32> = scenario.apps.iter().map(|a| a.core).collect();
        if (1..cores.len()).any(|i| cores[..i].contains(&cores[i])) {
            return Err(Error::config(
                format_args!("scenario {whence}"),
                "app.core",
                "quantum adjustment gives one app an idle process on its core, so every app needs a core of its own",
            ));
        }
    }
    if !opts.coloring {
        return Ok((steps, None));
    }
    if scenario.platform.memory.allocator == AllocatorKind::Buddy {
        return Err(Error::config(
            format_args!("scenario {whence}"),
            "allocator",
            "the page-coloring stage needs a color-aware allocator in every run (set allocator = \"tam\")",
        ));
    }
    if let Some(i) = scenario.colors.iter().position(Option::is_some) {
        return Err(Error::config(
            format_args!("scenario {whence}"),
            format!("app[{i}] ({}).colors", scenario.apps[i].name),
            "the page-coloring stage sets the colors itself; remove the app's colors",
        ));
    }
    if scenario.coloring.is_some() {
        return Err(Error::config(
            format_args!("scenario {whence}"),
            "coloring",
            "the page-coloring stage sets static colors; remove the [coloring] policy",
        ));
    }
    platform_colors(scenario).map(|c| (steps, Some(c)))
}
