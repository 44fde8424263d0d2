//! The `openai` model provider: chat completions over HTTP.
//!
//! Rules: the provider holds no state but its HTTP client, and never the
//! key, so it is shared by every user and its `Debug` shows no secret.
//! Every request goes through `HttpClient::for_endpoint`, so an endpoint
//! that looks local is reached only if it resolves to this machine.
//! Each call checks its cancellation token while it connects and between
//! body pieces, and dropping the response on cancel closes the connection.
//! Errors are the actionable [`ModelError`] variants: the URL when the
//! server cannot be reached, the key on 401, the server's model names on
//! an unknown model, the offending line on a malformed stream.

use oscova_core::http::backend::{
    Body, Failure, Scrub, authorized, check_status, endpoint_url, excerpt, get_text, send,
};
use oscova_core::provider::model::{
    ChatRequest, ChatResponse, ChatStreamEvent, ModelError, ModelProvider, ModelProviderConfig,
};
use oscova_core::provider::{BoxFuture, ProviderTypeKey};
use oscova_core::{CancellationToken, HttpClient, SecretString};
use serde_json::Value;

use crate::api::{StreamState, parse_response, request_body};
use crate::sse::SseParser;

/// The provider type key, `"openai"`.
pub const OPENAI_PROVIDER_KEY: &str = "openai";

/// The endpoint used when the configuration names none.
pub const DEFAULT_OPENAI_ENDPOINT: &str = "https://api.openai.com";

/// Whole (non-streamed) answers are read up to this many bytes.
const MAX_ANSWER: usize = 32 * 1024 * 1024;

/// A chat model behind any OpenAI-compatible `/v1/chat/completions`.
///
/// ```
/// use oscova_core::HttpClient;
/// use oscova_core::provider::model::{ModelProvider, ModelProviderConfig};
/// use oscova_plugin_openai::OpenAiProvider;
///
/// let provider = OpenAiProvider::new(HttpClient::shared_default());
/// assert_eq!(provider.type_key(), "openai");
/// assert!(!provider.default_is_local_endpoint());
/// let mut config = ModelProviderConfig::new("openai");
/// assert_eq!(OpenAiProvider::base_url(&config), "https://api.openai.com/v1");
/// config.endpoint = Some("http://127.0.0.1:8080/v1/".into());
/// assert_eq!(OpenAiProvider::base_url(&config), "http://127.0.0.1:8080/v1");
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    http: HttpClient,
}

impl OpenAiProvider {
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
    fn http_for(&self, config: &ModelProviderConfig) -> HttpClient {
        self.http
            .for_endpoint(&Self::base_url(config), config.endpoint_scope)
    }

    /// The API base the paths are joined to: the configured endpoint (or
    /// [`DEFAULT_OPENAI_ENDPOINT`]) without trailing `/`, with `http://`
    /// added when no scheme is given, and `/v1` added unless it already
    /// ends with it.
    pub fn base_url(config: &ModelProviderConfig) -> String {
        let endpoint = endpoint_url(config, DEFAULT_OPENAI_ENDPOINT);
        if endpoint.ends_with("/v1") {
            endpoint
        } else {
            format!("{endpoint}/v1")
        }
    }

    /// The model ids the server offers (`GET /v1/models`), sorted.
    pub async fn list_models(
        &self,
        config: &ModelProviderConfig,
        api_key: Option<&SecretString>,
        cancel: CancellationToken,
    ) -> Result<Vec<String>, ModelError> {
        let url = format!("{}/models", Self::base_url(config));
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
        let value: Value = serde_json::from_str(&body).map_err(|e| ModelError::Malformed {
            message: format!("the model list is not JSON ({e})"),
            line: excerpt(&body),
        })?;
        let mut names: Vec<String> = value
            .get("data")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_owned))
            .collect();
        names.sort();
        Ok(names)
    }

    async fn complete(&self, request: ChatRequest<'_>) -> Result<ChatResponse, ModelError> {
        let base = Self::base_url(request.config);
        let url = format!("{base}/chat/completions");
        let scrub = Scrub::new(request.api_key);
        let cancel = request.cancel.clone();
        let streaming = request.stream.is_some();
        let body = request_body(&request, streaming);
        let mut http = self.http_for(request.config).post(&url).json(&body);
        if streaming {
            http = http.header("accept", "text/event-stream");
        }
        let http = authorized(http, request.api_key);

        let response = send(http, &url, &cancel, &scrub).await?;
        let response = match check_status(response, &url, &cancel, &scrub).await? {
            Ok(response) => response,
            Err(failure) => {
                return Err(self.failure(failure, &request, &url, &scrub).await);
            }
        };
        let is_sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().contains("text/event-stream"));
        let mut body = Body::new(response, &url);

        if !is_sse {
            // Not streamed (asked so, or the server ignored `stream`).
            let text = body.text(MAX_ANSWER, &cancel, &scrub).await?;
            let answer = parse_response(&text, &scrub)?;
            if let Some(sink) = request.stream {
                if !answer.message.content.is_empty() {
                    sink(ChatStreamEvent::Text(answer.message.content.clone()));
                }
                for call in &answer.message.tool_calls {
                    sink(ChatStreamEvent::ToolCallStarted {
                        id: call.id.clone(),
                        name: call.name.clone(),
                    });
                }
            }
            return Ok(answer);
        }

        let mut parser = SseParser::default();
        let mut state = StreamState::new(request.stream, &scrub);
        while let Some(chunk) = body.next(&cancel, &scrub).await? {
            parser.push(chunk.as_ref(), &mut |data| {
                // A callback may cancel mid-chunk; the events after it are not read.
                if cancel.is_cancelled() {
                    return Err(ModelError::Cancelled);
                }
                state.on_data(data)
            })?;
            if state.is_done() {
                break;
            }
        }
        if !state.is_done() {
            parser.finish(&mut |data| state.on_data(data))?;
        }
        state.finish()
    }

    /// Turns an error answer into the error a user can act on.
    async fn failure(
        &self,
        failure: Failure,
        request: &ChatRequest<'_>,
        url: &str,
        scrub: &Scrub,
    ) -> ModelError {
        if failure.status == 404 && mentions_model(&failure.body) {
            // Best effort: an unknown model is worth a list of known ones.
            let available = self
                .list_models(request.config, request.api_key, request.cancel.clone())
                .await
                .unwrap_or_default();
            return ModelError::ModelNotFound {
                model: request.model.to_owned(),
                available,
            };
        }
        plain_failure(failure, url, scrub)
    }
}

impl Default for OpenAiProvider {
    /// A provider over the process-wide HTTP pools.
    fn default() -> Self {
        Self::new(HttpClient::shared_default())
    }
}

/// Whether a 404 body is about the model rather than a wrong path.
fn mentions_model(body: &str) -> bool {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return false;
    };
    let error = value.get("error").unwrap_or(&value);
    let code = error
        .get("code")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let message = match error {
        Value::String(text) => text.as_str(),
        other => other
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default(),
    };
    code == "model_not_found" || message.to_ascii_lowercase().contains("model")
}

fn plain_failure(failure: Failure, url: &str, scrub: &Scrub) -> ModelError {
    match failure.status {
        401 => ModelError::Unauthorized {
            url: url.to_owned(),
        },
        status => ModelError::Status {
            status,
            body: scrub.text(&failure.body),
        },
    }
}

impl ModelProvider for OpenAiProvider {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static(OPENAI_PROVIDER_KEY)
    }

    fn display_name(&self) -> &str {
        "OpenAI-compatible chat completions"
    }

    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(self.complete(request))
    }

    /// What `GET /v1/models` offers; every model offered is usable, so
    /// each is "installed".
    fn list_models<'a>(
        &'a self,
        config: &'a ModelProviderConfig,
        api_key: Option<&'a SecretString>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<oscova_core::provider::model::ModelInfo>, ModelError>> {
        Box::pin(async move {
            let names = OpenAiProvider::list_models(self, config, api_key, cancel).await?;
            Ok(names
                .into_iter()
                .map(|name| {
                    let mut info = oscova_core::provider::model::ModelInfo::new(name);
                    info.installed = true;
                    info
                })
                .collect())
        })
    }
}
