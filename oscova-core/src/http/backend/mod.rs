//! HTTP plumbing for back ends: sending under cancellation, reading a body
//! chunk by chunk and within a bound, splitting a streamed body into lines,
//! and turning transport failures into errors a user can act on.
//!
//! The first-party `openai` and `ollama` model providers and the speech
//! crate's OpenAI-compatible provider are built on this module, and a
//! third-party back end that uses it gives its users the same errors: the
//! URL when a server cannot be reached, the start of the body with the
//! status, the API key never. What is left to a back end is its wire
//! format: paths, request bodies, the framing of a streamed answer (NDJSON,
//! server-sent events) over [`LineSplitter`], and which statuses mean what
//! ([`Failure`]).
//!
//! Rules: nothing here formats the API key, and every text a server or the
//! network stack supplies passes through [`Scrub`] before it enters an
//! error (the key replaced if echoed, the text cut to a readable excerpt).
//! Failures are [`BackendError`]s, tied to no contract: `?` turns them into
//! a [`ModelError`](crate::provider::model::ModelError) through its
//! `From` impl, and a back end of another contract (speech) maps them into
//! its own error the same way. Functions that call back into the caller
//! ([`LineSplitter::push`], [`get_text`]) are generic over the caller's
//! error type, which only has to come `From<BackendError>`. Reads are
//! bounded: a whole body is read up to a limit the caller gives, a line up
//! to the splitter's limit. Cancellation drops the response, which closes
//! the connection and so stops the transfer; no call here waits for
//! anything after a cancel.
//!
//! # Example
//!
//! A chat call to a server that streams one JSON object per line:
//!
//! ```
//! use oscova_core::http::backend::{Body, LineSplitter, Scrub, authorized, check_status, send};
//! use oscova_core::provider::model::ModelError;
//! use oscova_core::{CancellationToken, HttpClient, SecretString};
//!
//! async fn chat(
//!     http: &HttpClient,
//!     base: &str,
//!     api_key: Option<&SecretString>,
//!     cancel: &CancellationToken,
//! ) -> Result<Vec<String>, ModelError> {
//!     let url = format!("{base}/api/chat");
//!     let scrub = Scrub::new(api_key);
//!     let request = authorized(http.post(&url).json(&serde_json::json!({"stream": true})), api_key);
//!     let response = send(request, &url, cancel, &scrub).await?;
//!     let response = match check_status(response, &url, cancel, &scrub).await? {
//!         Ok(response) => response,
//!         Err(failure) => {
//!             return Err(ModelError::Status { status: failure.status, body: scrub.text(&failure.body) });
//!         }
//!     };
//!     let mut body = Body::new(response, &url);
//!     let mut splitter = LineSplitter::default();
//!     let mut lines = Vec::new();
//!     let mut each = |line: &str| {
//!         lines.push(line.to_owned());
//!         Ok::<(), ModelError>(())
//!     };
//!     while let Some(chunk) = body.next(cancel, &scrub).await? {
//!         splitter.push(chunk.as_ref(), &mut each)?;
//!     }
//!     splitter.finish(&mut each)?;
//!     Ok(lines)
//! }
//! # use tokio::io::{AsyncReadExt, AsyncWriteExt};
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! # let base = format!("http://{}", listener.local_addr()?);
//! # tokio::spawn(async move {
//! #     let (mut socket, _) = listener.accept().await?;
//! #     let mut request = [0u8; 4096];
//! #     let _ = socket.read(&mut request).await?;
//! #     socket.write_all(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n{\"n\":1}\r\n{\"n\":2}").await
//! # });
//!
//! // Providers are not tools: their client is not bound to a tool's scope.
//! let http = HttpClient::shared_default().unrestricted();
//! let lines = chat(&http, &base, None, &CancellationToken::new()).await?;
//! assert_eq!(lines, ["{\"n\":1}", "{\"n\":2}"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod lines;
mod scrub;

pub use error::BackendError;
pub use lines::{LineSplitter, MAX_LINE};
pub use scrub::{MAX_EXCERPT, Scrub, excerpt};

use crate::http::{HttpError, HttpRequestBuilder};
use crate::provider::model::ModelProviderConfig;
use crate::{CancellationToken, ExposeSecret, HttpClient, SecretString};

/// Bodies of error answers are read up to this many bytes by
/// [`check_status`].
pub const MAX_ERROR_BODY: usize = 64 * 1024;

/// The base URL a configuration names: its endpoint, or `default` when it
/// has none (or a blank one), trimmed, without trailing `/`, and with
/// `http://` added when no scheme is given (as `OLLAMA_HOST` is often
/// written, and as [`is_local_endpoint`](crate::locality::is_local_endpoint)
/// reads it). Paths are joined to it with `format!("{base}/path")`.
///
/// ```
/// use oscova_core::http::backend::endpoint_url;
/// use oscova_core::provider::model::ModelProviderConfig;
///
/// let mut config = ModelProviderConfig::new("acme");
/// assert_eq!(endpoint_url(&config, "https://api.acme.example/"), "https://api.acme.example");
/// config.endpoint = Some(" localhost:8080/ ".into());
/// assert_eq!(endpoint_url(&config, "https://api.acme.example"), "http://localhost:8080");
/// ```
pub fn endpoint_url(config: &ModelProviderConfig, default: &str) -> String {
    let endpoint = config
        .endpoint
        .as_deref()
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .unwrap_or(default)
        .trim_end_matches('/');
    if endpoint.contains("://") {
        endpoint.to_owned()
    } else {
        format!("http://{endpoint}")
    }
}

/// `request` with `api_key` as its bearer token (a header marked
/// sensitive), or unchanged without one.
///
/// ```
/// use oscova_core::http::backend::authorized;
/// use oscova_core::{HttpClient, SecretString};
///
/// let key = SecretString::from("sk-test-1234");
/// let http = HttpClient::shared_default();
/// let _with_key = authorized(http.get("https://api.example.com/v1/models"), Some(&key));
/// let _without = authorized(http.get("http://127.0.0.1:11434/api/tags"), None);
/// ```
pub fn authorized(
    request: HttpRequestBuilder,
    api_key: Option<&SecretString>,
) -> HttpRequestBuilder {
    match api_key {
        Some(key) => request.bearer_auth(key.expose_secret()),
        None => request,
    }
}

/// Sends `request` to `url`; a cancel stops waiting at once.
///
/// `url` is the one `request` was built with, for the error texts. A URL
/// that cannot be used is [`BackendError::InvalidUrl`]; a server that
/// cannot be reached is [`BackendError::Unreachable`] with the causes
/// (refused, DNS, TLS, timeout), scrubbed; a destination the client's
/// rule refuses (a local-looking name that resolves elsewhere) is
/// [`BackendError::Refused`], with no connection made; a cancel is
/// [`BackendError::Cancelled`]. The status is not looked at: see
/// [`check_status`].
///
/// ```
/// use oscova_core::http::backend::{BackendError, Scrub, send};
/// use oscova_core::{CancellationToken, HttpClient};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// let http = HttpClient::shared_default().unrestricted();
/// let url = "http://127.0.0.1:9/api/tags";
/// let cancel = CancellationToken::new();
/// cancel.cancel();
/// let sent = send(http.get(url), url, &cancel, &Scrub::new(None)).await;
/// assert!(matches!(sent, Err(BackendError::Cancelled)));
/// # });
/// # Ok::<(), std::io::Error>(())
/// ```
pub async fn send(
    request: HttpRequestBuilder,
    url: &str,
    cancel: &CancellationToken,
    scrub: &Scrub,
) -> Result<reqwest::Response, BackendError> {
    let sent = tokio::select! {
        biased;
        () = cancel.cancelled() => return Err(BackendError::Cancelled),
        sent = request.send() => sent,
    };
    let url = url.to_owned();
    sent.map_err(|error| match error {
        HttpError::Request(e) if e.is_builder() => BackendError::InvalidUrl {
            url,
            message: scrub.text(&causes(&e)),
            source: e.without_url(),
        },
        HttpError::Request(e) => BackendError::Unreachable {
            url,
            message: scrub.text(&causes(&e)),
            source: e.without_url(),
        },
        denied @ HttpError::ScopeDenied { .. } => BackendError::Refused {
            url,
            message: scrub.text(&denied.to_string()),
            source: denied,
        },
        other => BackendError::Client {
            url,
            message: scrub.text(&other.to_string()),
            source: other,
        },
    })
}

/// The causes of an error, innermost last, without the outer message (which
/// for `reqwest` only repeats the URL).
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = Vec::new();
    let mut source = error.source();
    while let Some(e) = source {
        parts.push(e.to_string());
        source = e.source();
    }
    if parts.is_empty() {
        error.to_string()
    } else {
        parts.join(": ")
    }
}

/// An answer whose status is not a success, with the start of its body.
///
/// What a status means is the back end's call (401 is usually the key,
/// 404 may be an unknown model); the body is raw server text, to go
/// through [`Scrub::text`] before it enters an error.
///
/// ```
/// use oscova_core::http::backend::{Failure, Scrub};
/// use oscova_core::provider::model::ModelError;
///
/// fn failure_error(failure: Failure, url: &str, scrub: &Scrub) -> ModelError {
///     match failure.status {
///         401 => ModelError::Unauthorized { url: url.to_owned() },
///         status => ModelError::Status { status, body: scrub.text(&failure.body) },
///     }
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Failure {
    /// The HTTP status.
    pub status: u16,
    /// The body, at most [`MAX_ERROR_BODY`] bytes of it, decoded lossily
    /// and not scrubbed.
    pub body: String,
}

/// Splits a response into itself, when its status is a success, or the
/// [`Failure`] it reports (the body read up to [`MAX_ERROR_BODY`] bytes).
///
/// The outer error is a transport failure or a cancel while reading the
/// error body. See the [module example](self#example).
pub async fn check_status(
    response: reqwest::Response,
    url: &str,
    cancel: &CancellationToken,
    scrub: &Scrub,
) -> Result<Result<reqwest::Response, Failure>, BackendError> {
    let status = response.status();
    if status.is_success() {
        return Ok(Ok(response));
    }
    let body = Body::new(response, url)
        .text(MAX_ERROR_BODY, cancel, scrub)
        .await?;
    Ok(Err(Failure {
        status: status.as_u16(),
        body,
    }))
}

/// GETs `url` (with the API key as a bearer token, when there is one)
/// and reads a successful answer as text, at most `limit` bytes of it: the
/// whole of a catalog call such as `GET /v1/models`. A status that is not a
/// success becomes the error `failed` makes of it, since what a status
/// means is the back end's call; transport errors and cancels are as for
/// [`send`] and [`Body::text`], converted into the caller's error type.
pub async fn get_text<E: From<BackendError>>(
    http: &HttpClient,
    url: &str,
    api_key: Option<&SecretString>,
    limit: usize,
    cancel: &CancellationToken,
    scrub: &Scrub,
    failed: impl FnOnce(Failure) -> E,
) -> Result<String, E> {
    let response = send(authorized(http.get(url), api_key), url, cancel, scrub).await?;
    match check_status(response, url, cancel, scrub).await? {
        Ok(response) => Ok(Body::new(response, url).text(limit, cancel, scrub).await?),
        Err(failure) => Err(failed(failure)),
    }
}

/// Reads a response body piece by piece, under cancellation.
///
/// Dropping it drops the response, which closes the connection: stopping
/// early, on an error or a cancel, needs nothing else. See the
/// [module example](self#example).
#[derive(Debug)]
pub struct Body {
    response: reqwest::Response,
    url: String,
}

impl Body {
    /// The body of `response`, fetched from `url` (for the error texts).
    pub fn new(response: reqwest::Response, url: &str) -> Self {
        Self {
            response,
            url: url.to_owned(),
        }
    }

    /// The next piece, `None` at the end.
    ///
    /// A cancel is [`BackendError::Cancelled`] at once; a broken connection
    /// is [`BackendError::Broken`] naming the URL. Nothing is dropped here
    /// on a cancel: the caller drops the body.
    pub async fn next(
        &mut self,
        cancel: &CancellationToken,
        scrub: &Scrub,
    ) -> Result<Option<impl AsRef<[u8]> + use<>>, BackendError> {
        let chunk = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(BackendError::Cancelled),
            chunk = self.response.chunk() => chunk,
        };
        chunk.map_err(|e| BackendError::Broken {
            url: self.url.clone(),
            message: scrub.text(&causes(&e)),
            source: e.without_url(),
        })
    }

    /// The rest of the body, at most `limit` bytes of it; the rest is not
    /// read. To tell a body that fits from one that was cut, ask for one
    /// byte more than you accept and check the length.
    pub async fn bytes(
        mut self,
        limit: usize,
        cancel: &CancellationToken,
        scrub: &Scrub,
    ) -> Result<Vec<u8>, BackendError> {
        let mut bytes = Vec::new();
        while let Some(chunk) = self.next(cancel, scrub).await? {
            bytes.extend_from_slice(chunk.as_ref());
            if bytes.len() >= limit {
                bytes.truncate(limit);
                break;
            }
        }
        Ok(bytes)
    }

    /// The rest of the body as text (decoded lossily), at most `limit`
    /// bytes of it; the rest is not read.
    pub async fn text(
        self,
        limit: usize,
        cancel: &CancellationToken,
        scrub: &Scrub,
    ) -> Result<String, BackendError> {
        let bytes = self.bytes(limit, cancel, scrub).await?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}
