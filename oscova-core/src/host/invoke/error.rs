//! The host's own failures around a tool: [`InvokeError`].
//!
//! Rules: every variant names the tool; texts are redacted by the scope
//! before they leave; [`InvokeError::into_tool_result`] is the one way a
//! failure becomes a result the model reads.

use serde_json::json;

use crate::args::ArgError;
use crate::tool::ToolResult;

/// Why a call did not produce the tool's own result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvokeError {
    /// No published tool has this name.
    #[error("unknown tool `{0}`")]
    UnknownTool(String),
    /// The tool exists but its toolset failed to build for this user.
    #[error("tool `{0}` is not available for this user: its toolset failed to start")]
    Unavailable(String),
    /// Approval was denied (or nobody could be asked).
    #[error("tool `{tool}` was not approved{}", reason_suffix(.reason))]
    Denied {
        /// The tool.
        tool: String,
        /// Why, when given.
        reason: Option<String>,
    },
    /// A host hook, or the call's own start hook, blocked the call.
    #[error("tool `{tool}` was blocked: {reason}")]
    Blocked {
        /// The tool.
        tool: String,
        /// The hook's reason.
        reason: String,
    },
    /// The arguments did not fit the tool's parameters.
    #[error("invalid arguments for tool `{tool}`: {error}")]
    InvalidArguments {
        /// The tool.
        tool: String,
        /// Every problem, with JSON paths.
        error: ArgError,
    },
    /// The tool's body panicked.
    #[error("tool `{tool}` failed unexpectedly: {message}")]
    Panicked {
        /// The tool.
        tool: String,
        /// The panic message.
        message: String,
    },
    /// The call was cancelled.
    #[error("tool `{0}` was cancelled")]
    Cancelled(String),
}

fn reason_suffix(reason: &Option<String>) -> String {
    reason
        .as_ref()
        .map(|r| format!(": {r}"))
        .unwrap_or_default()
}

impl InvokeError {
    /// A short machine-readable kind: `unknown_tool`, `denied`, ...
    pub fn kind(&self) -> &'static str {
        match self {
            Self::UnknownTool(_) => "unknown_tool",
            Self::Unavailable(_) => "unavailable",
            Self::Denied { .. } => "denied",
            Self::Blocked { .. } => "blocked",
            Self::InvalidArguments { .. } => "invalid_arguments",
            Self::Panicked { .. } => "panicked",
            Self::Cancelled(_) => "cancelled",
        }
    }

    /// Whether the host refused the call (approval or a hook) rather than
    /// the tool failing.
    pub fn is_refusal(&self) -> bool {
        matches!(self, Self::Denied { .. } | Self::Blocked { .. })
    }

    /// The error as a result the model can act on.
    pub fn into_tool_result(self) -> ToolResult {
        let details = json!({ "error": self.kind() });
        ToolResult::error(self.to_string()).with_details(details)
    }
}
