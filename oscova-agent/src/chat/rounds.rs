//! The loop: model calls in rounds, and the tool calls each round asks for.
//!
//! Rules: see the [module rules](super); every tool call appended to the
//! conversation is answered by a tool message, whatever stops the loop.

use std::collections::HashSet;

use oscova_core::provider::model::{
    ChatMessage, ChatRequest, ChatRole, ChatStreamEvent, ChatStreamSink, ModelProvider,
    ModelProviderConfig, ToolCallRequest, check_offline,
};
use oscova_core::{ExposeSecret, SecretString, UserScope};
use tracing::Instrument as _;

use super::batch::{all_terminate, run_batch};
use super::messages::tool_message;
use super::span::{model_call_span, record_model_call};
use super::{ChatError, ChatEvent, ChatLoopOptions, ChatOutcome, tool_specs};

/// A tool-calling chat: sends `messages` and the scope's tools to
/// `provider`, runs the tool calls the model asks for through `scope`,
/// appends the model's messages and the tool results to `messages`, and
/// repeats until the model answers without tool calls. Set options on the
/// returned [`ChatRun`], then await it, as with
/// [`UserScope::invoke`].
///
/// The model is `config.model`. See the module rules for the offline check,
/// refusals, the round bound and cancellation.
pub fn run_chat<'a>(
    scope: &'a UserScope,
    provider: &'a dyn ModelProvider,
    config: &'a ModelProviderConfig,
    messages: &'a mut Vec<ChatMessage>,
) -> ChatRun<'a> {
    ChatRun {
        scope,
        provider,
        config,
        messages,
        api_key: None,
        options: ChatLoopOptions::new(),
    }
}

/// A chat to run: made by [`run_chat`], options set on it, run when
/// awaited.
#[must_use = "a chat runs only when awaited"]
pub struct ChatRun<'a> {
    scope: &'a UserScope,
    provider: &'a dyn ModelProvider,
    config: &'a ModelProviderConfig,
    messages: &'a mut Vec<ChatMessage>,
    api_key: Option<&'a SecretString>,
    options: ChatLoopOptions,
}

impl<'a> ChatRun<'a> {
    /// The API key the provider is called with (none by default). It is
    /// added to the scope's redactor, so a tool that echoes it shows
    /// `[REDACTED]`.
    pub fn api_key(mut self, key: impl Into<Option<&'a SecretString>>) -> Self {
        self.api_key = key.into();
        self
    }

    /// The loop's options (rounds, offline, streaming, schema profile,
    /// cancellation, events); [`ChatLoopOptions::new`] by default.
    pub fn options(mut self, options: ChatLoopOptions) -> Self {
        self.options = options;
        self
    }
}

impl std::fmt::Debug for ChatRun<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatRun")
            .field("provider", &self.config.provider)
            .field("messages", &self.messages.len())
            .field("api_key", &self.api_key.is_some())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl<'a> std::future::IntoFuture for ChatRun<'a> {
    type Output = Result<ChatOutcome, ChatError>;
    type IntoFuture =
        std::pin::Pin<Box<dyn std::future::Future<Output = Self::Output> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(run(
            self.scope,
            self.provider,
            self.config,
            self.api_key,
            self.messages,
            self.options,
        ))
    }
}

async fn run(
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
    let default_model = provider.default_model();
    let Some(model) = config
        .model
        .as_deref()
        .filter(|m| !m.trim().is_empty())
        .or(default_model.as_deref())
    else {
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
        if options.cancellation.is_cancelled() {
            return Err(ChatError::Cancelled);
        }
        let request = ChatRequest {
            config,
            api_key,
            model,
            messages,
            tools: &tools,
            stream: options.stream.then_some(sink),
            cancel: options.cancellation.clone(),
        };
        let span = model_call_span(&key, model);
        let response = tokio::select! {
            biased;
            () = options.cancellation.cancelled() => {
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
                terminated: false,
            });
        }
        if round == options.max_rounds {
            pending = message.tool_calls;
            break;
        }
        let results = run_batch(scope, &message.tool_calls, &options, &emit).await;
        let terminated = all_terminate(&results);
        let mut cancelled = false;
        for (call, result) in message.tool_calls.iter().zip(results) {
            match result {
                Some(ran) => {
                    tool_calls += 1;
                    messages.push(tool_message(&call.id, &ran.result));
                }
                None => {
                    cancelled = true;
                    messages.push(ChatMessage::tool(call.id.clone(), CANCELLED_TEXT));
                }
            }
        }
        if cancelled {
            return Err(ChatError::Cancelled);
        }
        if terminated {
            return Ok(ChatOutcome {
                message,
                finish_reason,
                rounds: round,
                tool_calls,
                terminated: true,
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
pub(crate) fn name_calls(calls: &mut [ToolCallRequest], round: usize) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

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
}
