//! The span of one MCP request, as OpenTelemetry's MCP conventions name it.
//!
//! `tools/call` runs inside a server span named `tools/call {tool}` with
//! `mcp.method.name`, `jsonrpc.request.id`, `gen_ai.operation.name =
//! execute_tool` and `gen_ai.tool.name`; the host's own `execute_tool` span
//! is its child. Other requests get a span named by their method. A
//! failure records `error.type` (`tool_error` for an error result).
//!
//! With the `otel` feature, a W3C `traceparent` (and `tracestate`) in the
//! request's `_meta` (SEP-414) becomes the span's remote parent, so the
//! client's trace continues through the server: this needs the process to
//! have installed a tracing-opentelemetry layer and the trace-context
//! propagator, as the `oscova` binary does when it exports traces.

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use tracing::Span;
use tracing::field::Empty;

/// A server span for `method` (with `tool` for `tools/call`).
pub(super) fn request_span(
    method: &str,
    tool: Option<&str>,
    context: &RequestContext<RoleServer>,
) -> Span {
    let span = match tool {
        Some(tool) => tracing::info_span!(
            target: "oscova_mcp",
            "mcp_request",
            otel.name = %format_args!("{method} {tool}"),
            otel.kind = "server",
            otel.status_code = Empty,
            mcp.method.name = method,
            jsonrpc.request.id = %context.id,
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = tool,
            error.type = Empty,
        ),
        None => tracing::info_span!(
            target: "oscova_mcp",
            "mcp_request",
            otel.name = method,
            otel.kind = "server",
            otel.status_code = Empty,
            mcp.method.name = method,
            jsonrpc.request.id = %context.id,
            error.type = Empty,
        ),
    };
    #[cfg(feature = "otel")]
    continue_trace(&span, &context.meta);
    span
}

/// Records a failed request.
pub(super) fn record_error(span: &Span, kind: &str) {
    span.record("error.type", kind);
    span.record("otel.status_code", "ERROR");
}

/// Makes the client's trace, if its `_meta` names one, the span's parent.
#[cfg(feature = "otel")]
fn continue_trace(span: &Span, meta: &rmcp::model::RequestMetaObject) {
    use opentelemetry::propagation::Extractor;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    struct Carrier<'a>(&'a rmcp::model::RequestMetaObject);
    impl Extractor for Carrier<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            match key {
                "traceparent" => self.0.get_traceparent(),
                "tracestate" => self.0.get_tracestate(),
                _ => None,
            }
        }
        fn keys(&self) -> Vec<&str> {
            ["traceparent", "tracestate"]
                .into_iter()
                .filter(|key| self.get(key).is_some())
                .collect()
        }
    }

    if span.is_disabled() || meta.get_traceparent().is_none() {
        return;
    }
    let parent = opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.extract(&Carrier(meta))
    });
    // Without an OpenTelemetry layer there is no trace to continue.
    let _ = span.set_parent(parent);
}
