//! The span of one tool call, as OpenTelemetry's GenAI conventions name it.
//!
//! Every call, run in place or awaited, refused or not, runs inside one
//! `execute_tool` span (exported as `execute_tool {wire name}`) with
//! `gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.type`,
//! `gen_ai.tool.call.id`, the plugin id and the user id; a failure records
//! `error.type` (the host's `InvokeError::kind`, or `tool_error` for a result
//! the tool marked as an error) and an error status. The tool's own log
//! messages are events inside it. No argument or result text goes into
//! the span, and an exporter redacts what does (the CLI's does).
//!
//! With no subscriber listening, making and entering the span is a check
//! of a static flag: the fields are never evaluated.
//!
//! The span belongs to the call ([`ToolInvocation`](super::ToolInvocation)
//! opens it), so it lives with the contract; the host's pipeline records
//! refusals in it by kind.

use tracing::Span;
use tracing::field::Empty;

use super::{CallId, ToolResult};

/// The target every call span has, for subscribers that filter by target.
pub(crate) const TARGET: &str = "oscova_core::tool_call";

/// A new call span for `wire_name` from `plugin` (empty when the name is
/// unknown), called by `user`.
#[inline]
pub(crate) fn call_span(wire_name: &str, plugin: &str, user: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        "execute_tool",
        otel.name = %format_args!("execute_tool {wire_name}"),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = wire_name,
        gen_ai.tool.type = "function",
        gen_ai.tool.call.id = Empty,
        oscova.plugin.id = plugin,
        user.id = user,
        error.type = Empty,
    )
}

/// Records the call's id once it has one.
#[inline]
pub(crate) fn record_call_id(span: &Span, id: CallId) {
    if !span.is_disabled() {
        span.record("gen_ai.tool.call.id", id.get());
    }
}

/// Records a result the tool marked as an error.
#[inline]
pub(crate) fn record_result(span: &Span, result: &ToolResult) {
    if result.is_error {
        record_error(span, "tool_error");
    }
}

/// Records a refused or failed call by its error's stable kind (the
/// host's `InvokeError::kind`), or `tool_error` for a result the tool
/// marked as an error.
#[cold]
pub(crate) fn record_error(span: &Span, kind: &str) {
    span.record("error.type", kind);
    span.record("otel.status_code", "ERROR");
}
