//! The `openai` provider: recognition and synthesis through an
//! OpenAI-compatible HTTP API.
//!
//! Rules: the endpoint is the service's base URL without `/v1` (for example
//! `https://api.openai.com` or `http://127.0.0.1:8000/`); the API paths are
//! appended to its path with exactly one `/`. Requests go through the host's
//! [`HttpClient::for_endpoint`]: to an endpoint that
//! [`is_local_endpoint`](oscova_core::locality::is_local_endpoint)
//! accepts under the `Local` rule (no proxy, and a name that resolves to
//! another machine is refused before connecting), to any other unrestricted. The router has already refused a non-local endpoint when offline
//! operation is required. The API key travels only in the `Authorization`
//! header, which is marked sensitive; it is never stored, never put in an
//! error, and removed from any response body quoted in an error. URLs in
//! errors lose their user info and query. Every request can be cancelled:
//! the in-flight request future is dropped, which closes the connection.
//! Answers are read up to 64 MiB; a longer one is an error,
//! not a cut file. Sending, reading and the scrubbing of server text are
//! the model back ends' plumbing ([`oscova_core::http::backend`]), so these errors
//! follow the same rules as theirs.

use oscova_core::http::backend::{Body, Scrub, authorized, check_status, send};
use oscova_core::provider::speech::{
    RecognitionRequest, SpeechError, SpeechProviderKeys, SpeechRecognitionProvider,
    SpeechSynthesisProvider, SynthesisRequest, SynthesizedAudio, Transcript,
};
use oscova_core::provider::{BoxFuture, ProviderTypeKey};
use oscova_core::{CancellationToken, HttpClient, SecretString, http::HttpRequestBuilder};
use reqwest::Url;
use serde::{Deserialize, Serialize};

use crate::error::EngineError;

/// The endpoint used when the configuration has none.
pub(crate) const OPENAI_DEFAULT_ENDPOINT: &str = "https://api.openai.com";
/// The transcription model used when the configuration has none.
pub(crate) const OPENAI_DEFAULT_TRANSCRIPTION_MODEL: &str = "whisper-1";
/// The speech model used when the configuration has none.
pub(crate) const OPENAI_DEFAULT_SPEECH_MODEL: &str = "tts-1";
/// The voice used when neither the request nor the configuration names one.
pub(crate) const OPENAI_DEFAULT_VOICE: &str = "alloy";

/// The most of an answer that is read, in bytes: five minutes of 48 kHz
/// stereo WAV fit, with room to spare.
const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// The built-in `openai` provider (type key [`SpeechProviderKeys::OPENAI`])
/// for recognition (`POST {endpoint}/v1/audio/transcriptions`) and synthesis
/// (`POST {endpoint}/v1/audio/speech`, WAV asked for) against any
/// OpenAI-compatible server.
///
/// The endpoint is the configuration's, else [`DEFAULT_ENDPOINT`](Self::DEFAULT_ENDPOINT);
/// the model the configuration's, else [`DEFAULT_TRANSCRIPTION_MODEL`](Self::DEFAULT_TRANSCRIPTION_MODEL)
/// or [`DEFAULT_SPEECH_MODEL`](Self::DEFAULT_SPEECH_MODEL); the voice the request's, else the
/// configuration's, else [`DEFAULT_VOICE`](Self::DEFAULT_VOICE) (not checked: compatible
/// servers have their own). A configured `language` is sent to the
/// transcription API as its primary subtag (`en-US` → `en`). The bearer key
/// is the request's `api_key`; without one no `Authorization` header is
/// sent. Not local by default ([`default_is_local_endpoint`] is `false`), so
/// offline use needs a local endpoint.
///
/// ```
/// use oscova_speech::{providers::OpenAiSpeech, SpeechRecognitionProvider};
///
/// let openai = OpenAiSpeech::new(oscova_core::HttpClient::shared_default());
/// assert!(!SpeechRecognitionProvider::default_is_local_endpoint(&openai));
/// ```
///
/// [`default_is_local_endpoint`]: SpeechRecognitionProvider::default_is_local_endpoint
#[derive(Debug, Clone, Default)]
pub struct OpenAiSpeech {
    http: HttpClient,
}

impl OpenAiSpeech {
    /// The endpoint when the configuration names none: OpenAI's API.
    pub const DEFAULT_ENDPOINT: &'static str = OPENAI_DEFAULT_ENDPOINT;

    /// The transcription model when the configuration names none.
    pub const DEFAULT_TRANSCRIPTION_MODEL: &'static str = OPENAI_DEFAULT_TRANSCRIPTION_MODEL;

    /// The speech model when the configuration names none.
    pub const DEFAULT_SPEECH_MODEL: &'static str = OPENAI_DEFAULT_SPEECH_MODEL;

    /// The voice when neither the request nor the configuration names one.
    pub const DEFAULT_VOICE: &'static str = OPENAI_DEFAULT_VOICE;

    /// A provider sending through `http` (usually the host's client); its
    /// connection pools are used with the scope the endpoint calls for.
    pub fn new(http: HttpClient) -> Self {
        Self { http }
    }

    /// The client for `endpoint` ([`HttpClient::for_endpoint`]): the
    /// `Local` rule for a local endpoint, so a loopback name that resolves
    /// elsewhere fails before connecting.
    fn client_for(&self, endpoint: &str) -> HttpClient {
        self.http.for_endpoint(endpoint, None)
    }
}

impl SpeechRecognitionProvider for OpenAiSpeech {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static(SpeechProviderKeys::OPENAI)
    }

    fn display_name(&self) -> &str {
        "OpenAI-compatible speech service"
    }

    fn recognize<'a>(
        &'a self,
        request: RecognitionRequest<'a>,
    ) -> BoxFuture<'a, Result<Transcript, SpeechError>> {
        Box::pin(async move {
            let config = request.config;
            let endpoint = config
                .endpoint
                .as_deref()
                .unwrap_or(OPENAI_DEFAULT_ENDPOINT);
            let language = config
                .language
                .as_deref()
                .and_then(|tag| tag.split(['-', '_']).next())
                .filter(|primary| !primary.is_empty());
            let text = transcribe(
                &self.client_for(endpoint),
                endpoint,
                request.api_key,
                config
                    .model
                    .as_deref()
                    .unwrap_or(OPENAI_DEFAULT_TRANSCRIPTION_MODEL),
                language,
                request.audio.to_vec(),
                &request.cancel,
            )
            .await?;
            Ok(Transcript::new(text))
        })
    }
}

impl SpeechSynthesisProvider for OpenAiSpeech {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static(SpeechProviderKeys::OPENAI)
    }

    fn display_name(&self) -> &str {
        "OpenAI-compatible speech service"
    }

    fn synthesize<'a>(
        &'a self,
        request: SynthesisRequest<'a>,
    ) -> BoxFuture<'a, Result<SynthesizedAudio, SpeechError>> {
        Box::pin(async move {
            let config = request.config;
            let endpoint = config
                .endpoint
                .as_deref()
                .unwrap_or(OPENAI_DEFAULT_ENDPOINT);
            let wav = synthesize(
                &self.client_for(endpoint),
                endpoint,
                request.api_key,
                config
                    .model
                    .as_deref()
                    .unwrap_or(OPENAI_DEFAULT_SPEECH_MODEL),
                request.text,
                request
                    .voice
                    .or(config.voice.as_deref())
                    .unwrap_or(OPENAI_DEFAULT_VOICE),
                &request.cancel,
            )
            .await?;
            Ok(SynthesizedAudio { wav })
        })
    }
}

#[derive(Deserialize)]
struct TranscriptionResponse {
    text: String,
}

/// The JSON body of `/v1/audio/speech`; field order is the wire order.
#[derive(Serialize)]
struct SpeechRequest<'a> {
    model: &'a str,
    input: &'a str,
    voice: &'a str,
    response_format: &'static str,
}

/// `POST {endpoint}/v1/audio/transcriptions`: a multipart form with a `file`
/// part (`audio.wav`, `audio/wav`), a `model` part and, if given, a
/// `language` part; returns the `text` field of the JSON answer.
async fn transcribe(
    client: &HttpClient,
    endpoint: &str,
    api_key: Option<&SecretString>,
    model: &str,
    language: Option<&str>,
    wav: Vec<u8>,
    cancel: &CancellationToken,
) -> Result<String, EngineError> {
    let url = api_url(endpoint, "v1/audio/transcriptions")?;
    let shown = display_url(&url);
    let file = reqwest::multipart::Part::bytes(wav)
        .file_name("audio.wav")
        .mime_str("audio/wav")
        .map_err(|source| EngineError::Http {
            url: shown.clone(),
            source: source.without_url(),
        })?;
    let mut form = reqwest::multipart::Form::new()
        .part("file", file)
        .text("model", model.to_owned());
    if let Some(language) = language {
        form = form.text("language", language.to_owned());
    }
    let request = authorized(client.post(url.as_str()), api_key).with(|b| b.multipart(form));
    let body = execute(request, &shown, api_key, cancel, MAX_RESPONSE_BYTES).await?;
    let parsed: TranscriptionResponse = serde_json::from_slice(&body)
        .map_err(|source| EngineError::MalformedResponse { url: shown, source })?;
    Ok(parsed.text)
}

/// `POST {endpoint}/v1/audio/speech` with exactly
/// `{"model":…,"input":…,"voice":…,"response_format":"wav"}`; returns the
/// audio, which must be a WAV file.
async fn synthesize(
    client: &HttpClient,
    endpoint: &str,
    api_key: Option<&SecretString>,
    model: &str,
    text: &str,
    voice: &str,
    cancel: &CancellationToken,
) -> Result<Vec<u8>, EngineError> {
    if text.trim().is_empty() {
        return Err(EngineError::EmptyText);
    }
    let url = api_url(endpoint, "v1/audio/speech")?;
    let shown = display_url(&url);
    let body = SpeechRequest {
        model,
        input: text,
        voice,
        response_format: "wav",
    };
    let request = authorized(client.post(url.as_str()), api_key).json(&body);
    let audio = execute(request, &shown, api_key, cancel, MAX_RESPONSE_BYTES).await?;
    let is_wav = audio.len() >= 12 && &audio[..4] == b"RIFF" && &audio[8..12] == b"WAVE";
    if !is_wav {
        return Err(EngineError::EngineOutput {
            engine: "the speech service",
            reason: format!(
                "it answered with {} bytes that are not a WAV file; check that the server supports response_format \"wav\"",
                audio.len()
            ),
        });
    }
    Ok(audio)
}

/// `endpoint` with `suffix` appended to its path, with one `/` between.
fn api_url(endpoint: &str, suffix: &str) -> Result<Url, EngineError> {
    let invalid = |reason: String| EngineError::InvalidEndpoint {
        endpoint: redact_endpoint_text(endpoint),
        reason,
    };
    let mut url = Url::parse(endpoint.trim()).map_err(|e| invalid(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid(format!(
            "the scheme is `{}`, expected http or https",
            url.scheme()
        )));
    }
    if url.cannot_be_a_base() || url.host().is_none() {
        return Err(invalid("it has no host".to_owned()));
    }
    let path = format!("{}/{suffix}", url.path().trim_end_matches('/'));
    url.set_path(&path);
    Ok(url)
}

/// The URL for messages: no user info, query or fragment, which could hold
/// credentials.
fn display_url(url: &Url) -> String {
    let mut shown = url.clone();
    // Both only fail for URLs that cannot have credentials; nothing to hide.
    let _ = shown.set_password(None);
    let _ = shown.set_username("");
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}

/// For an endpoint that did not even parse: hide anything before an `@`.
pub(crate) fn redact_endpoint_text(endpoint: &str) -> String {
    match (endpoint.find("://"), endpoint.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            format!(
                "{}://[REDACTED]{}",
                &endpoint[..scheme_end],
                &endpoint[at..]
            )
        }
        _ => endpoint.to_owned(),
    }
}

/// Sends the request, maps failures, and returns the body of a 2xx answer,
/// which must fit in `limit` bytes ([`MAX_RESPONSE_BYTES`] but in tests).
/// `url` is the request's URL as errors show it.
async fn execute(
    request: HttpRequestBuilder,
    url: &str,
    api_key: Option<&SecretString>,
    cancel: &CancellationToken,
    limit: usize,
) -> Result<Vec<u8>, EngineError> {
    let scrub = Scrub::new(api_key);
    let response = send(request, url, cancel, &scrub).await?;
    let response = match check_status(response, url, cancel, &scrub).await? {
        Ok(response) => response,
        Err(failure) if failure.status == 401 => {
            return Err(EngineError::Unauthorized {
                url: url.to_owned(),
                key_state: if api_key.is_some() { "set" } else { "not set" },
            });
        }
        Err(failure) => {
            let body = scrub.text(failure.body.trim());
            return Err(EngineError::HttpStatus {
                url: url.to_owned(),
                status: failure.status,
                body: if body.is_empty() {
                    "(empty body)".to_owned()
                } else {
                    body
                },
            });
        }
    };
    // One byte more than accepted tells a body that fits from a cut one.
    let body = Body::new(response, url)
        .bytes(limit.saturating_add(1), cancel, &scrub)
        .await?;
    if body.len() > limit {
        return Err(EngineError::ResponseTooLarge {
            url: url.to_owned(),
            limit,
        });
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oscova_core::NetworkScope;

    #[test]
    fn urls_in_errors_lose_credentials() {
        let url = api_url(
            "https://user:hunter2@example.com/base/?api_key=abc#x",
            "v1/audio/speech",
        )
        .unwrap();
        assert_eq!(url.path(), "/base/v1/audio/speech");
        assert_eq!(
            display_url(&url),
            "https://example.com/base/v1/audio/speech"
        );
        let err = api_url("http://user:hunter2@exa mple.com", "v1").unwrap_err();
        assert!(!err.to_string().contains("hunter2"), "{err}");
    }

    #[test]
    fn api_paths_are_joined_with_one_slash() {
        for (endpoint, path) in [
            ("http://127.0.0.1:8000", "/v1/audio/speech"),
            ("http://127.0.0.1:8000/", "/v1/audio/speech"),
            ("http://127.0.0.1:8000/proxy//", "/proxy/v1/audio/speech"),
        ] {
            assert_eq!(api_url(endpoint, "v1/audio/speech").unwrap().path(), path);
        }
    }

    #[test]
    fn bad_endpoints_are_invalid() {
        for endpoint in [
            "not a url",
            "ftp://example.com",
            "mailto:someone@example.com",
            "unix:/run/tts.sock",
        ] {
            let err = api_url(endpoint, "v1").unwrap_err();
            assert!(
                matches!(err, EngineError::InvalidEndpoint { .. }),
                "{endpoint}: {err:?}"
            );
        }
    }

    #[tokio::test]
    async fn an_answer_past_the_limit_is_an_error_not_a_cut_file() {
        use oscova_test_support::http::{Reply, TestServer};

        let server = TestServer::start(|_| Reply::bytes(200, "audio/wav", vec![b'x'; 1025])).await;
        let url = format!("{}/v1/audio/speech", server.url());
        let http = HttpClient::new().with_fixed_scope(NetworkScope::Local);
        let cancel = CancellationToken::new();
        let err = execute(http.post(&url), &url, None, &cancel, 1024)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, EngineError::ResponseTooLarge { limit: 1024, url: shown } if *shown == url),
            "{err:?}"
        );
        let fits = execute(http.post(&url), &url, None, &cancel, 1025)
            .await
            .unwrap();
        assert_eq!(fits.len(), 1025);
    }

    #[test]
    fn local_endpoints_use_the_local_scope() {
        let openai = OpenAiSpeech::new(HttpClient::new());
        for (endpoint, scope) in [
            ("http://127.0.0.1:8000", NetworkScope::Local),
            ("http://localhost", NetworkScope::Local),
            ("https://api.openai.com", NetworkScope::Internet),
            ("http://127.0.0.1.example.com", NetworkScope::Internet),
        ] {
            assert_eq!(
                openai.client_for(endpoint).effective_scope(),
                scope,
                "{endpoint}"
            );
        }
    }
}
