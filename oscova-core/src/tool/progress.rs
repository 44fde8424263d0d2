//! Progress a running tool reports ([`ToolProgress`]) and where it goes
//! ([`ProgressSink`]).
//!
//! Rules: the figures are in any unit the tool likes, `total` only when it
//! is known; the host supplies one sink per call, and what a tool sends
//! through [`ToolInvocation::report`](super::ToolInvocation::report)
//! passes the scope's redaction first.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// A progress update from a running tool.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolProgress {
    /// What is happening, for a person.
    pub message: String,
    /// Work done so far, in any unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<f64>,
    /// Total work, in the same unit, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
}

impl ToolProgress {
    /// A message with no figures.
    pub fn message(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            progress: None,
            total: None,
        }
    }

    /// A message with `done` of `total`.
    pub fn ratio(message: impl Into<String>, done: f64, total: Option<f64>) -> Self {
        Self {
            message: message.into(),
            progress: Some(done),
            total,
        }
    }
}

/// Receives progress updates; the host supplies one per call.
pub type ProgressSink = Arc<dyn Fn(ToolProgress) + Send + Sync>;
