//! Where an app's accesses come from: a binary trace (`trace`, its
//! header, trailer and index checked at load time), a generator file
//! (`generator`) or an inline generator (`[app.synth]`), exactly one of
//! them.

use std::path::Path;
use std::sync::Arc;

use cachepart_sim::system::{CptFile, TraceSource};
use cachepart_trace::synth::SynthConfig;

use super::file::read_config;
use super::{AppEntry, FieldError};
use crate::error::Error;

/// The trace source of app `a`; relative paths are taken from `base`,
/// `field(key)` names one of the app's keys in errors.
pub(super) fn trace_source(
    a: &AppEntry,
    base: Option<&Path>,
    field: &dyn Fn(&str) -> String,
    err: FieldError<'_>,
) -> Result<Arc<dyn TraceSource>, Error> {
    let join = |p: &Path| match base {
        Some(b) if p.is_relative() => b.join(p),
        _ => p.to_path_buf(),
    };
    let source: Arc<dyn TraceSource> = match (&a.trace, &a.generator, &a.synth) {
        (Some(t), None, None) => {
            if t.as_os_str() == "-" {
                return Err(err(
                    field("trace"),
                    "-: standard input can not be read here: the simulator seeks to the \
                     trace's index at its end, so it needs a file (save the trace to a file first)"
                        .to_string(),
                ));
            }
            let p = join(t);
            if p.is_dir() {
                return Err(err(
                    field("trace"),
                    format!(
                        "{}: is a directory; expected a trace file (.cpt)",
                        p.display()
                    ),
                ));
            }
            if !p.is_file() {
                return Err(err(
                    field("trace"),
                    format!("{}: no such file", p.display()),
                ));
            }
            // header, trailer and index checked before anything runs
            let file = cachepart_trace::TraceFile::open(&p)
                .map_err(|e| err(field("trace"), p.display().to_string()).read_as_trace(e))?;
            if file.records() == 0 {
                return Err(err(
                    field("trace"),
                    format!("{}: the trace has no records", p.display()),
                ));
            }
            Arc::new(CptFile(p))
        }
        (None, Some(g), None) => {
            let p = join(g);
            let cfg: SynthConfig =
                read_config(&p, &[]).map_err(|e| err(field("generator"), e.to_string()))?;
            runnable(&cfg)
                .map_err(|why| err(field("generator"), format!("{}: {why}", p.display())))?;
            Arc::new(cfg)
        }
        (None, None, Some(s)) => {
            runnable(s).map_err(|why| err(field("synth"), why))?;
            Arc::new(s.clone())
        }
        _ => {
            return Err(err(
                field("trace"),
                "give exactly one of trace (a .cpt file), generator (a generator file) or \
                 [app.synth]"
                    .into(),
            ))
        }
    };
    Ok(source)
}

/// Why generator `cfg` cannot feed an app, if it cannot: a configuration
/// its generator refuses, or no accesses at all (an app of no records, as
/// a trace file of none is refused above).
fn runnable(cfg: &SynthConfig) -> Result<(), String> {
    cfg.generator().map_err(|e| e.to_string())?;
    if cfg.accesses == 0 {
        return Err("accesses is 0: the app would have no records".into());
    }
    Ok(())
}
