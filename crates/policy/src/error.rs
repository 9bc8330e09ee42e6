//! Errors policies report.

use cachepart_machine::MachineError;
use thiserror::Error;

/// Why a policy could not decide a plan.
#[derive(Debug, Error)]
pub enum PolicyError {
    /// The mix has no app.
    #[error("the mix has no app")]
    EmptyMix,
    /// Strict partitioning needs at least one way per app.
    #[error("{policy} gives each app its own ways: {apps} apps need at least {apps} ways, the platform has {ways}")]
    NotEnoughWays {
        /// The policy.
        policy: String,
        /// Apps in the mix.
        apps: usize,
        /// Ways available.
        ways: u32,
    },
    /// A hand-written plan does not parse or does not fit the mix.
    #[error("user plan {plan:?}: {message}")]
    BadUserPlan {
        /// The plan text.
        plan: String,
        /// What is wrong and what was expected.
        message: String,
    },
    /// The policy needs a measurement the machine does not provide.
    #[error("{policy} needs {what}")]
    MissingData {
        /// The policy.
        policy: String,
        /// What is missing.
        what: String,
    },
    /// A parameter is out of range.
    #[error("{policy}: parameter {name} = {value}: expected {expected}")]
    BadParameter {
        /// The policy.
        policy: String,
        /// Parameter name.
        name: String,
        /// Value given.
        value: String,
        /// What was expected.
        expected: String,
    },
    /// The machine failed.
    #[error(transparent)]
    Machine(#[from] MachineError),
}
