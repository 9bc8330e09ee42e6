//! Errors a machine reports.

use crate::PlanError;
use thiserror::Error;

/// What went wrong on a machine.
#[derive(Debug, Error)]
pub enum MachineError {
    /// The plan cannot be enforced on this platform.
    #[error("invalid plan: {0}")]
    Plan(#[from] PlanError),
    /// The machine lacks a control or a measurement the caller needs.
    #[error("unsupported on this machine: {0}")]
    Unsupported(String),
    /// Any other failure, with its explanation.
    #[error("{0}")]
    Other(String),
}
