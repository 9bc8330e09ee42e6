//! What flows between a controller and a machine while a mix runs: the
//! [`Action`]s a controller asks for, what each did ([`Effect`]), the
//! [`AppEvent`]s a machine reports, and one [`Interval`] of results.
//!
//! A controller (a policy that acts online, `cachepart-policy`'s
//! `Controller`) is started with the machine, told of every app event,
//! handed every interval, and answers with actions. The machine carries
//! them out. Actions a machine lacks the control for fail with
//! [`crate::MachineError::Unsupported`].

use cachepart_units::IdSet;
use serde::{Deserialize, Serialize};

use crate::{AppThrottle, Plan, Sample};

/// Something a controller asks a machine to do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "action")]
pub enum Action {
    /// Enforce a plan from now on: its clusters' way masks (when it has
    /// clusters) and its per-app color sets (when it has any).
    Apply(Plan),
    /// Give app `app` the page colors `colors` from now on. Pages it holds
    /// in other colors are moved as the machine's recoloring rules say
    /// (the simulator: lazily on shrink, by the configured expansion on
    /// growth).
    Recolor {
        /// The app's index in the mix.
        app: usize,
        /// Its new colors.
        colors: IdSet,
    },
    /// Throttle app `app` from now on: its core's duty cycle and
    /// prefetcher word while it runs (the settings left `None` stay).
    Throttle(AppThrottle),
    /// Run app `app` on core `core`. Only before the first interval.
    Place {
        /// The app's index in the mix.
        app: usize,
        /// The core.
        core: u32,
    },
}

impl Action {
    /// A short name for logs (`apply`, `recolor`, `throttle`, `place`).
    pub fn kind(&self) -> &'static str {
        match self {
            Action::Apply(_) => "apply",
            Action::Recolor { .. } => "recolor",
            Action::Throttle(_) => "throttle",
            Action::Place { .. } => "place",
        }
    }
}

/// What an action did, as far as the machine can tell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Effect {
    /// Pages moved at once.
    pub pages_moved: u64,
    /// Pages marked to move lazily, on their next touch.
    pub pages_marked: u64,
}

/// What happened to an app.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// It got a core for the first time.
    Started,
    /// It finished (its instruction limit, or the end of its trace).
    Finished,
    /// It reached its end and began again (restart methodology).
    Restarted,
    /// It left its core for another app (time slicing).
    Parked,
    /// It got its core back after being parked.
    Resumed,
    /// It needs a page and its colors have no free frame left. A
    /// controller may answer with [`Action::Recolor`] giving it more colors;
    /// without an answer the run fails.
    ColorsExhausted,
}

/// An app event, stamped with the machine's time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppEvent {
    /// The app's index in the mix.
    pub app: usize,
    /// What happened.
    pub kind: EventKind,
    /// When, in cycles of the machine's global clock.
    pub at_cycles: u64,
    /// The core it happened on, when the machine knows it.
    pub core: Option<u32>,
}

/// One interval of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Interval {
    /// Interval number, from 0.
    pub index: u64,
    /// The machine's global clock at the end of the interval, in cycles.
    pub end_cycles: u64,
    /// One sample per app, in mix order.
    pub samples: Vec<Sample>,
    /// The events of the interval, in time order (those answered during
    /// the interval included).
    pub events: Vec<AppEvent>,
}

/// The axis an alone sweep runs over.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Axis {
    /// LLC way counts `1..=W` (a CAT sweep).
    Ways,
    /// Page-color counts: the app alone with colors `0..k` for each `k`
    /// of `counts` (increasing, each at least 1).
    Colors {
        /// The color counts measured.
        counts: Vec<u32>,
    },
}

impl Axis {
    /// The counts measured, given the platform's way count.
    pub fn counts(&self, ways: u32) -> Vec<u32> {
        match self {
            Axis::Ways => (1..=ways).collect(),
            Axis::Colors { counts } => counts.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_counts_and_action_names() {
        assert_eq!(Axis::Ways.counts(3), vec![1, 2, 3]);
        assert_eq!(
            Axis::Colors {
                counts: vec![1, 4, 8]
            }
            .counts(11),
            vec![1, 4, 8]
        );
        let a = Action::Recolor {
            app: 1,
            colors: "0-3".parse().unwrap(),
        };
        assert_eq!(a.kind(), "recolor");
        assert_eq!(Action::Place { app: 0, core: 1 }.kind(), "place");
    }
}
