//! Feeding records: an app's buffer of decoded records ([`BATCH`] per
//! refill, or a whole chunk of a trace decoded ahead, swapped in:
//! [`RecordBatches::refill`](crate::system::RecordBatches::refill)) and
//! the replay of its trace when it ends and the app restarts
//! (logged as [`EventKind::Restarted`]).

use cachepart_machine::{AppEvent, EventKind};

use super::{System, BATCH};
use crate::system::error::SystemError;
use crate::system::timing::TICKS_PER_CYCLE;

impl System {
    /// Decodes the next batch of app `a`'s records, reopening its trace
    /// if it ended and restarts; `false` when it has no more.
    pub(super) fn refill(&mut self, a: usize) -> Result<bool, SystemError> {
        let app = &mut self.apps[a];
        app.pos = 0;
        loop {
            let Some(stream) = app.stream.as_mut() else {
                return Ok(false);
            };
            if let Err(source) = stream.refill(&mut app.buf, BATCH) {
                return Err(SystemError::Trace {
                    app: app.spec.name.clone(),
                    source,
                });
            }
            if !app.buf.is_empty() {
                app.records_since_open += app.buf.len() as u64;
                return Ok(true);
            }
            // The trace ended: replay it if that makes progress.
            let progressed = app.c.instructions > app.instructions_at_open;
            if app.spec.restart && app.records_since_open > 0 && progressed {
                // Drop the old reader first: two decoded frames at once
                // would raise the peak memory at every restart.
                app.stream = None;
                let s = app
                    .spec
                    .source
                    .open_batches()
                    .map_err(|source| SystemError::Trace {
                        app: app.spec.name.clone(),
                        source,
                    })?;
                app.stream = Some(s);
                app.c.restarts += 1;
                let core = app.spec.core as usize;
                self.events.push(AppEvent {
                    app: a,
                    kind: EventKind::Restarted,
                    at_cycles: self.cores[core].clock / TICKS_PER_CYCLE,
                    core: Some(core as u32),
                });
                app.records_since_open = 0;
                app.instructions_at_open = app.c.instructions;
            } else {
                app.stream = None;
                return Ok(false);
            }
        }
    }
}
