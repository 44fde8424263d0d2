//! The one error type of the web tool.
//!
//! Rules: each message names the URL and says what the model can do next
//! (fix the URL, ask for fewer bytes, allow more time, pick another page).

/// Why a fetch failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebError {
    /// Not an `http` or `https` URL.
    #[error(
        "`{url}` is not an http(s) URL; give a full address such as `https://example.org/page`"
    )]
    BadUrl {
        /// The URL as given.
        url: String,
    },
    /// A parameter out of range.
    #[error("{0}")]
    BadArgument(String),
    /// The host's network scope refused the request.
    #[error("fetching `{url}` is not allowed here: {reason}")]
    Denied {
        /// The URL.
        url: String,
        /// The host's reason.
        reason: String,
    },
    /// Connecting, TLS, redirects or reading failed.
    #[error("fetching `{url}` failed: {reason}")]
    Request {
        /// The URL.
        url: String,
        /// The cause, with its sources.
        reason: String,
    },
    /// The whole fetch took longer than allowed.
    #[error(
        "fetching `{url}` took longer than {seconds} s (received {received} bytes by then); \
         try again with a larger `timeout_secs` or another page"
    )]
    Timeout {
        /// The URL.
        url: String,
        /// The limit in seconds.
        seconds: f64,
        /// Body bytes received before the limit.
        received: u64,
    },
    /// The response is not text.
    #[error(
        "`{url}` returned binary content ({content_type}); this tool returns text and HTML only"
    )]
    Binary {
        /// The final URL.
        url: String,
        /// The content type, or what sniffing found.
        content_type: String,
    },
    /// HTML that could not be turned into text.
    #[error("the HTML from `{url}` could not be rendered as text: {reason}")]
    Html {
        /// The final URL.
        url: String,
        /// The renderer's error.
        reason: String,
    },
}

/// An error and its sources, joined with `: `.
pub(crate) fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        let next = e.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = e.source();
    }
    text
}
