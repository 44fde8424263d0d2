//! Synchronous hooks around tool calls: the thin form of a
//! [`ToolLayer`](super::layer::ToolLayer), for a host that only needs to
//! look at, patch or block a call, or edit a result, without awaiting.
//!
//! Rules: every hook a host registers ([`before_tool_call`](crate::PluginHostBuilder::before_tool_call),
//! [`after_tool_call`](crate::PluginHostBuilder::after_tool_call)) runs
//! in one layer, the outermost of the host's: its before-hooks in
//! registration order, then the host's layers (so a guard written as a
//! layer sees the arguments as the hooks left them), then its after-hooks
//! in registration order. Before-hooks see the wire name and arguments
//! and may patch them or block the call with a reason the model sees; a
//! block stops later before-hooks, and a panicking before-hook blocks the
//! call and is reported, as in the peer runtime. After-hooks may edit the
//! result; a panicking one replaces it by an error saying the tool ran but
//! its result was withheld, and later after-hooks do not run. Use a layer
//! instead to await something, to see refusals, or to replace the whole
//! outcome.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde_json::Value;

use super::invoke::InvokeError;
use super::layer::{CallOutcome, Next, ToolCall, ToolLayer, failed, report_panic};
use crate::context::UserInfo;
use crate::provider::BoxFuture;
use crate::tool::ToolResult;

/// A tool call about to run, as a before-hook sees it.
#[derive(Debug)]
pub struct BeforeToolCall<'a> {
    /// The wire name.
    pub wire_name: &'a str,
    /// The calling user.
    pub user: &'a UserInfo,
    /// The arguments; hooks may change them.
    pub arguments: &'a mut Value,
    pub(crate) blocked: Option<String>,
}

impl BeforeToolCall<'_> {
    /// Blocks the call; the reason goes to the model and the method never runs.
    pub fn block(&mut self, reason: impl Into<String>) {
        self.blocked = Some(reason.into());
    }

    /// Whether this hook already blocked the call (a later hook never
    /// sees a blocked one: a block stops the hooks after it).
    pub fn is_blocked(&self) -> bool {
        self.blocked.is_some()
    }
}

/// A tool call that ran, as an after-hook sees it: its body returned a
/// result, error results included. Calls that never produced one (unknown
/// tool, refused by approval, a layer or a before-hook, bad arguments, a
/// panic, cancellation) come back as [`InvokeError`](crate::InvokeError)
/// and do not reach after-hooks. The result is already redacted.
#[derive(Debug)]
pub struct AfterToolCall<'a> {
    /// The wire name.
    pub wire_name: &'a str,
    /// The calling user.
    pub user: &'a UserInfo,
    /// The result; hooks may edit content, details and `is_error`.
    pub result: &'a mut ToolResult,
}

/// A hook run before each tool call.
pub type BeforeToolCallHook = Arc<dyn Fn(&mut BeforeToolCall<'_>) + Send + Sync>;
/// A hook run after each tool call.
pub type AfterToolCallHook = Arc<dyn Fn(&mut AfterToolCall<'_>) + Send + Sync>;

/// Every hook of a host, as one layer (see the module rules).
pub(crate) struct Hooks {
    pub(crate) before: Vec<BeforeToolCallHook>,
    pub(crate) after: Vec<AfterToolCallHook>,
}

impl ToolLayer for Hooks {
    fn call<'a>(&'a self, mut call: ToolCall<'a>, next: Next<'a>) -> BoxFuture<'a, CallOutcome> {
        let (wire_name, user) = (call.wire_name(), call.user());
        if let Err(error) = run_before(&self.before, wire_name, user, &mut call.arguments) {
            return Box::pin(std::future::ready(Err(error)));
        }
        if self.after.is_empty() {
            return next.run(call);
        }
        Box::pin(async move {
            let result = next.run(call).await?;
            run_after(&self.after, wire_name, user, result)
        })
    }
}

/// Runs the before-hooks on a call's arguments. A block, or a hook that
/// panics (reported as a diagnostic), refuses the call.
fn run_before(
    hooks: &[BeforeToolCallHook],
    wire_name: &str,
    user: &UserInfo,
    args: &mut Value,
) -> Result<(), InvokeError> {
    let mut event = BeforeToolCall {
        wire_name,
        user,
        arguments: args,
        blocked: None,
    };
    for hook in hooks {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| hook(&mut event))) {
            let message = report_panic("a before-tool-call hook", wire_name, &*payload);
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
/// diagnostic) has the result withheld; the pipeline redacts the
/// replacement, since it quotes the panic message.
fn run_after(
    hooks: &[AfterToolCallHook],
    wire_name: &str,
    user: &UserInfo,
    mut result: ToolResult,
) -> CallOutcome {
    for hook in hooks {
        let mut event = AfterToolCall {
            wire_name,
            user,
            result: &mut result,
        };
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| hook(&mut event))) {
            let message = report_panic("an after-tool-call hook", wire_name, &*payload);
            return failed(wire_name, true, &message);
        }
    }
    Ok(result)
}
