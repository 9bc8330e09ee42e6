//! Alone runs: one app by itself on core 0 of the same simulated platform,
//! with the whole LLC or its first `n` ways. They define each app's
//! slowdown (IPC alone / IPC shared) and its curves over way counts.

use cachepart_units::WayMask;
use rayon::prelude::*;

use super::app::{AppSpec, AppTotals};
use super::error::SystemError;
use super::multicore::System;
use super::platform::PlatformConfig;

/// Global-time interval of alone runs (only bounds the loop; the totals do
/// not depend on it).
const ALONE_INTERVAL: u64 = 1 << 40;

/// Runs `app` alone on core 0 of `platform` until it finishes, with the
/// whole LLC (`None`) or its first `llc_ways` ways (a CAT mask; the app's
/// own mask is ignored). The app must finish: an instruction limit, or a
/// finite trace without restart.
pub fn run_alone(
    platform: &PlatformConfig,
    app: &AppSpec,
    llc_ways: Option<u32>,
    seed: u64,
) -> Result<AppTotals, SystemError> {
    let mut spec = app.clone();
    spec.core = 0;
    spec.llc_mask = match llc_ways {
        None => None,
        Some(w) if w == 0 || w > platform.llc.ways => {
            return Err(SystemError::Config {
                field: "llc-ways".into(),
                reason: format!("{w} ways: the LLC has 1..={}", platform.llc.ways),
            })
        }
        Some(w) => Some(WayMask::contiguous(0, w)),
    };
    let mut sys = System::new(platform, vec![spec], seed)?;
    sys.run_to_end(ALONE_INTERVAL, |_| {})?;
    let mut t = sys.totals();
    Ok(t.remove(0))
}

/// [`run_alone`] at every way count `1..=W`, in parallel (rayon); the
/// results equal the serial runs', in way order.
pub fn alone_sweep(
    platform: &PlatformConfig,
    app: &AppSpec,
    seed: u64,
) -> Result<Vec<AppTotals>, SystemError> {
    (1..=platform.llc.ways)
        .into_par_iter()
        .map(|w| run_alone(platform, app, Some(w), seed))
        .collect()
}
