//! Tools' log messages as MCP `notifications/message`.
//!
//! Rules: a session starts at [`DEFAULT_LEVEL`] and `logging/setLevel`
//! moves it; a message less severe than the session's level when its call
//! started is not sent. Each goes out with its level, the tool's wire name
//! as `logger`, the message (already redacted by the host) as `data`, and
//! before the call's response. A client that went away is not told; the
//! call carries on. The messages go to tracing as well, whatever the
//! level (that is the invocation's doing).

// rmcp marks MCP logging deprecated in favour of a later proposal; the
// 2025 protocols this server speaks still define it.
#![allow(deprecated)]

use oscova_core::tool::{LogLevel, ToolLog};
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams};
use rmcp::{Peer, RoleServer};
use serde_json::Value;

/// The level a session starts at, before any `logging/setLevel`.
pub const DEFAULT_LEVEL: LogLevel = LogLevel::Info;

/// The level a `logging/setLevel` request asks for.
pub(super) fn log_level(request: &SetLevelRequestParams) -> LogLevel {
    match request.level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

fn mcp_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

/// Sends one round's log messages, named after the tool.
pub(super) struct LogRelay<'a> {
    pub(super) peer: &'a Peer<RoleServer>,
    pub(super) logger: &'a str,
}

impl LogRelay<'_> {
    pub(super) async fn send(&mut self, log: ToolLog) {
        let mut param =
            LoggingMessageNotificationParam::new(mcp_level(log.level), Value::String(log.message));
        param.logger = Some(self.logger.to_owned());
        let _ = self.peer.notify_logging_message(param).await;
    }
}
