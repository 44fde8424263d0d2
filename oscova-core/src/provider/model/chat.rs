//! A chat call and its answer: the messages of a conversation, the tools
//! offered, the streamed pieces, and the tokens a call used.
//!
//! Rules: these types are provider-neutral, and each back end translates
//! them to its wire format; streaming is a callback on the request
//! ([`ChatRequest::stream`]), so a provider that cannot stream simply
//! never calls it; a request's `Debug` never shows the API key.

use std::fmt;

use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::ModelProviderConfig;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChatRole {
    /// Instructions.
    System,
    /// The person.
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRequest {
    /// The provider's id for the call, echoed back with the result.
    pub id: String,
    /// The wire name of the tool.
    pub name: String,
    /// The arguments (an object).
    pub arguments: Value,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who said it.
    pub role: ChatRole,
    /// The text.
    pub content: String,
    /// Tool calls (assistant messages only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallRequest>,
    /// The call this answers (tool messages only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Images, audio and binary resources a tool result carried (tool
    /// messages only), for the providers whose API can take them; each
    /// provider says what it does with them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<crate::tool::ContentBlock>,
}

impl ChatMessage {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::plain(ChatRole::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::plain(ChatRole::User, content)
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCallRequest>) -> Self {
        Self {
            role: ChatRole::Assistant,
            content: content.into(),
            tool_calls,
            tool_call_id: None,
            attachments: Vec::new(),
        }
    }

    /// A tool result answering `call_id`.
    pub fn tool(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: ChatRole::Tool,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
            attachments: Vec::new(),
        }
    }

    /// Adds blocks with bytes (images, audio, blob resources) to a tool
    /// message.
    pub fn with_attachments(mut self, blocks: Vec<crate::tool::ContentBlock>) -> Self {
        self.attachments = blocks;
        self
    }

    fn plain(role: ChatRole, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            attachments: Vec::new(),
        }
    }
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The wire name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The input schema, in the profile the provider needs.
    pub parameters: Value,
}

/// A piece of a streamed answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ChatStreamEvent {
    /// More answer text.
    Text(String),
    /// The model started a tool call.
    ToolCallStarted {
        /// The call id.
        id: String,
        /// The tool's wire name.
        name: String,
    },
}

/// Receives streamed pieces as they arrive.
pub type ChatStreamSink<'a> = &'a (dyn Fn(ChatStreamEvent) + Send + Sync);

/// A chat call.
#[derive(Clone)]
pub struct ChatRequest<'a> {
    /// The selected configuration.
    pub config: &'a ModelProviderConfig,
    /// The plaintext API key, if any.
    pub api_key: Option<&'a SecretString>,
    /// The model to use.
    pub model: &'a str,
    /// The conversation so far.
    pub messages: &'a [ChatMessage],
    /// Tools the model may call.
    pub tools: &'a [ToolSpec],
    /// Where to send streamed pieces; `None` asks for one whole answer.
    pub stream: Option<ChatStreamSink<'a>>,
    /// Cancellation for the call.
    pub cancel: CancellationToken,
}

impl fmt::Debug for ChatRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatRequest")
            .field("config", &self.config)
            .field("api_key", &self.api_key.map(|_| "[REDACTED]"))
            .field("model", &self.model)
            .field("messages", &self.messages.len())
            .field("tools", &self.tools.len())
            .field("stream", &self.stream.is_some())
            .finish()
    }
}

/// The model's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The assistant message, with any tool calls.
    pub message: ChatMessage,
    /// Why the model stopped (`stop`, `tool_calls`, `length`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The tokens the call used, when the provider reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TokenUsage>,
}

/// The tokens one model call used, as its provider reported them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Tokens of the prompt (OpenAI's `prompt_tokens`, Ollama's
    /// `prompt_eval_count`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Tokens of the answer (OpenAI's `completion_tokens`, Ollama's
    /// `eval_count`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Of the prompt's tokens, those the provider did not read again
    /// because it had them cached from an earlier call (what OpenAI
    /// reports as `prompt_tokens_details.cached_tokens`; the embedded
    /// `llamacpp` provider reports its reused KV cache here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
}

impl TokenUsage {
    /// The usage in `object` under the two field names given, or `None`
    /// when it has neither.
    pub fn from_fields(
        object: &serde_json::Map<String, serde_json::Value>,
        input: &str,
        output: &str,
    ) -> Option<Self> {
        let usage = Self {
            input_tokens: object.get(input).and_then(serde_json::Value::as_u64),
            output_tokens: object.get(output).and_then(serde_json::Value::as_u64),
            cached_input_tokens: None,
        };
        (usage != Self::default()).then_some(usage)
    }
}
