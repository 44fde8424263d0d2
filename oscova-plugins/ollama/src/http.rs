//! Transport: sending under cancellation, reading a body chunk by chunk,
//! and turning transport failures into [`ModelError`]s a user can act on.
//!
//! Rules: nothing here formats the API key, and every text a server or the
//! network stack supplies passes through [`Scrub`] before it enters an
//! error (the key replaced if echoed, the text cut to a readable excerpt).
//! Cancellation drops the response, which closes the connection and so
//! stops the transfer; no call here waits for anything after a cancel.

use oscova_core::{CancellationToken, ExposeSecret, HttpError, HttpRequestBuilder, Redactor};
use oscova_core::{SecretString, provider::model::ModelError};

/// Longest excerpt of server text kept in an error, in characters.
const MAX_EXCERPT: usize = 400;

/// Bodies of error answers are read up to this many bytes.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Cleans text for errors: the key redacted, the length bounded.
pub(crate) struct Scrub {
    redactor: Redactor,
}

impl Scrub {
    pub(crate) fn new(api_key: Option<&SecretString>) -> Self {
        let redactor = Redactor::new();
        if let Some(key) = api_key {
            redactor.add(key.expose_secret());
        }
        Self { redactor }
    }

    pub(crate) fn text(&self, text: &str) -> String {
        let clean = self.redactor.redact(text);
        excerpt(&clean)
    }
}

/// The first [`MAX_EXCERPT`] characters, marked when cut.
pub(crate) fn excerpt(text: &str) -> String {
    match text.char_indices().nth(MAX_EXCERPT) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
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

/// Sends `request`; a cancel stops waiting at once.
pub(crate) async fn send(
    request: HttpRequestBuilder,
    url: &str,
    cancel: &CancellationToken,
    scrub: &Scrub,
) -> Result<reqwest::Response, ModelError> {
    let sent = tokio::select! {
        biased;
        () = cancel.cancelled() => return Err(ModelError::Cancelled),
        sent = request.send() => sent,
    };
    sent.map_err(|error| match error {
        HttpError::Request(e) if e.is_builder() => ModelError::Other(format!(
            "`{url}` is not a usable endpoint URL: {}",
            scrub.text(&causes(&e))
        )),
        HttpError::Request(e) => ModelError::Unreachable {
            url: url.to_owned(),
            message: scrub.text(&causes(&e)),
        },
        other => ModelError::Other(scrub.text(&other.to_string())),
    })
}

/// Reads a response body piece by piece.
pub(crate) struct Body {
    response: reqwest::Response,
    url: String,
}

impl Body {
    pub(crate) fn new(response: reqwest::Response, url: &str) -> Self {
        Self {
            response,
            url: url.to_owned(),
        }
    }

    /// The next piece, `None` at the end; a cancel drops nothing here, the
    /// caller drops the body.
    pub(crate) async fn next(
        &mut self,
        cancel: &CancellationToken,
        scrub: &Scrub,
    ) -> Result<Option<impl AsRef<[u8]> + use<>>, ModelError> {
        let chunk = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ModelError::Cancelled),
            chunk = self.response.chunk() => chunk,
        };
        chunk.map_err(|e| {
            ModelError::Other(format!(
                "the connection to {} broke mid-response: {}",
                self.url,
                scrub.text(&causes(&e))
            ))
        })
    }

    /// The rest of the body as text, at most `limit` bytes of it.
    pub(crate) async fn text(
        mut self,
        limit: usize,
        cancel: &CancellationToken,
        scrub: &Scrub,
    ) -> Result<String, ModelError> {
        let mut bytes = Vec::new();
        while let Some(chunk) = self.next(cancel, scrub).await? {
            bytes.extend_from_slice(chunk.as_ref());
            if bytes.len() >= limit {
                bytes.truncate(limit);
                break;
            }
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// An answer whose status is not a success, with the start of its body.
pub(crate) struct Failure {
    pub(crate) status: u16,
    pub(crate) body: String,
}

/// Splits a response into its body, or the failure it reports.
pub(crate) async fn check_status(
    response: reqwest::Response,
    url: &str,
    cancel: &CancellationToken,
    scrub: &Scrub,
) -> Result<Result<reqwest::Response, Failure>, ModelError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_hides_the_key_and_cuts_long_text() {
        let key = SecretString::from("sk-live-abcdef");
        let scrub = Scrub::new(Some(&key));
        assert_eq!(
            scrub.text("Incorrect API key provided: sk-live-abcdef."),
            "Incorrect API key provided: [REDACTED]."
        );
        let long = "é".repeat(1000);
        let cut = scrub.text(&long);
        assert_eq!(cut.chars().count(), MAX_EXCERPT + 1);
        assert!(cut.ends_with('…'));
    }
}
