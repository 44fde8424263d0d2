//! Invocation: the one way to run a tool, [`UserScope::invoke`](crate::UserScope::invoke), and the
//! pipeline behind it.
//!
//! `scope.invoke(name, args)` returns an [`Invoke`] builder; options go on
//! it (progress sink, cancellation, a per-call approval handler), arguments
//! may be a JSON value or JSON text ([`Arguments::json`]), and awaiting it
//! runs the call. It yields a [`ToolResult`](crate::ToolResult), host refusals and failures
//! included as error results the model can act on; after
//! [`checked`](Invoke::checked) it yields `Result<ToolResult, InvokeError>`
//! instead, telling them apart.
//!
//! Rules of the pipeline (`pipeline.rs`), in order: name lookup, argument
//! text parsed strictly (size cap, duplicate keys refused), the layers
//! (`layers.rs`: the call's own [`Invoke::layer`], the host's hooks and
//! layers, see [`layer`](crate::host::layer)) around the rest: approval, the call's own [`StartHook`] when it has one (`start_hook.rs`:
//! awaited just before the body; its error stops the call), the method (sync methods inline, async ones awaited under the
//! tool's network scope, with panics caught and cancellation honoured even
//! when the body ignores it, or, with a grace period, once the body has
//! had that long to clean up), redaction of known secrets.
//! Nothing happens until the future is first polled; a synchronous tool
//! with no layer or hook, no approval to ask and no start hook runs to
//! completion inside that first poll, with no further future allocated.
//!
//! # Traces
//!
//! Every call runs inside one `execute_tool` tracing span (target
//! `oscova_core::tool_call`), named as OpenTelemetry's GenAI conventions
//! name it: `otel.name` is `execute_tool {wire name}`, with
//! `gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.type`,
//! `gen_ai.tool.call.id` (the [`ToolInvocation::call_id`](crate::ToolInvocation::call_id)),
//! `oscova.plugin.id` and `user.id`. A failure or refusal records
//! `error.type` ([`InvokeError::kind`], or `tool_error` for an error result)
//! and `otel.status_code = "ERROR"`. The tool's log messages
//! ([`ToolInvocation::log`](crate::ToolInvocation::log)) are events inside
//! it, already redacted. No argument or result text enters the span; an
//! unknown tool's name is cut short. With no subscriber, the span costs a
//! check of a static flag.

mod error;
mod future;
mod layers;
mod pipeline;
mod start_hook;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use error::InvokeError;
pub use future::{Invoke, Passed, Report};
pub use start_hook::StartHook;

pub(in crate::host) use future::CatchUnwind;

use super::approval::ApprovalHandler;
use super::layer::ToolLayer;
use crate::interaction::InteractionHandler;
use crate::tool::{LogSink, ProgressSink};

/// A tool's arguments: a JSON value, or JSON text as models and MCP
/// clients send it.
///
/// ```
/// use oscova_core::host::invoke::Arguments;
/// use serde_json::json;
///
/// let from_value: Arguments<'_> = json!({"text": "hi"}).into();
/// let from_text = Arguments::json(r#"{"text": "hi"}"#);
/// # drop((from_value, from_text));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Arguments<'a> {
    /// An argument object.
    Value(Value),
    /// JSON text, parsed strictly when the call starts: at most the host's
    /// [`max_argument_bytes`](crate::PluginHostBuilder::max_argument_bytes),
    /// duplicate properties refused (see [`crate::args::parse_arguments`]).
    Json(&'a str),
}

impl<'a> Arguments<'a> {
    /// Arguments as JSON text.
    pub fn json(text: &'a str) -> Self {
        Self::Json(text)
    }
}

impl From<Value> for Arguments<'_> {
    fn from(value: Value) -> Self {
        Self::Value(value)
    }
}

/// Options set on an [`Invoke`]. The type appears only as a type parameter:
/// set options with [`Invoke`]'s methods.
#[derive(Clone, Default)]
pub struct CallOptions {
    pub(super) cancel: Option<CancellationToken>,
    pub(super) grace: Option<Duration>,
    pub(super) progress: Option<ProgressSink>,
    pub(super) approval: Option<Arc<dyn ApprovalHandler>>,
    pub(super) interaction: Option<Arc<dyn InteractionHandler>>,
    pub(super) log: Option<LogSink>,
    pub(super) start: Option<Arc<dyn StartHook>>,
    pub(super) layer: Option<Arc<dyn ToolLayer>>,
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("cancel", &self.cancel.is_some())
            .field("grace", &self.grace)
            .field("progress", &self.progress.is_some())
            .field("approval", &self.approval.is_some())
            .field("interaction", &self.interaction.is_some())
            .field("log", &self.log.is_some())
            .field("start", &self.start.is_some())
            .field("layer", &self.layer.is_some())
            .finish()
    }
}
