//! Host hooks around tool calls (for hosts; the plugin builder still
//! registers no middleware).
//!
//! Before-hooks see the wire name and arguments and may patch them or block
//! the call with a reason the model sees; after-hooks may edit the result.
//! Hooks run in registration order; a block stops later before-hooks, and a
//! panicking before-hook blocks the call and is reported, as in the peer
//! runtime. A panicking after-hook replaces the result by an error saying the
//! tool ran but its result was withheld, and later after-hooks do not run.

use std::sync::Arc;

use serde_json::Value;

use crate::context::UserInfo;
use crate::result::ToolResult;

/// A tool call about to run.
#[derive(Debug)]
pub struct ToolCallEvent<'a> {
    /// The wire name.
    pub wire_name: &'a str,
    /// The calling user.
    pub user: &'a UserInfo,
    /// The arguments; hooks may change them.
    pub arguments: &'a mut Value,
    pub(crate) blocked: Option<String>,
}

impl ToolCallEvent<'_> {
    /// Blocks the call; the reason goes to the model and the method never runs.
    pub fn block(&mut self, reason: impl Into<String>) {
        self.blocked = Some(reason.into());
    }

    /// Whether an earlier hook blocked the call.
    pub fn is_blocked(&self) -> bool {
        self.blocked.is_some()
    }
}

/// A tool call that ran: its body returned a result, error results
/// included. Calls that never produced one (unknown tool, refused by approval
/// or a before-hook, bad arguments, a panic, cancellation) come back as
/// [`InvokeError`](crate::InvokeError) and do not reach after-hooks. The
/// result is already redacted.
#[derive(Debug)]
pub struct ToolResultEvent<'a> {
    /// The wire name.
    pub wire_name: &'a str,
    /// The calling user.
    pub user: &'a UserInfo,
    /// The result; hooks may edit content, details and `is_error`.
    pub result: &'a mut ToolResult,
}

/// A hook run before each tool call.
pub type BeforeToolCallHook = Arc<dyn Fn(&mut ToolCallEvent<'_>) + Send + Sync>;
/// A hook run after each tool call.
pub type AfterToolCallHook = Arc<dyn Fn(&mut ToolResultEvent<'_>) + Send + Sync>;
