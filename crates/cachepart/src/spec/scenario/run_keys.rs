//! The keys that say how long the run goes and how: at least one app,
//! `interval-cycles`, `instructions`, `restart` and the `[method]` (a
//! method that replays every trace to its end admits no instruction
//! limits).

use super::{FieldError, ScenarioFile};
use crate::error::Error;

/// Checks the run keys of `file`.
pub(super) fn check(file: &ScenarioFile, err: FieldError<'_>) -> Result<(), Error> {
    if file.apps.is_empty() {
        return Err(err(
            "app".into(),
            "a scenario needs at least one [[app]]".into(),
        ));
    }
    if file.interval_cycles == 0 {
        return Err(err(
            "interval-cycles".into(),
            "must be a positive number of cycles".into(),
        ));
    }
    if file.instructions == Some(0) {
        return Err(err(
            "instructions".into(),
            "must be positive (or left out)".into(),
        ));
    }
    file.method
        .check(file.interval_cycles)
        .map_err(|(f, why)| err(f, why))?;
    if file.method.replays() {
        let replay = "the method replays every trace to its end (an app's run is its trace): leave out instruction limits";
        if file.instructions.is_some() {
            return Err(err("instructions".into(), replay.into()));
        }
        if let Some(i) = file.apps.iter().position(|a| a.instructions.is_some()) {
            return Err(err(
                format!("app[{i}] ({}).instructions", file.apps[i].name),
                replay.into(),
            ));
        }
        if !file.restart {
            return Err(err(
                "restart".into(),
                "the method replays every trace; restart = false contradicts it".into(),
            ));
        }
    }
    Ok(())
}
