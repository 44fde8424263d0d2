//! The tool-calling chat loop a host runs over one user scope and one model
//! provider.
//!
//! Rules: the offline check ([`check_offline`]) runs before anything is
//! sent, so a refused chat makes no connection. Every round is one model
//! call; the scope's tools go with it as wire names, descriptions and input
//! schemas exported in the loop's [`SchemaProfile`], and a tool whose schema
//! cannot be exported is left out with a tracing warning. Every tool call
//! the model asks for runs through [`UserScope::invoke`], in the order the
//! model gave them, so approval, hooks, argument checks and redaction all
//! apply; a refusal becomes a tool message telling the model so. The loop
//! ends when the model answers without tool calls, or fails with
//! [`ChatError::RoundLimit`] once `max_rounds` model calls were made. The
//! conversation in `messages` stays valid for the next turn whatever
//! happens: every tool call appended is answered by a tool message, even
//! when the round bound or a cancellation stops the loop.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use oscova_core::provider::model::{
    ChatMessage, ChatRequest, ChatResponse, ChatRole, ChatStreamEvent, ChatStreamSink, ModelError,
    ModelProvider, ModelProviderConfig, ToolCallRequest, ToolSpec, check_offline,
};
use oscova_core::tool::{ContentBlock, ProgressSink};
use oscova_core::{
    CancellationToken, ExposeSecret, InvokeError, PluginHost, SecretString, ToolProgress,
    ToolResult, UserScope,
};
use serde_json::{Map, Value, json};
use tracing::Instrument as _;

use crate::profile::{SchemaProfile, export_schema};

/// The default bound on model calls in one [`run_chat`].
pub const DEFAULT_MAX_ROUNDS: usize = 8;

/// Something that happened during a chat, for a host to show as it happens.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ChatEvent {
    /// More answer text. Streamed pieces while streaming; the whole text of
    /// each answer once it arrives when not streaming.
    Text(String),
    /// The model started composing a tool call (streaming only).
    ToolCallStarted {
        /// The call id.
        id: String,
        /// The tool's wire name.
        name: String,
    },
    /// A tool call is about to run through the scope.
    ToolCallRunning(ToolCallRequest),
    /// Progress reported by a running tool (already redacted).
    ToolProgress {
        /// The call id.
        id: String,
        /// The update.
        progress: ToolProgress,
    },
    /// A tool call finished; `result` is what the model is told.
    ToolCallFinished {
        /// The call id.
        id: String,
        /// The tool's wire name.
        name: String,
        /// The result (redacted).
        result: ToolResult,
        /// Whether the host refused the call (approval or a hook), in which
        /// case the tool did not run.
        refused: bool,
    },
}

/// Receives [`ChatEvent`]s.
pub type ChatEventSink = Arc<dyn Fn(&ChatEvent) + Send + Sync>;

/// How [`run_chat`] runs.
///
/// ```
/// use oscova_agent::chat::ChatLoopOptions;
/// use oscova_core::CancellationToken;
///
/// let cancel = CancellationToken::new();
/// let options = ChatLoopOptions::new()
///     .max_rounds(4)
///     .offline(true)
///     .cancel(cancel.clone())
///     .on_event(|event| println!("{event:?}"));
/// assert_eq!(options.max_rounds, 4);
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct ChatLoopOptions {
    /// The most model calls one run may make ([`DEFAULT_MAX_ROUNDS`]).
    pub max_rounds: usize,
    /// Whether offline operation is required: a non-local endpoint is
    /// refused before any request.
    pub offline: bool,
    /// Whether to ask the provider to stream (default `true`).
    pub stream: bool,
    /// The profile tool schemas are exported in (default
    /// [`SchemaProfile::OpenAi`], which both the OpenAI and the Ollama
    /// function formats accept).
    pub profile: SchemaProfile,
    /// Cancels the model call or tool call in progress.
    pub cancel: CancellationToken,
    /// Receives events as they happen.
    pub on_event: Option<ChatEventSink>,
}

impl ChatLoopOptions {
    /// The defaults: 8 rounds, online, streaming, the `openai` profile.
    pub fn new() -> Self {
        Self {
            max_rounds: DEFAULT_MAX_ROUNDS,
            offline: false,
            stream: true,
            profile: SchemaProfile::OpenAi,
            cancel: CancellationToken::new(),
            on_event: None,
        }
    }

    /// Sets the bound on model calls.
    pub fn max_rounds(mut self, max_rounds: usize) -> Self {
        self.max_rounds = max_rounds;
        self
    }

    /// Requires (or not) that the endpoint is on this machine.
    pub fn offline(mut self, offline: bool) -> Self {
        self.offline = offline;
        self
    }

    /// Asks for streamed answers (or whole ones).
    pub fn stream(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    /// Sets the schema profile for tool schemas.
    pub fn profile(mut self, profile: SchemaProfile) -> Self {
        self.profile = profile;
        self
    }

    /// Sets the cancellation token.
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Sets the event callback.
    pub fn on_event(mut self, sink: impl Fn(&ChatEvent) + Send + Sync + 'static) -> Self {
        self.on_event = Some(Arc::new(sink));
        self
    }
}

impl Default for ChatLoopOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for ChatLoopOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatLoopOptions")
            .field("max_rounds", &self.max_rounds)
            .field("offline", &self.offline)
            .field("stream", &self.stream)
            .field("profile", &self.profile)
            .field("cancelled", &self.cancel.is_cancelled())
            .field("on_event", &self.on_event.is_some())
            .finish()
    }
}

/// How a chat ended.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatOutcome {
    /// The model's final answer (also the last entry of `messages`).
    pub message: ChatMessage,
    /// Why the model stopped, when the provider said.
    pub finish_reason: Option<String>,
    /// The model calls made.
    pub rounds: usize,
    /// The tool calls run (refused ones included).
    pub tool_calls: usize,
}

/// Why a chat failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChatError {
    /// The configuration names no model.
    #[error("no model is configured for provider `{provider}`; choose one")]
    NoModel {
        /// The provider type key.
        provider: String,
    },
    /// The configuration belongs to another provider type.
    #[error(
        "the configuration is for provider `{configured}`, but provider `{provider}` was given"
    )]
    ProviderMismatch {
        /// The type key in the configuration.
        configured: String,
        /// The type key of the provider given.
        provider: String,
    },
    /// The model still asked for tools when the bound on rounds was reached.
    #[error(
        "the model still asked for tools after {max_rounds} round(s), the bound on model calls \
         (`max_rounds`); the unanswered call(s) {} were not run",
        pending.join(", ")
    )]
    RoundLimit {
        /// The bound.
        max_rounds: usize,
        /// The wire names of the calls that were not run.
        pending: Vec<String>,
    },
    /// The chat was cancelled.
    #[error("the chat was cancelled")]
    Cancelled,
    /// The model call failed.
    #[error(transparent)]
    Model(ModelError),
}

impl From<ModelError> for ChatError {
    fn from(error: ModelError) -> Self {
        match error {
            ModelError::Cancelled => Self::Cancelled,
            other => Self::Model(other),
        }
    }
}

/// The first model provider whose type key is `key`, among those `host`
/// built (creation order, so the first registration wins).
pub fn model_provider(host: &PluginHost, key: &str) -> Option<Arc<dyn ModelProvider>> {
    host.providers::<dyn ModelProvider>()
        .iter()
        .find(|p| p.provider().type_key() == key)
        .map(|p| p.provider().clone())
}

/// The tools of `scope` as a model sees them, with schemas exported in
/// `profile`. A tool whose schema the profile cannot express is left out,
/// with a tracing warning naming it.
pub fn tool_specs(scope: &UserScope, profile: SchemaProfile) -> Vec<ToolSpec> {
    scope
        .tools()
        .filter_map(|tool| match export_schema(tool.input_schema(), profile) {
            Ok(parameters) => Some(ToolSpec {
                name: tool.wire_name().to_owned(),
                description: tool.description().to_owned(),
                parameters,
            }),
            Err(error) => {
                tracing::warn!(
                    tool = tool.wire_name(),
                    %profile,
                    %error,
                    "tool left out of the chat: its input schema cannot be exported in this profile"
                );
                None
            }
        })
        .collect()
}

/// Runs a tool-calling chat: sends `messages` and the scope's tools to
/// `provider`, runs the tool calls the model asks for through `scope`,
/// appends the model's messages and the tool results to `messages`, and
/// repeats until the model answers without tool calls.
///
/// The model is `config.model`. `api_key` is added to the scope's redactor,
/// so a tool that echoes it shows `[REDACTED]`. See the module rules for
/// the offline check, refusals, the round bound and cancellation.
pub async fn run_chat(
    scope: &UserScope,
    provider: &dyn ModelProvider,
    config: &ModelProviderConfig,
    api_key: Option<&SecretString>,
    messages: &mut Vec<ChatMessage>,
    options: ChatLoopOptions,
) -> Result<ChatOutcome, ChatError> {
    let key = provider.type_key();
    if key != config.provider.as_str() {
        return Err(ChatError::ProviderMismatch {
            configured: config.provider.to_string(),
            provider: key.to_string(),
        });
    }
    check_offline(config, provider, options.offline)?;
    let Some(model) = config.model.as_deref().filter(|m| !m.trim().is_empty()) else {
        return Err(ChatError::NoModel {
            provider: key.to_string(),
        });
    };
    if let Some(secret) = api_key {
        scope.redactor().add(secret.expose_secret());
    }
    let tools = tool_specs(scope, options.profile);
    let emit = |event: ChatEvent| {
        if let Some(sink) = &options.on_event {
            sink(&event);
        }
    };
    let forward = |event: ChatStreamEvent| match event {
        ChatStreamEvent::Text(text) => emit(ChatEvent::Text(text)),
        ChatStreamEvent::ToolCallStarted { id, name } => {
            emit(ChatEvent::ToolCallStarted { id, name });
        }
        // A kind of stream event this loop does not know yet has no
        // `ChatEvent` to become; the answer it belongs to still arrives
        // whole in the response.
        _ => {}
    };
    let sink: ChatStreamSink<'_> = &forward;

    let mut tool_calls = 0;
    let mut pending = Vec::new();
    for round in 1..=options.max_rounds {
        if options.cancel.is_cancelled() {
            return Err(ChatError::Cancelled);
        }
        let request = ChatRequest {
            config,
            api_key,
            model,
            messages,
            tools: &tools,
            stream: options.stream.then_some(sink),
            cancel: options.cancel.clone(),
        };
        let span = model_call_span(&key, model);
        let response = tokio::select! {
            biased;
            () = options.cancel.cancelled() => {
                span.record("error.type", "cancelled");
                return Err(ChatError::Cancelled);
            }
            response = provider.chat(request).instrument(span.clone()) => {
                record_model_call(&span, &response);
                response?
            }
        };
        let finish_reason = response.finish_reason;
        let mut message = response.message;
        message.role = ChatRole::Assistant;
        message.tool_call_id = None;
        name_calls(&mut message.tool_calls, round);
        if !options.stream && !message.content.is_empty() {
            emit(ChatEvent::Text(message.content.clone()));
        }
        messages.push(message.clone());
        if message.tool_calls.is_empty() {
            return Ok(ChatOutcome {
                message,
                finish_reason,
                rounds: round,
                tool_calls,
            });
        }
        if round == options.max_rounds {
            pending = message.tool_calls;
            break;
        }
        for (i, call) in message.tool_calls.iter().enumerate() {
            if options.cancel.is_cancelled() {
                answer_unrun(messages, message.tool_calls.get(i..), CANCELLED_TEXT);
                return Err(ChatError::Cancelled);
            }
            let Some((result, refused)) = run_tool(scope, call, &options, &emit).await else {
                answer_unrun(messages, message.tool_calls.get(i..), CANCELLED_TEXT);
                return Err(ChatError::Cancelled);
            };
            tool_calls += 1;
            messages.push(tool_message(&call.id, &result));
            emit(ChatEvent::ToolCallFinished {
                id: call.id.clone(),
                name: call.name.clone(),
                result,
                refused,
            });
        }
    }

    // The bound was reached (or is zero): answer what is pending so the
    // conversation stays valid, then say which bound stopped it.
    let text = format!(
        "not run: the chat reached its bound of {} model call(s)",
        options.max_rounds
    );
    answer_unrun(messages, Some(&pending), &text);
    Err(ChatError::RoundLimit {
        max_rounds: options.max_rounds,
        pending: pending.into_iter().map(|c| c.name).collect(),
    })
}

const CANCELLED_TEXT: &str = "not run: the chat was cancelled";

/// Gives every call a unique, non-empty id; some servers send none.
fn name_calls(calls: &mut [ToolCallRequest], round: usize) {
    let mut seen = HashSet::new();
    for (i, call) in calls.iter_mut().enumerate() {
        if call.id.is_empty() || !seen.insert(call.id.clone()) {
            call.id = format!("call_{round}_{i}");
            seen.insert(call.id.clone());
        }
    }
}

fn answer_unrun(messages: &mut Vec<ChatMessage>, calls: Option<&[ToolCallRequest]>, text: &str) {
    for call in calls.unwrap_or_default() {
        messages.push(ChatMessage::tool(call.id.clone(), text));
    }
}

/// The text a tool message carries: errors are marked, since the chat
/// formats have no error flag on tool messages.
/// The span of one model call, as OpenTelemetry's GenAI conventions name
/// it: `chat {model}`, a client span with `gen_ai.operation.name`,
/// `gen_ai.provider.name` (the provider's type key), `gen_ai.request.model`,
/// and, once the answer is in, `gen_ai.response.finish_reasons` and the
/// token usage where the provider reported it; `error.type` on failure.
fn model_call_span(provider: &str, model: &str) -> tracing::Span {
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

fn record_model_call(span: &tracing::Span, response: &Result<ChatResponse, ModelError>) {
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

fn for_model(result: &ToolResult) -> String {
    if result.is_error {
        format!("error: {}", result.content)
    } else {
        result.content.clone()
    }
}

/// The tool message answering `call_id`: the result's text, then its
/// text blocks and text resources, in order; blocks with bytes (images,
/// audio, blob resources) ride along as attachments, which each model
/// provider sends as far as its API takes them.
fn tool_message(call_id: &str, result: &ToolResult) -> ChatMessage {
    let mut text = for_model(result);
    let mut attachments = Vec::new();
    for block in &result.blocks {
        if block.bytes().is_some() {
            attachments.push(block.clone());
            continue;
        }
        let part = match block {
            ContentBlock::Resource(r) => {
                format!(
                    "[resource {}]\n{}",
                    r.uri,
                    block.as_text().unwrap_or_default()
                )
            }
            other => other.as_text().unwrap_or_default().to_owned(),
        };
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&part);
    }
    ChatMessage::tool(call_id, text).with_attachments(attachments)
}

/// Runs one call; `None` when it was cancelled.
async fn run_tool(
    scope: &UserScope,
    call: &ToolCallRequest,
    options: &ChatLoopOptions,
    emit: &(dyn Fn(ChatEvent) + Send + Sync),
) -> Option<(ToolResult, bool)> {
    emit(ChatEvent::ToolCallRunning(call.clone()));
    let args = prepare_arguments(scope, call, options.profile);
    let progress = options.on_event.clone().map(|sink| {
        let id = call.id.clone();
        Arc::new(move |progress: ToolProgress| {
            sink(&ChatEvent::ToolProgress {
                id: id.clone(),
                progress,
            });
        }) as ProgressSink
    });
    let invoke = scope
        .invoke(&call.name, args)
        .cancellation(options.cancel.clone());
    let invoke = match progress {
        Some(sink) => invoke.progress_arc(sink),
        None => invoke,
    };
    match invoke.checked().await {
        Ok(result) => Some((result, false)),
        Err(InvokeError::Cancelled(_)) => None,
        Err(error) => {
            let refused = error.is_refusal();
            let kind = error.kind();
            let text = if refused {
                format!("{error}. The call did not run; do not retry it unless the user asks.")
            } else {
                error.to_string()
            };
            let text = scope.redactor().redact(&text).into_owned();
            let result = ToolResult::error(text).with_details(json!({ "error": kind }));
            Some((result, refused))
        }
    }
}

/// The arguments as the tool expects them: a JSON object. Some servers send
/// the arguments as a JSON string, or nothing; and under the `openai`
/// profile every optional parameter is nullable, so a `null` for a
/// parameter the tool does not require is removed (the profile's advice),
/// leaving the parameter's default to apply.
fn prepare_arguments(scope: &UserScope, call: &ToolCallRequest, profile: SchemaProfile) -> Value {
    let mut args = match &call.arguments {
        Value::Null => Value::Object(Map::new()),
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(value @ Value::Object(_)) => value,
            _ => call.arguments.clone(),
        },
        other => other.clone(),
    };
    if profile != SchemaProfile::OpenAi {
        return args;
    }
    let Some(tool) = scope.tool(&call.name) else {
        return args;
    };
    let required: HashSet<&str> = tool
        .input_schema()
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Value::Object(members) = &mut args {
        members.retain(|name, value| !value.is_null() || required.contains(name.as_str()));
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_and_duplicate_ids_are_replaced() {
        let call = |id: &str| ToolCallRequest {
            id: id.into(),
            name: "t".into(),
            arguments: Value::Null,
        };
        let mut calls = vec![call(""), call("a"), call("a"), call("call_2_0")];
        name_calls(&mut calls, 2);
        let ids: Vec<_> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["call_2_0", "a", "call_2_2", "call_2_3"]);
    }

    #[test]
    fn errors_are_marked_for_the_model() {
        assert_eq!(for_model(&ToolResult::text("ok")), "ok");
        assert_eq!(for_model(&ToolResult::error("bad")), "error: bad");
    }

    #[test]
    fn text_blocks_join_the_text_and_bytes_are_attachments() {
        let result = ToolResult::text("a")
            .with_image(vec![1], "image/png")
            .with_block(ContentBlock::text("b"))
            .with_resource_text("file:///c", None, "c");
        let m = tool_message("id", &result);
        assert_eq!(m.content, "a\n\nb\n\n[resource file:///c]\nc");
        assert_eq!(m.attachments.len(), 1);
        assert_eq!(m.attachments[0].kind(), "image");
    }

    #[test]
    fn cancellation_from_the_provider_is_a_chat_cancellation() {
        assert!(matches!(
            ChatError::from(ModelError::Cancelled),
            ChatError::Cancelled
        ));
    }
}
