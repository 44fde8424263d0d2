//! What can go wrong between sending a request and reading its answer, and
//! how that becomes the model contract's [`ModelError`].
//!
//! Rules: a [`BackendError`] names the URL that was tried and carries the
//! underlying error as its source; its texts have already been through
//! [`Scrub`](super::Scrub), so the API key never appears in them, and the
//! `reqwest` sources are kept without their URL (which may hold user
//! info). A back end turns it into its own contract's error in one
//! `From` impl: [`ModelError`]'s is here, so `?` works in model providers
//! and the texts are the same for every back end built on this module;
//! the speech crate maps it into its own engine error the same way. Status
//! codes are not errors here: what a status means is the back end's call
//! (see [`Failure`](super::Failure)).

use crate::http::HttpError;
use crate::provider::model::ModelError;

/// Why a request to a back end produced no usable answer.
///
/// ```
/// use oscova_core::http::backend::BackendError;
/// use oscova_core::provider::model::ModelError;
///
/// let error = BackendError::Malformed {
///     message: "a line is not UTF-8".into(),
///     line: "data: \u{fffd}".into(),
/// };
/// assert!(matches!(ModelError::from(error), ModelError::Malformed { .. }));
/// assert!(matches!(ModelError::from(BackendError::Cancelled), ModelError::Cancelled));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// The URL cannot be used for a request (no scheme, no host, ...).
    #[error("`{url}` is not a usable endpoint URL: {message}")]
    InvalidUrl {
        /// The URL given.
        url: String,
        /// What is wrong with it, scrubbed.
        message: String,
        /// The error from building the request.
        #[source]
        source: reqwest::Error,
    },
    /// No answer came: the connection was refused, the name did not
    /// resolve, TLS failed, or the request timed out.
    #[error("cannot reach {url}: {message}")]
    Unreachable {
        /// The URL tried.
        url: String,
        /// The causes, innermost last, scrubbed.
        message: String,
        /// The transport error (without its URL). [`reqwest::Error::is_connect`]
        /// tells a connection that was never made from one that failed later.
        #[source]
        source: reqwest::Error,
    },
    /// The host's HTTP client refused the request before connecting: its
    /// network scope does not allow the destination.
    #[error("{message}")]
    Refused {
        /// The URL tried.
        url: String,
        /// The client's reason, scrubbed.
        message: String,
        /// The client's error.
        #[source]
        source: HttpError,
    },
    /// The host's HTTP client could not send the request for another
    /// reason (it could not be built).
    #[error("{message}")]
    Client {
        /// The URL tried.
        url: String,
        /// The client's reason, scrubbed.
        message: String,
        /// The client's error.
        #[source]
        source: HttpError,
    },
    /// The connection broke while the body was read.
    #[error("the connection to {url} broke mid-response: {message}")]
    Broken {
        /// The URL the body came from.
        url: String,
        /// The causes, scrubbed.
        message: String,
        /// The transport error (without its URL).
        #[source]
        source: reqwest::Error,
    },
    /// A line of a streamed body is not UTF-8, or longer than the
    /// [`LineSplitter`](super::LineSplitter)'s limit.
    #[error("malformed response from the server: {message} (in: {line})")]
    Malformed {
        /// What was wrong.
        message: String,
        /// An excerpt of the offending line.
        line: String,
    },
    /// The cancellation token fired; the response was dropped, which
    /// closed the connection.
    #[error("the request was cancelled")]
    Cancelled,
}

impl BackendError {
    /// The URL the error is about, when it has one.
    pub fn url(&self) -> Option<&str> {
        match self {
            Self::InvalidUrl { url, .. }
            | Self::Unreachable { url, .. }
            | Self::Refused { url, .. }
            | Self::Client { url, .. }
            | Self::Broken { url, .. } => Some(url),
            Self::Malformed { .. } | Self::Cancelled => None,
        }
    }
}

/// The texts model providers have always given: an unusable URL or a
/// broken connection is [`ModelError::Other`] with this error's text, an
/// unreachable server [`ModelError::Unreachable`], a destination the
/// client's rule refused [`ModelError::Refused`], a bad line
/// [`ModelError::Malformed`], a cancel [`ModelError::Cancelled`].
impl From<BackendError> for ModelError {
    fn from(error: BackendError) -> Self {
        match error {
            BackendError::Unreachable { url, message, .. } => Self::Unreachable { url, message },
            BackendError::Malformed { message, line } => Self::Malformed { message, line },
            BackendError::Cancelled => Self::Cancelled,
            BackendError::Refused { url, message, .. } => Self::Refused {
                url,
                reason: message,
            },
            other @ (BackendError::InvalidUrl { .. }
            | BackendError::Client { .. }
            | BackendError::Broken { .. }) => Self::Other(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_errors_keep_their_texts() {
        let error = ModelError::from(BackendError::Malformed {
            message: "a line is longer than 4 bytes".into(),
            line: "12345".into(),
        });
        assert_eq!(
            error.to_string(),
            "malformed response from the server: a line is longer than 4 bytes (in: 12345)"
        );
        let denied = HttpError::ScopeDenied {
            scope: crate::NetworkScope::Local,
            target: "10.0.0.5:80".into(),
            reason: "it resolves to an address that is not on this machine".into(),
        };
        let message = denied.to_string();
        let error = ModelError::from(BackendError::Refused {
            url: "http://localhost:1/".into(),
            message: message.clone(),
            source: denied,
        });
        assert!(
            matches!(&error, ModelError::Refused { reason, .. } if *reason == message),
            "{error:?}"
        );
    }
}
