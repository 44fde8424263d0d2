//! Model provider contracts: chat with tools, and optional model downloads.
//!
//! The types here are provider-neutral; back ends translate them to their
//! wire formats. Streaming is a callback on the request, so a provider that
//! cannot stream simply never calls it. Endpoint scope follows the Oscova
//! rule: a saved [`EndpointScope`] in the configuration wins, over
//! [`ModelProvider::default_is_local_endpoint`] and over what the
//! endpoint's text says. The contract carries no offline flag: hosts call
//! [`check_offline`] before any chat or download request, so a refusal
//! never reaches the provider.
//!
//! Rules for locality: the offline check is decided from the endpoint's
//! text ([`is_local_endpoint`]) and the saved scope; providers then send
//! through [`HttpClient::for_endpoint`](crate::HttpClient::for_endpoint),
//! which reaches a local-looking endpoint under the `Local` rule, so a
//! name that looks local but resolves to another machine is refused
//! before connecting ([`ModelError::Refused`]). A saved `local` for an
//! endpoint that does not name this machine (a LAN server) is the
//! operator's explicit choice and wins: offline checks pass, the provider
//! reaches exactly that endpoint's host and port and nothing else, and
//! [`ModelProviderConfig::scope_override`] is the warning a host shows.
//! A saved `remote` always wins the other way.

use std::fmt;

use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::{BoxFuture, ProviderTypeKey, ready};
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::locality::is_local_endpoint;

mod error;
pub use error::ModelError;

/// Where a configured endpoint runs, as a user saved it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndpointScope {
    /// On this machine.
    Local,
    /// Anywhere else.
    Remote,
}

/// Which model provider to use and how.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ModelProviderConfig {
    /// The provider type key.
    #[serde(rename = "type")]
    pub provider: ProviderTypeKey,
    /// The service endpoint; `None` means the provider's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// The model to use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A saved endpoint-scope choice; wins over the provider's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint_scope: Option<EndpointScope>,
    /// Provider-specific settings.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub options: Map<String, Value>,
}

impl ModelProviderConfig {
    /// A configuration for provider `key` with nothing else set; the
    /// setters below fill the rest, as [`SpeechProviderConfig`]'s do.
    ///
    /// ```
    /// use oscova_core::provider::model::{EndpointScope, ModelProviderConfig};
    ///
    /// let config = ModelProviderConfig::new("ollama")
    ///     .model("llama3.2")
    ///     .endpoint("http://10.0.0.5:11434")
    ///     .endpoint_scope(EndpointScope::Local)
    ///     .option("temperature", 0.2);
    /// assert_eq!(config.model.as_deref(), Some("llama3.2"));
    /// assert_eq!(config.options["temperature"], 0.2);
    /// assert!(config.is_local(false));
    /// ```
    ///
    /// [`SpeechProviderConfig`]: crate::provider::speech::SpeechProviderConfig
    pub fn new(key: impl Into<ProviderTypeKey>) -> Self {
        Self {
            provider: key.into(),
            ..Self::default()
        }
    }

    /// Sets the endpoint.
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// Sets the model.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Saves where the endpoint runs (see [`is_local`](Self::is_local)).
    pub fn endpoint_scope(mut self, scope: EndpointScope) -> Self {
        self.endpoint_scope = Some(scope);
        self
    }

    /// Sets provider-specific setting `key` (replacing an earlier value).
    pub fn option(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.options.insert(key.into(), value.into());
        self
    }

    /// Whether calls with this configuration count as staying on this
    /// machine.
    ///
    /// A saved scope wins: [`EndpointScope::Remote`] makes even a
    /// local-looking endpoint remote, and [`EndpointScope::Local`] makes an
    /// explicit endpoint local whatever its text says (the operator's
    /// choice for a server on their own network; see
    /// [`scope_override`](Self::scope_override)). Without a saved scope an
    /// explicit endpoint is judged by its text alone (no DNS; the resolved
    /// addresses are checked when the provider connects). Without an
    /// endpoint the provider's design decides, even under a saved `Local`:
    /// that choice was saved for an endpoint, and there is none to hold it
    /// to.
    pub fn is_local(&self, default_is_local: bool) -> bool {
        match (self.endpoint_scope, &self.endpoint) {
            (Some(EndpointScope::Remote), _) => false,
            (Some(EndpointScope::Local), Some(_)) => true,
            (None, Some(endpoint)) => is_local_endpoint(endpoint),
            (_, None) => default_is_local,
        }
    }

    /// A warning when a saved `local` scope is all that makes the endpoint
    /// local: its text does not name this machine, so offline operation
    /// will send data to it. `None` otherwise. Creating it logs it; hosts
    /// also show it to the operator.
    ///
    /// ```
    /// use oscova_core::provider::model::{EndpointScope, ModelProviderConfig};
    ///
    /// let mut config = ModelProviderConfig::new("ollama");
    /// config.endpoint = Some("http://10.0.0.5:11434".into());
    /// assert!(config.scope_override().is_none()); // not saved: not local
    /// config.endpoint_scope = Some(EndpointScope::Local);
    /// let warning = config.scope_override().unwrap();
    /// assert!(warning.message.contains("`http://10.0.0.5:11434`"));
    /// ```
    pub fn scope_override(&self) -> Option<Diagnostic> {
        let endpoint = self.endpoint.as_deref()?;
        if self.endpoint_scope != Some(EndpointScope::Local) || is_local_endpoint(endpoint) {
            return None;
        }
        Some(Diagnostic::warning(
            DiagnosticKind::EndpointScopeOverride,
            None,
            format!(
                "provider `{}`: endpoint `{}` does not name this machine, but its saved \
                 endpoint_scope is `local`, so it is treated as local and offline operation \
                 sends data to it (to that host and port only)",
                self.provider,
                shown_endpoint(endpoint)
            ),
        ))
    }
}

/// An endpoint as a warning shows it: without user info, query or
/// fragment, which may hold credentials.
#[cfg(feature = "http")]
fn shown_endpoint(endpoint: &str) -> String {
    match reqwest::Url::parse(endpoint) {
        Ok(mut url) if url.has_host() => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.set_query(None);
            url.set_fragment(None);
            url.as_str().trim_end_matches('/').to_owned()
        }
        _ => endpoint
            .rsplit_once('@')
            .map_or(endpoint, |(_, host)| host)
            .to_owned(),
    }
}

/// [`shown_endpoint`] without a URL parser: the text after the last `@`
/// (user info), cut at the first `?` or `#`.
#[cfg(not(feature = "http"))]
fn shown_endpoint(endpoint: &str) -> String {
    let end = endpoint.find(['?', '#']).unwrap_or(endpoint.len());
    let endpoint = &endpoint[..end];
    let shown = match endpoint.split_once("://") {
        Some((scheme, rest)) => {
            let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
            format!("{scheme}://{rest}")
        }
        None => endpoint
            .rsplit_once('@')
            .map_or(endpoint, |(_, host)| host)
            .to_owned(),
    };
    shown.trim_end_matches('/').to_owned()
}

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

/// A model a provider can download.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// The model name.
    pub name: String,
    /// Its size in bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Whether it is already on the machine.
    #[serde(default)]
    pub installed: bool,
    /// The licence of its weights (an SPDX name such as `Apache-2.0`),
    /// when the provider knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
}

impl ModelInfo {
    /// A model named `name`, of unknown size and licence, not installed.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            size: None,
            installed: false,
            license: None,
        }
    }
}

/// Download progress.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DownloadProgress {
    /// What is happening (`pulling manifest`, `downloading`, ...).
    pub status: String,
    /// Bytes done of the current part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed: Option<u64>,
    /// Bytes of the current part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
}

/// A chat model back end.
pub trait ModelProvider: Send + Sync + 'static {
    /// The stable type key.
    fn type_key(&self) -> ProviderTypeKey;
    /// A name for people.
    fn display_name(&self) -> &str;
    /// Whether the provider is local by design (for example Ollama).
    fn default_is_local_endpoint(&self) -> bool {
        false
    }
    /// The model used when the configuration names none; `None` (the
    /// default) when the provider has no such model and one must be
    /// configured. An embedded provider with a catalog names its default.
    fn default_model(&self) -> Option<String> {
        None
    }
    /// Sends a conversation and returns the answer.
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>>;
    /// The download side, when the provider's service manages models.
    fn downloads(&self) -> Option<&dyn ModelDownloadProvider> {
        None
    }
    /// The models a person can pick from: by default the download side's
    /// catalog (installed ones marked), else [`ModelError::Unsupported`].
    /// A provider whose server lists its models (an OpenAI-compatible
    /// `GET /v1/models`) overrides this.
    fn list_models<'a>(
        &'a self,
        config: &'a ModelProviderConfig,
        api_key: Option<&'a SecretString>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<ModelInfo>, ModelError>> {
        match self.downloads() {
            Some(downloads) => downloads.catalog(config, api_key, cancel),
            None => ready(Err(ModelError::Unsupported {
                provider: self.type_key().to_string(),
                operation: "list models",
            })),
        }
    }
    /// Releases resources; called once at host shutdown.
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        ready(())
    }
}

/// A provider whose service owns model acquisition.
pub trait ModelDownloadProvider: Send + Sync {
    /// The models that can be downloaded (or already are).
    fn catalog<'a>(
        &'a self,
        config: &'a ModelProviderConfig,
        api_key: Option<&'a SecretString>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<ModelInfo>, ModelError>>;

    /// Downloads `model`, reporting progress; cancellation stops the transfer.
    fn download<'a>(
        &'a self,
        config: &'a ModelProviderConfig,
        api_key: Option<&'a SecretString>,
        model: &'a str,
        progress: &'a (dyn Fn(DownloadProgress) + Send + Sync),
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<(), ModelError>>;
}

/// Refuses a call that would leave the machine when offline operation is
/// required. Hosts call it before every chat or download request, so a
/// refused call makes no connection at all.
///
/// The decision is [`ModelProviderConfig::is_local`] with the provider's
/// [`default_is_local_endpoint`](ModelProvider::default_is_local_endpoint):
/// a saved [`EndpointScope`] wins, and an explicit endpoint is judged by the
/// same text-only locality function the speech routers use. What the text
/// says is checked again on the resolved addresses when the provider sends
/// through [`HttpClient::for_endpoint`](crate::HttpClient::for_endpoint). A
/// check that passes only because of a saved `local` logs
/// [`ModelProviderConfig::scope_override`]'s warning.
///
/// ```
/// use oscova_core::provider::model::{check_offline, EndpointScope, ModelProviderConfig};
/// # use oscova_core::provider::model::*;
/// # use oscova_core::provider::{BoxFuture, ProviderTypeKey};
/// # struct Local;
/// # impl ModelProvider for Local {
/// #     fn type_key(&self) -> ProviderTypeKey { "ollama".into() }
/// #     fn display_name(&self) -> &str { "Ollama" }
/// #     fn default_is_local_endpoint(&self) -> bool { true }
/// #     fn chat<'a>(&'a self, _: ChatRequest<'a>) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
/// #         Box::pin(async { Err(ModelError::Other("unused".into())) })
/// #     }
/// # }
/// let mut config = ModelProviderConfig::new("ollama");
/// assert!(check_offline(&config, &Local, true).is_ok()); // local by design
/// config.endpoint_scope = Some(EndpointScope::Remote); // the saved choice wins
/// assert!(check_offline(&config, &Local, true).is_err());
/// assert!(check_offline(&config, &Local, false).is_ok()); // offline not required
/// ```
pub fn check_offline(
    config: &ModelProviderConfig,
    provider: &dyn ModelProvider,
    offline: bool,
) -> Result<(), ModelError> {
    if !offline {
        return Ok(());
    }
    if config.is_local(provider.default_is_local_endpoint()) {
        // Created for its log line: the operator's choice is honoured, and
        // said so.
        let _ = config.scope_override();
        return Ok(());
    }
    Err(match &config.endpoint {
        Some(endpoint) => ModelError::NotLocal {
            endpoint: endpoint.clone(),
        },
        None => ModelError::NoLocalEndpoint {
            provider: provider.type_key().to_string(),
        },
    })
}

#[cfg(test)]
mod tests;
