//! Why a speech operation failed: [`SpeechError`], whose
//! [`kind`](SpeechError::kind) is the one table of machine-readable names.

/// Why a speech operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpeechError {
    /// No provider has this type key.
    #[error("no speech provider has type `{key}`; known types: {}", known.join(", "))]
    UnknownProvider {
        /// The key asked for.
        key: String,
        /// The keys that are registered.
        known: Vec<String>,
    },
    /// Offline operation is required and the endpoint is not local.
    #[error("offline operation is required, but {what} `{endpoint}` is not on this machine")]
    NotLocal {
        /// `endpoint` or `download URL`.
        what: &'static str,
        /// The refused endpoint.
        endpoint: String,
    },
    /// Offline operation is required and the provider calls out by default.
    #[error("offline operation is required, but provider `{key}` has no local endpoint configured")]
    NoLocalEndpoint {
        /// The provider's key.
        key: String,
    },
    /// The audio could not be used.
    #[error("invalid audio: {0}")]
    InvalidAudio(String),
    /// The text could not be used (empty, or not speakable by the provider).
    #[error("invalid text: {0}")]
    InvalidText(String),
    /// The voice is not one the provider has.
    #[error("unknown voice `{voice}`; available voices: {}", known.join(", "))]
    UnknownVoice {
        /// The voice asked for.
        voice: String,
        /// The voices available.
        known: Vec<String>,
    },
    /// The operation was cancelled.
    #[error("the speech operation was cancelled")]
    Cancelled,
    /// What the provider needs on this machine (a model, a voice, a runtime
    /// library) is not installed; `install` says how to install it.
    #[error(
        "speech provider `{provider}` is not installed: {missing}; install it with `{install}`"
    )]
    NotInstalled {
        /// The provider's type key.
        provider: String,
        /// What is missing, for a person (which file, where it was looked for).
        missing: String,
        /// The command that installs it.
        install: String,
    },
    /// The provider failed.
    #[error("{message}")]
    Provider {
        /// What failed, for a person.
        message: String,
        /// The underlying error, if any.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

impl SpeechError {
    /// A short machine-readable kind, one per variant, for logs, spans and
    /// JSON output. The strings are stable: a new variant adds a string,
    /// none is renamed. Where a failure is also a [`ModelError`]'s
    /// (an offline refusal, a cancellation), the string is the same.
    ///
    /// | Variant | Kind |
    /// |---|---|
    /// | [`UnknownProvider`](Self::UnknownProvider) | `unknown_provider` |
    /// | [`NotLocal`](Self::NotLocal) | `not_local` |
    /// | [`NoLocalEndpoint`](Self::NoLocalEndpoint) | `no_local_endpoint` |
    /// | [`InvalidAudio`](Self::InvalidAudio) | `invalid_audio` |
    /// | [`InvalidText`](Self::InvalidText) | `invalid_text` |
    /// | [`UnknownVoice`](Self::UnknownVoice) | `unknown_voice` |
    /// | [`Cancelled`](Self::Cancelled) | `cancelled` |
    /// | [`NotInstalled`](Self::NotInstalled) | `not_installed` |
    /// | [`Provider`](Self::Provider) | `provider` |
    ///
    /// [`ModelError`]: crate::provider::model::ModelError
    ///
    /// ```
    /// use oscova_core::provider::speech::SpeechError;
    ///
    /// assert_eq!(SpeechError::provider("flite crashed").kind(), "provider");
    /// ```
    pub fn kind(&self) -> &'static str {
        match self {
            Self::UnknownProvider { .. } => "unknown_provider",
            Self::NotLocal { .. } => "not_local",
            Self::NoLocalEndpoint { .. } => "no_local_endpoint",
            Self::InvalidAudio(_) => "invalid_audio",
            Self::InvalidText(_) => "invalid_text",
            Self::UnknownVoice { .. } => "unknown_voice",
            Self::Cancelled => "cancelled",
            Self::NotInstalled { .. } => "not_installed",
            Self::Provider { .. } => "provider",
        }
    }

    /// A provider failure with a message only.
    pub fn provider(message: impl Into<String>) -> Self {
        Self::Provider {
            message: message.into(),
            source: None,
        }
    }

    /// A provider failure with a source.
    pub fn provider_with(
        message: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self::Provider {
            message: message.into(),
            source: Some(source.into()),
        }
    }
}
