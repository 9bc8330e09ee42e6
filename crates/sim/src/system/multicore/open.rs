//! Opening a system's apps: each app's settings checked against the
//! platform and its trace opened, before the rest of the machine is built
//! ([`System::new`](super::System::new)), so that the traces' read-ahead
//! threads decode the first records while the caches are built and the
//! allocator is aged (about a quarter of a second for 4 GiB): the run then
//! starts on records already decoded instead of waiting for each trace's
//! first frame.

use super::cfg_err;
use super::throttle;
use crate::system::app::AppSpec;
use crate::system::error::SystemError;
use crate::system::platform::PlatformConfig;
use crate::system::source::RecordBatches;

/// Checks every app of `apps` against `platform` (its core, timing,
/// throttling, idle quantum and LLC mask) and opens its trace, in the
/// order given: the first app at fault is the error.
pub(super) fn open_apps(
    platform: &PlatformConfig,
    apps: &[AppSpec],
) -> Result<Vec<Box<dyn RecordBatches>>, SystemError> {
    let rules = platform.mask_rules();
    platform
        .memory
        .costs
        .check()
        .map_err(|source| SystemError::Memory { app: None, source })?;
    let mut streams = Vec::with_capacity(apps.len());
    for spec in apps {
        let field = |f: &str| format!("app {}: {f}", spec.name);
        if spec.core >= platform.cores {
            return Err(cfg_err(
                field("core"),
                format!("core {} does not exist (0..{})", spec.core, platform.cores),
            ));
        }
        spec.timing.check(&spec.name)?;
        if platform.timing.window.is_some() && spec.timing.mlp != 1.0 {
            return Err(cfg_err(
                field("mlp"),
                format!(
                    "{} is set, but the platform's [timing] window derives memory-level parallelism from the trace; leave mlp at 1 (its default)",
                    spec.timing.mlp
                ),
            ));
        }
        throttle::checked(platform, &spec.name, spec.duty, spec.prefetch_word)?;
        if let Some(q) = &spec.idle_quantum {
            q.check()
                .map_err(|(f, why)| cfg_err(field(&format!("quantum.{f}")), why))?;
        }
        if let Some(m) = spec.llc_mask {
            rules.check(m).map_err(|source| SystemError::Mask {
                app: spec.name.clone(),
                source,
            })?;
        }
        let stream = spec
            .source
            .open_batches()
            .map_err(|source| SystemError::Trace {
                app: spec.name.clone(),
                source,
            })?;
        streams.push(stream);
    }
    Ok(streams)
}
