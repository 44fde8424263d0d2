//! The `ollama` model provider: chat over `/api/chat` and the model list
//! from `/api/tags`.
//!
//! Rules: local by design (`default_is_local_endpoint` is true), though a
//! saved endpoint scope still wins, which the host checks with
//! `check_offline` before calling. Every request goes through
//! `HttpClient::for_endpoint`, so an endpoint that looks local is reached
//! only if it resolves to this machine. The provider holds only its HTTP
//! client, never a key; a key, when given (an Ollama behind an
//! authenticating proxy), is sent as a bearer token and kept out of errors.
//! Cancellation is checked while connecting and between body pieces, and
//! dropping the response closes the connection. An unknown model is looked
//! up in `/api/tags`, so the error lists the models the server has.

use oscova_core::http::backend::{
    Body, Failure, Scrub, authorized, check_status, endpoint_url, get_text, send,
};
use oscova_core::provider::model::{
    ChatRequest, ChatResponse, ModelDownloadProvider, ModelError, ModelInfo, ModelProvider,
    ModelProviderConfig,
};
use oscova_core::provider::{BoxFuture, ProviderTypeKey};
use oscova_core::{CancellationToken, HttpClient, SecretString};

use crate::api::{ChatStream, chat_body, error_text, is_missing_model, parse_line, parse_tags};
use crate::lines::read_lines;

/// The provider type key, `"ollama"`.
pub const OLLAMA_PROVIDER_KEY: &str = "ollama";

/// The endpoint used when the configuration names none.
pub const DEFAULT_OLLAMA_ENDPOINT: &str = "http://127.0.0.1:11434";

/// Whole answers and model lists are read up to this many bytes.
pub(crate) const MAX_ANSWER: usize = 32 * 1024 * 1024;

/// A chat model served by Ollama, which can also download models.
///
/// ```
/// use oscova_core::HttpClient;
/// use oscova_core::provider::model::{ModelProvider, ModelProviderConfig};
/// use oscova_plugin_ollama::OllamaProvider;
///
/// let provider = OllamaProvider::new(HttpClient::shared_default());
/// assert_eq!(provider.type_key(), "ollama");
/// assert!(provider.default_is_local_endpoint());
/// assert!(provider.downloads().is_some());
/// let mut config = ModelProviderConfig::new("ollama");
/// assert_eq!(OllamaProvider::base_url(&config), "http://127.0.0.1:11434");
/// config.endpoint = Some("localhost:11434/".into());
/// assert_eq!(OllamaProvider::base_url(&config), "http://localhost:11434");
/// ```
#[derive(Debug, Clone)]
pub struct OllamaProvider {
    http: HttpClient,
}

impl OllamaProvider {
    /// A provider sending through `http`. A client whose scope follows the
    /// running tool is switched to an unrestricted one: providers are not
    /// tools, and reach the endpoint an operator configured.
    pub fn new(http: HttpClient) -> Self {
        Self {
            http: http.unrestricted(),
        }
    }

    /// The client for `config`'s endpoint: a local-looking one is reached
    /// only if it resolves to this machine, a saved `local` one only at its
    /// own host and port ([`HttpClient::for_endpoint`]).
    pub(crate) fn http_for(&self, config: &ModelProviderConfig) -> HttpClient {
        self.http
            .for_endpoint(&Self::base_url(config), config.endpoint_scope)
    }

    /// The server's base URL: the configured endpoint (or
    /// [`DEFAULT_OLLAMA_ENDPOINT`]) without trailing `/`, with `http://`
    /// added when no scheme is given (as `OLLAMA_HOST` is often written).
    pub fn base_url(config: &ModelProviderConfig) -> String {
        endpoint_url(config, DEFAULT_OLLAMA_ENDPOINT)
    }

    /// The models installed on the server (`GET /api/tags`), by name.
    pub async fn list_models(
        &self,
        config: &ModelProviderConfig,
        api_key: Option<&SecretString>,
        cancel: CancellationToken,
    ) -> Result<Vec<ModelInfo>, ModelError> {
        let url = format!("{}/api/tags", Self::base_url(config));
        let scrub = Scrub::new(api_key);
        let body = get_text(
            &self.http_for(config),
            &url,
            api_key,
            MAX_ANSWER,
            &cancel,
            &scrub,
            |f| plain_failure(f, &url, &scrub),
        )
        .await?;
        parse_tags(&body)
    }

    /// `ModelNotFound` for `model`, with the installed names (best effort).
    pub(crate) async fn model_not_found(
        &self,
        config: &ModelProviderConfig,
        api_key: Option<&SecretString>,
        model: &str,
        cancel: CancellationToken,
    ) -> ModelError {
        let available = self
            .list_models(config, api_key, cancel)
            .await
            .map(|models| models.into_iter().map(|m| m.name).collect())
            .unwrap_or_default();
        ModelError::ModelNotFound {
            model: model.to_owned(),
            available,
        }
    }

    async fn complete(&self, request: ChatRequest<'_>) -> Result<ChatResponse, ModelError> {
        let url = format!("{}/api/chat", Self::base_url(request.config));
        let scrub = Scrub::new(request.api_key);
        let cancel = request.cancel.clone();
        let body = chat_body(&request, request.stream.is_some());
        let http = authorized(
            self.http_for(request.config).post(&url).json(&body),
            request.api_key,
        );

        let response = send(http, &url, &cancel, &scrub).await?;
        let response = match check_status(response, &url, &cancel, &scrub).await? {
            Ok(response) => response,
            Err(failure) => {
                let missing = failure.status == 404
                    && parse_line(&failure.body)
                        .ok()
                        .and_then(|o| error_text(&o))
                        .is_some_and(|e| is_missing_model(&e));
                if missing {
                    return Err(self
                        .model_not_found(request.config, request.api_key, request.model, cancel)
                        .await);
                }
                return Err(plain_failure(failure, &url, &scrub));
            }
        };

        let body = Body::new(response, &url);
        let mut stream = ChatStream::new(request.stream);
        read_lines(body, &cancel, &scrub, &mut |line| stream.on_line(line)).await?;
        if let Some(error) = stream.take_server_error() {
            if is_missing_model(&error) {
                return Err(self
                    .model_not_found(request.config, request.api_key, request.model, cancel)
                    .await);
            }
            return Err(ModelError::Other(format!(
                "the server reported an error: {}",
                scrub.text(&error)
            )));
        }
        stream.finish()
    }
}

impl Default for OllamaProvider {
    /// A provider over the process-wide HTTP pools.
    fn default() -> Self {
        Self::new(HttpClient::shared_default())
    }
}

/// 401 points at the key; anything else keeps the server's words.
pub(crate) fn plain_failure(failure: Failure, url: &str, scrub: &Scrub) -> ModelError {
    if failure.status == 401 {
        return ModelError::Unauthorized {
            url: url.to_owned(),
        };
    }
    let body = parse_line(&failure.body)
        .ok()
        .and_then(|o| error_text(&o))
        .unwrap_or(failure.body);
    ModelError::Status {
        status: failure.status,
        body: scrub.text(&body),
    }
}

impl ModelProvider for OllamaProvider {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static(OLLAMA_PROVIDER_KEY)
    }

    fn display_name(&self) -> &str {
        "Ollama"
    }

    fn default_is_local_endpoint(&self) -> bool {
        true
    }

    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(self.complete(request))
    }

    fn downloads(&self) -> Option<&dyn ModelDownloadProvider> {
        Some(self)
    }
}
