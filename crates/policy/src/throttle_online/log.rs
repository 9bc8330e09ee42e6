//! What `throttle-online` did: one [`ThrottleDecision`] per decision
//! that acted or judged a trial.

use cachepart_machine::Duty;
use serde::Serialize;

/// What one decision did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThrottleMove {
    /// The app's duty cycle went up one step.
    DutyUp,
    /// The app's duty cycle went down one step.
    DutyDown,
    /// One of the app's prefetchers was turned off, on trial.
    PrefetcherOff,
    /// The trial lowered the unfairness factor: kept.
    Keep,
    /// The trial did not: the app's previous word was restored.
    Revert,
    /// The slowest app at full speed got back a prefetcher it had kept
    /// off.
    PrefetcherOn,
}

/// One decision that acted (or judged a trial).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThrottleDecision {
    /// The interval it followed.
    pub interval: u64,
    /// The machine's clock, in cycles.
    pub at_cycles: u64,
    /// Each app's normalised performance in the window (`None`: it did
    /// not run).
    pub normalised: Vec<Option<f64>>,
    /// Their unfairness factor.
    pub unfairness_factor: f64,
    /// What was done.
    #[serde(rename = "move")]
    pub action: ThrottleMove,
    /// To which app.
    pub app: usize,
    /// Its duty cycle afterwards.
    pub duty: Duty,
    /// Its prefetcher word afterwards, in hybrid mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefetchers: Option<u64>,
}
