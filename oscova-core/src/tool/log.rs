//! Log messages a running tool sends ([`ToolLog`]), their severity
//! ([`LogLevel`], the syslog levels MCP's `notifications/message` uses)
//! and where they go ([`LogSink`]).
//!
//! Rules: the host supplies one sink per call; a message reaches it only
//! after the scope's redaction, so a sink never sees a secret.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// The severity of a tool's log message: the syslog levels MCP's
/// `notifications/message` uses, least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// What is going on.
    Info,
    /// Normal but worth noticing.
    Notice,
    /// Something may be wrong.
    Warning,
    /// Something failed.
    Error,
    /// A part stopped working.
    Critical,
    /// Someone must act now.
    Alert,
    /// Nothing works.
    Emergency,
}

impl LogLevel {
    /// The level's name as MCP writes it (`debug`, `warning`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Notice => "notice",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Critical => "critical",
            Self::Alert => "alert",
            Self::Emergency => "emergency",
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A log message from a running tool, already redacted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolLog {
    /// Its severity.
    pub level: LogLevel,
    /// The message.
    pub message: String,
}

/// Receives a call's log messages; the host supplies one per call.
pub type LogSink = Arc<dyn Fn(ToolLog) + Send + Sync>;
