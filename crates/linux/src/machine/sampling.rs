//! One interval's [`Sample`]s of a set of apps on Linux: their threads
//! born since moved into their groups, their counters read (perf, or
//! scripted), their LLC occupancy and memory bytes read from resctrl's
//! `mon_data`. Shared by the launcher ([`super::LinuxMachine`]) and the
//! adopter ([`super::Adopter`]).

use std::time::Duration;

use super::groups::Groups;
use crate::error::Result;
use crate::perf::CounterSource;
use cachepart_machine::Sample;

/// The samples of apps `0..apps` over the last `elapsed`, mix order. An
/// app ran during the interval when its counters saw cycles.
pub(super) fn read_samples(
    groups: &mut Groups,
    counters: &mut dyn CounterSource,
    apps: usize,
    elapsed: Duration,
) -> Result<Vec<Sample>> {
    let mut samples = Vec::with_capacity(apps);
    for app in 0..apps {
        groups.resync(app)?;
        let c = counters.read(app, elapsed)?;
        let (occupancy, bytes) = groups.monitor(app)?;
        let (umon_hits, umon_misses) = counters.utility(app).unwrap_or_default();
        samples.push(Sample {
            app,
            instructions: c.instructions,
            cycles: c.cycles,
            llc_references: c.llc_references,
            llc_misses: c.llc_misses,
            l2_miss_stall_cycles: c.l2_miss_stall_cycles.unwrap_or(0.0),
            llc_occupancy_bytes: occupancy.unwrap_or(0) as f64,
            memory_bytes: bytes.unwrap_or(0) as f64,
            ran: c.cycles > 0.0,
            umon_hits,
            umon_misses,
            ..Sample::default()
        });
    }
    Ok(samples)
}
