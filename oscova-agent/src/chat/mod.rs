//! The tool-calling chat loop a host runs over one user scope and one model
//! provider.
//!
//! Rules: the offline check ([`check_offline`](oscova_core::provider::model::check_offline)) runs before anything is
//! sent, so a refused chat makes no connection. Every round is one model
//! call; the scope's tools go with it as wire names, descriptions and input
//! schemas exported in the loop's [`SchemaProfile`], and a tool whose schema
//! cannot be exported is left out with a tracing warning. Every tool call
//! the model asks for runs through [`UserScope::invoke`], in the order the
//! model gave them, so approval, hooks, argument checks and redaction all
//! apply; a refusal becomes a tool message telling the model so. The tool
//! calls of one model answer are a batch: they run concurrently (all
//! started together) unless any of their tools is sequential
//! (`#[tool(sequential)]`), then one at a time in the model's order; their
//! tool messages follow the model's order either way. The loop ends when
//! the model answers without tool calls; when every result of a batch is
//! terminating ([`ToolResult::terminate`](oscova_core::ToolResult::terminate)),
//! with no further model call ([`ChatOutcome::terminated`]); or fails with
//! [`ChatError::RoundLimit`] once `max_rounds` model calls were made. The
//! conversation in `messages` stays valid for the next turn whatever
//! happens: every tool call appended is answered by a tool message, even
//! when the round bound or a cancellation stops the loop.
//!
//! The loop sends no system prompt of its own; a host that wants the tools
//! to speak for themselves puts [`tools_prompt_section`] (their
//! `prompt_snippet` lines and `prompt_guidelines` bullets) in the system
//! message it starts `messages` with.
//!
//! The files: the public types are here; [`ChatEvent`] and its sink are in
//! `events.rs`, the loop ([`run_chat`]) in `rounds.rs`, one batch of tool
//! calls in `batch.rs`, what a tool result becomes for the model in
//! `messages.rs`, the system prompt's tools section in `prompt.rs`, and the
//! model call's tracing span in `span.rs`.

mod batch;
mod events;
mod messages;
mod prompt;
mod rounds;
mod span;

#[cfg(feature = "session")]
pub(crate) use batch::{join_in_order, prepare_arguments};
pub use events::{ChatEvent, ChatEventSink};
#[cfg(feature = "session")]
pub(crate) use messages::tool_message;
pub use prompt::{ToolsPromptSection, tools_prompt_section};
#[cfg(feature = "session")]
pub(crate) use rounds::name_calls;
pub use rounds::{ChatRun, run_chat};

use std::fmt;
use std::sync::Arc;

use oscova_core::provider::model::{ChatMessage, ModelError, ModelProvider, ToolSpec};
use oscova_core::{CancellationToken, PluginHost, UserScope};

use crate::profile::{SchemaProfile, export_schema};

/// The default bound on model calls in one [`run_chat`].
pub const DEFAULT_MAX_ROUNDS: usize = 8;

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
///     .cancellation(cancel.clone())
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
    pub cancellation: CancellationToken,
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
            cancellation: CancellationToken::new(),
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
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = token;
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
            .field("cancelled", &self.cancellation.is_cancelled())
            .field("on_event", &self.on_event.is_some())
            .finish()
    }
}

/// How a chat ended.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatOutcome {
    /// The model's final answer (also the last entry of `messages`); for a
    /// [`terminated`](Self::terminated) run, the last assistant message.
    pub message: ChatMessage,
    /// Why the model stopped, when the provider said.
    pub finish_reason: Option<String>,
    /// The model calls made.
    pub rounds: usize,
    /// The tool calls run (refused ones included).
    pub tool_calls: usize,
    /// Whether the run ended because every result of the last batch of
    /// tool calls was terminating
    /// ([`ToolResult::terminate`](oscova_core::ToolResult::terminate)):
    /// no model call followed it. `message` is then the assistant message
    /// that asked for those calls, and `messages` ends with their results.
    pub terminated: bool,
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

/// The type keys of the model providers `host` built, sorted, each once:
/// what [`model_provider`] can find, for an error to list.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use oscova_agent::chat::model_provider_keys;
/// use oscova_core::PluginHost;
///
/// let host = PluginHost::builder().no_linked_plugins().build()?;
/// assert!(model_provider_keys(&host).is_empty());
/// # Ok(())
/// # }
/// ```
pub fn model_provider_keys(host: &PluginHost) -> Vec<String> {
    let mut keys: Vec<String> = host
        .providers::<dyn ModelProvider>()
        .iter()
        .map(|p| p.provider().type_key().to_string())
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// The tools of `scope` as a model sees them, with schemas exported in
/// `profile`. A tool whose schema the profile cannot express is left out,
/// with a tracing warning naming it.
pub fn tool_specs(scope: &UserScope, profile: SchemaProfile) -> Vec<ToolSpec> {
    scope
        .tools()
        .filter_map(|tool| export_tool(tool, profile))
        .collect()
}

/// `tool` as a model sees it, its schema exported in `profile`; `None`,
/// with a tracing warning naming it, when the profile cannot express it.
pub(crate) fn export_tool(
    tool: &oscova_core::host::PublishedTool,
    profile: SchemaProfile,
) -> Option<ToolSpec> {
    match export_schema(tool.input_schema(), profile) {
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancellation_from_the_provider_is_a_chat_cancellation() {
        assert!(matches!(
            ChatError::from(ModelError::Cancelled),
            ChatError::Cancelled
        ));
    }
}
