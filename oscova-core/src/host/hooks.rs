//! Host hooks around tool calls (for hosts; the plugin builder still
//! registers no middleware).
//!
//! Before-hooks see the wire name and arguments and may patch them or block
//! the call with a reason the model sees; after-hooks may edit the result.
//! Hooks run in registration order; a block stops later before-hooks, and a
//! panicking before-hook blocks the call and is reported, as in the peer
//! runtime. A panicking after-hook replaces the result by an error saying the
//! tool ran but its result was withheld, and later after-hooks do not run.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde_json::{Value, json};

use super::invoke::InvokeError;
use crate::context::UserInfo;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Severity, panic_message};
use crate::tool::ToolResult;

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

/// Runs the before-hooks on a call's arguments. A block, or a hook that
/// panics (reported as a diagnostic), refuses the call.
pub(super) fn run_before(
    hooks: &[BeforeToolCallHook],
    wire_name: &str,
    user: &UserInfo,
    args: &mut Value,
) -> Result<(), InvokeError> {
    let mut event = ToolCallEvent {
        wire_name,
        user,
        arguments: args,
        blocked: None,
    };
    for hook in hooks {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| hook(&mut event))) {
            let message = report_panic("a before-tool-call", wire_name, &*payload);
            event.blocked = Some(format!("a host hook failed: {message}"));
        }
        if event.blocked.is_some() {
            break;
        }
    }
    match event.blocked {
        Some(reason) => Err(InvokeError::Blocked {
            tool: wire_name.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// Runs the after-hooks on a result. A hook that panics (reported as a
/// diagnostic) has the result withheld; the replacement goes through
/// `redact`, since it quotes the panic message.
pub(super) fn run_after(
    hooks: &[AfterToolCallHook],
    wire_name: &str,
    user: &UserInfo,
    result: &mut ToolResult,
    redact: impl FnOnce(&mut ToolResult),
) {
    for hook in hooks {
        let mut event = ToolResultEvent {
            wire_name,
            user,
            result,
        };
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| hook(&mut event))) {
            let message = report_panic("an after-tool-call", wire_name, &*payload);
            // The tool did run, so the model must not read "blocked" and
            // retry a call whose side effects already happened.
            *result = ToolResult::error(format!(
                "tool `{wire_name}` ran, but its result was withheld: a host hook failed: {message}"
            ))
            .with_details(json!({ "error": "hook_failed" }));
            redact(result);
            return;
        }
    }
}

/// Reports a hook's panic as a diagnostic; returns the panic message.
fn report_panic(which: &str, wire_name: &str, payload: &(dyn std::any::Any + Send)) -> String {
    let message = panic_message(payload);
    Diagnostic::new(
        Severity::Error,
        DiagnosticKind::HookFailed,
        None,
        format!("{which} hook panicked on `{wire_name}`: {message}"),
    );
    message
}
