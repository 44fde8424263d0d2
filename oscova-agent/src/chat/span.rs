//! The tracing span of one model call.
//!
//! Rules: one span per model call, named and filled as OpenTelemetry's
//! GenAI conventions say; a failed call records `error.type` from
//! [`model_error_type`], a short stable name for the error's kind.

use oscova_core::provider::model::{ChatResponse, ModelError};

/// The span of one model call, as OpenTelemetry's GenAI conventions name
/// it: `chat {model}`, a client span with `gen_ai.operation.name`,
/// `gen_ai.provider.name` (the provider's type key), `gen_ai.request.model`,
/// and, once the answer is in, `gen_ai.response.finish_reasons` and the
/// token usage where the provider reported it; `error.type` on failure.
pub(super) fn model_call_span(provider: &str, model: &str) -> tracing::Span {
    use tracing::field::Empty;
    tracing::info_span!(
        target: "oscova_agent::chat",
        "chat",
        otel.name = %format_args!("chat {model}"),
        otel.kind = "client",
        otel.status_code = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = provider,
        gen_ai.request.model = model,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        error.type = Empty,
    )
}

pub(super) fn record_model_call(span: &tracing::Span, response: &Result<ChatResponse, ModelError>) {
    match response {
        Ok(response) => {
            if let Some(reason) = &response.finish_reason {
                span.record("gen_ai.response.finish_reasons", reason.as_str());
            }
            if let Some(usage) = response.usage {
                if let Some(tokens) = usage.input_tokens {
                    span.record("gen_ai.usage.input_tokens", tokens);
                }
                if let Some(tokens) = usage.output_tokens {
                    span.record("gen_ai.usage.output_tokens", tokens);
                }
            }
        }
        Err(error) => {
            span.record("error.type", model_error_type(error));
            span.record("otel.status_code", "ERROR");
        }
    }
}

/// The span's `error.type` for a model error: its stable
/// [`kind`](ModelError::kind).
fn model_error_type(error: &ModelError) -> &'static str {
    error.kind()
}
