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
    /// An action is not valid now or for this mix (a color outside the
    /// platform's, a placement after the run has started, ...).
    #[error("{action}: {reason}")]
    BadAction {
        /// The action's kind (`recolor`, `place`, ...).
        action: &'static str,
        /// Why it was refused.
        reason: String,
    },
    /// The machine itself failed (a simulation error, a kernel
    /// interface's error, ...); the source says how.
    #[error(transparent)]
    Backend(Box<dyn std::error::Error + Send + Sync + 'static>),
}

impl MachineError {
    /// Wraps a backend's own error, keeping it as the source.
    pub fn backend(e: impl std::error::Error + Send + Sync + 'static) -> MachineError {
        MachineError::Backend(Box::new(e))
    }

    /// The backend error of type `E` behind this one, if that is what it is.
    pub fn downcast_backend<E: std::error::Error + 'static>(&self) -> Option<&E> {
        match self {
            MachineError::Backend(b) => b.downcast_ref::<E>(),
            _ => None,
        }
    }
}
