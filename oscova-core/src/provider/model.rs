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
//! text ([`is_local_endpoint`](crate::locality::is_local_endpoint)) and
//! the saved scope; providers then send
//! through [`HttpClient::for_endpoint`](crate::HttpClient::for_endpoint),
//! which reaches a local-looking endpoint under the `Local` rule, so a
//! name that looks local but resolves to another machine is refused
//! before connecting ([`ModelError::Refused`]). A saved `local` for an
//! endpoint that does not name this machine (a LAN server) is the
//! operator's explicit choice and wins: offline checks pass, the provider
//! reaches exactly that endpoint's host and port and nothing else, and
//! [`ModelProviderConfig::scope_override`] is the warning a host shows.
//! A saved `remote` always wins the other way.

mod chat;
mod config;
mod download;
mod error;

pub use chat::{
    ChatMessage, ChatRequest, ChatResponse, ChatRole, ChatStreamEvent, ChatStreamSink, TokenUsage,
    ToolCallRequest, ToolSpec,
};
pub use config::{EndpointScope, ModelProviderConfig, check_offline};
pub use download::{DownloadProgress, ModelDownloadProvider, ModelInfo};
pub use error::ModelError;

use secrecy::SecretString;
use tokio_util::sync::CancellationToken;

use super::{BoxFuture, ProviderTypeKey, ready};

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
#[cfg(test)]
mod tests;
