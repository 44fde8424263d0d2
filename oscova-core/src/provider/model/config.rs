//! Which model provider a host uses and where its endpoint runs
//! ([`ModelProviderConfig`], [`EndpointScope`]), and the offline check
//! made from them ([`check_offline`]).
//!
//! Rules: a saved [`EndpointScope`] wins over the provider's design and
//! over the endpoint's text; without one, an explicit endpoint is judged by
//! its text alone ([`is_local_endpoint`], no DNS). A saved `local` that
//! the text does not back is the operator's choice, honoured and said so
//! ([`ModelProviderConfig::scope_override`], whose warning never shows the
//! endpoint's user info, query or fragment).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ModelError, ModelProvider};
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::locality::is_local_endpoint;
use crate::provider::ProviderTypeKey;

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
