//! Why a model call failed: [`ModelError`].
//!
//! Rules: every variant says what to do next where a person can act
//! (configure a local endpoint, check the key); [`ModelError::kind`] is
//! the one table of machine-readable names, which spans, the CLI's JSON and
//! any other front end read rather than keeping their own.

/// Why a model call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// Offline operation is required and the endpoint is not local.
    #[error("offline operation is required, but endpoint `{endpoint}` is not on this machine")]
    NotLocal {
        /// The refused endpoint.
        endpoint: String,
    },
    /// Offline operation is required and the provider's default endpoint
    /// is not on this machine.
    #[error(
        "offline operation is required, but provider `{provider}` calls a remote service by default; configure a local endpoint"
    )]
    NoLocalEndpoint {
        /// The provider's type key.
        provider: String,
    },
    /// The request was refused before connecting: the endpoint looks
    /// local but resolves (or redirects) to another machine, or redirects
    /// away from the one endpoint a saved `local` scope allows.
    #[error("the request to {url} was refused before connecting: {reason}")]
    Refused {
        /// The URL tried.
        url: String,
        /// Why, naming the destination.
        reason: String,
    },
    /// The server could not be reached.
    #[error("cannot reach {url}: {message}")]
    Unreachable {
        /// The URL tried.
        url: String,
        /// Why.
        message: String,
    },
    /// The server refused the API key.
    #[error(
        "the server at {url} refused the API key (401); check the key configured for this provider"
    )]
    Unauthorized {
        /// The URL tried.
        url: String,
    },
    /// The model does not exist on the server.
    #[error("model `{model}` was not found; the server has: {}", available.join(", "))]
    ModelNotFound {
        /// The model asked for.
        model: String,
        /// The models the server has.
        available: Vec<String>,
    },
    /// The server sent something that is not its documented format.
    #[error("malformed response from the server: {message} (in: {line})")]
    Malformed {
        /// What was wrong.
        message: String,
        /// The offending line or chunk.
        line: String,
    },
    /// The server answered with an error status.
    #[error("the server answered {status}: {body}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The call was cancelled.
    #[error("the model call was cancelled")]
    Cancelled,
    /// The provider cannot do this.
    #[error("provider `{provider}` cannot {operation}")]
    Unsupported {
        /// The provider's type key.
        provider: String,
        /// What was asked, as a verb phrase ("list models").
        operation: &'static str,
    },
    /// Something else failed.
    #[error("{0}")]
    Other(String),
}

impl ModelError {
    /// A short machine-readable kind, one per variant, for logs, spans and
    /// JSON output. The strings are stable: a new variant adds a string,
    /// none is renamed.
    ///
    /// | Variant | Kind |
    /// |---|---|
    /// | [`NotLocal`](Self::NotLocal) | `not_local` |
    /// | [`NoLocalEndpoint`](Self::NoLocalEndpoint) | `no_local_endpoint` |
    /// | [`Refused`](Self::Refused) | `refused` |
    /// | [`Unreachable`](Self::Unreachable) | `unreachable` |
    /// | [`Unauthorized`](Self::Unauthorized) | `unauthorized` |
    /// | [`ModelNotFound`](Self::ModelNotFound) | `model_not_found` |
    /// | [`Malformed`](Self::Malformed) | `malformed_response` |
    /// | [`Status`](Self::Status) | `http_status` |
    /// | [`Cancelled`](Self::Cancelled) | `cancelled` |
    /// | [`Unsupported`](Self::Unsupported) | `unsupported` |
    /// | [`Other`](Self::Other) | `other` |
    ///
    /// ```
    /// use oscova_core::provider::model::ModelError;
    ///
    /// let error = ModelError::Status { status: 503, body: "busy".into() };
    /// assert_eq!(error.kind(), "http_status");
    /// ```
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NotLocal { .. } => "not_local",
            Self::NoLocalEndpoint { .. } => "no_local_endpoint",
            Self::Refused { .. } => "refused",
            Self::Unreachable { .. } => "unreachable",
            Self::Unauthorized { .. } => "unauthorized",
            Self::ModelNotFound { .. } => "model_not_found",
            Self::Malformed { .. } => "malformed_response",
            Self::Status { .. } => "http_status",
            Self::Cancelled => "cancelled",
            Self::Unsupported { .. } => "unsupported",
            Self::Other(_) => "other",
        }
    }
}
