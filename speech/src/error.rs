//! The engines' own error, and how it becomes the framework's [`SpeechError`].
//!
//! Rules: every failure of every engine is an [`EngineError`] variant, crate
//! private, so engine code and its unit tests can tell the cases apart; the
//! public API returns `oscova_core`'s [`SpeechError`], converted in one place
//! ([`From<EngineError>`]). Audio problems become
//! [`SpeechError::InvalidAudio`], empty text [`SpeechError::InvalidText`], an
//! unknown voice [`SpeechError::UnknownVoice`], cancellation
//! [`SpeechError::Cancelled`], everything else [`SpeechError::Provider`] whose
//! message is this error's text and whose source is the underlying error.
//! Messages say what went wrong and what the user can do about it. No variant
//! ever holds an API key; URLs lose their user info and query. Failures of
//! the shared HTTP plumbing ([`BackendError`]) become the variants below in
//! one place too (`From<BackendError>`), so the OpenAI-compatible provider
//! keeps its speech-specific texts.

use std::path::PathBuf;

use oscova_core::http::backend::BackendError;
use oscova_core::provider::speech::SpeechError;
use oscova_core::{http::HttpError, process::SpawnError};

/// An error from one of the speech engines.
#[derive(Debug, thiserror::Error)]
// The local recognizers' variants (pocketsphinx, whisper) are built only
// with their features.
#[cfg_attr(not(feature = "pocketsphinx"), allow(dead_code))]
pub(crate) enum EngineError {
    /// The audio input had no bytes at all.
    #[error("the audio is empty (0 bytes); send a WAV file")]
    EmptyInput,

    /// The input is not a RIFF/WAVE file.
    #[error("the audio is not a WAV file ({reason}); send RIFF/WAVE PCM audio")]
    NotWav { reason: String },

    /// The WAV header ends before the sample data begins.
    #[error(
        "the WAV header is truncated ({len} bytes in total); the file was cut off, send the whole file"
    )]
    TruncatedHeader {
        len: usize,
        #[source]
        source: hound::Error,
    },

    /// A well-formed WAV file in an encoding the engines cannot read.
    #[error("unsupported WAV audio: {reason}; convert it to 16-bit PCM, mono, 16 kHz")]
    UnsupportedWav { reason: String },

    /// The WAV file is valid but holds no audio samples.
    #[error("the WAV file contains no audio samples; record some speech and send it again")]
    NoSamples,

    /// The audio is longer than the engines accept.
    #[error(
        "the audio is {seconds:.1} seconds long, longer than the limit of {limit_seconds} seconds; \
         split it into shorter parts"
    )]
    AudioTooLong { seconds: f64, limit_seconds: u32 },

    /// The text to synthesize is longer than the router speaks.
    #[error(
        "the text has {chars} characters, more than the limit of {limit} characters; \
         split it into shorter parts"
    )]
    TextTooLong { chars: usize, limit: usize },

    /// The synthesized audio plays longer than the router returns.
    #[error(
        "the text makes {seconds:.1} seconds of speech, longer than the limit of \
         {limit_seconds} seconds; split it into shorter parts"
    )]
    SpeechTooLong { seconds: f64, limit_seconds: u32 },

    /// The synthesized audio is not WAV, so its length is not known, and it
    /// is larger than the longest audio the router returns can be.
    #[error(
        "the text makes {bytes} bytes of audio that is not WAV ({kind}), more than the limit of \
         {limit_bytes} bytes ({limit_seconds} seconds at {kbps} kbit/s); split it into shorter parts"
    )]
    EncodedSpeechTooLarge {
        bytes: usize,
        kind: crate::wav::AudioKind,
        limit_bytes: usize,
        limit_seconds: u32,
        kbps: u32,
    },

    /// The text to synthesize is empty or only whitespace.
    #[error("there is no text to speak; pass a non-empty text")]
    EmptyText,

    /// The voice is not one the engine knows.
    #[error("unknown voice `{voice}`; choose one of: {}", .known.join(", "))]
    UnknownVoice { voice: String, known: Vec<String> },

    /// The language is not one the engine has a model for.
    #[error("{engine} has no model for language `{language}`; {hint}")]
    UnsupportedLanguage {
        engine: &'static str,
        language: String,
        hint: &'static str,
    },

    /// An external program is not installed (or not on `PATH`).
    #[error("the program `{program}` was not found; {install_hint}")]
    ProgramNotFound {
        program: String,
        install_hint: String,
        #[source]
        source: Box<SpawnError>,
    },

    /// An external program could not be run, or ran and failed.
    #[error("{source}")]
    Program {
        #[source]
        source: Box<SpawnError>,
    },

    /// An engine finished without producing usable output.
    #[error("{engine} produced no usable audio: {reason}")]
    EngineOutput {
        engine: &'static str,
        reason: String,
    },

    /// A local file operation failed (temporary files, model files).
    #[error("{action} failed: {source}")]
    Io {
        action: String,
        #[source]
        source: std::io::Error,
    },

    /// A model file or folder of the recognizer is missing.
    #[error(
        "the speech recognition model file {} is missing; install the Debian package `{package}` \
         (apt-get install {package}) or point ModelPaths at your model",
        .path.display()
    )]
    ModelMissing {
        path: PathBuf,
        package: &'static str,
    },

    /// pocketsphinx refused its configuration or model files.
    #[error(
        "pocketsphinx could not be initialised: {reason}; check the model paths and that the model files are intact"
    )]
    DecoderInit { reason: String },

    /// A pocketsphinx call failed while decoding.
    #[error("pocketsphinx failed in {call} (code {code}); try again, and report it if it repeats")]
    Decode { call: &'static str, code: i32 },

    /// A background task failed (it panicked or the runtime shut down).
    #[error("the speech task stopped unexpectedly: {source}")]
    Task {
        #[source]
        source: tokio::task::JoinError,
    },

    /// The endpoint is not a usable URL.
    #[error("the speech endpoint `{endpoint}` is not a valid http(s) URL ({reason})")]
    InvalidEndpoint { endpoint: String, reason: String },

    /// The host's HTTP client refused the request before connecting: a local
    /// endpoint whose name resolves (or redirects) to another machine. The
    /// source's text is not shown, since it repeats the URL with user info.
    #[error(
        "the request to {url} was refused before connecting: the endpoint names this machine but \
         leads to another one; use a loopback address such as 127.0.0.1 as the endpoint"
    )]
    Refused {
        url: String,
        #[source]
        source: HttpError,
    },

    /// The host's HTTP client could not send the request for another reason
    /// (it could not be built).
    #[error("the HTTP client could not send the request to {url}: {source}")]
    Client {
        url: String,
        #[source]
        source: HttpError,
    },

    /// No connection to the speech service could be made.
    #[error(
        "could not connect to the speech service at {url}; check the endpoint and that the service is running"
    )]
    Connect {
        url: String,
        #[source]
        source: reqwest::Error,
    },

    /// The service rejected the credentials.
    #[error(
        "the speech service at {url} answered 401 Unauthorized; check the API key (a key is {key_state})"
    )]
    Unauthorized {
        url: String,
        key_state: &'static str,
    },

    /// The service answered with another non-success status.
    #[error("the speech service at {url} answered {status}: {body}")]
    HttpStatus {
        url: String,
        status: u16,
        body: String,
    },

    /// The request failed after connecting (timeout, reset, unreadable body).
    #[error("the request to the speech service at {url} failed; try again")]
    Http {
        url: String,
        #[source]
        source: reqwest::Error,
    },

    /// The service's answer is longer than the provider reads.
    #[error(
        "the speech service at {url} sent an answer longer than {limit} bytes; ask for shorter audio"
    )]
    ResponseTooLarge { url: String, limit: usize },

    /// Another failure of the shared HTTP plumbing.
    #[error("{source}")]
    Backend {
        #[source]
        source: BackendError,
    },

    /// The service answered 2xx with a body that is not the expected JSON.
    #[error(
        "the speech service at {url} sent a response that is not the expected JSON ({source}); check that the endpoint is OpenAI-compatible"
    )]
    MalformedResponse {
        url: String,
        #[source]
        source: serde_json::Error,
    },

    /// The operation was cancelled through its cancellation token.
    #[error("the speech operation was cancelled")]
    Cancelled,
}

impl EngineError {
    /// Whether this is a problem with the audio the caller sent.
    fn is_audio_problem(&self) -> bool {
        matches!(
            self,
            Self::EmptyInput
                | Self::NotWav { .. }
                | Self::TruncatedHeader { .. }
                | Self::UnsupportedWav { .. }
                | Self::NoSamples
                | Self::AudioTooLong { .. }
        )
    }
}

impl From<EngineError> for SpeechError {
    fn from(err: EngineError) -> Self {
        if err.is_audio_problem() {
            return Self::InvalidAudio(err.to_string());
        }
        let message = err.to_string();
        let source: Option<Box<dyn std::error::Error + Send + Sync>> = match err {
            EngineError::EmptyText
            | EngineError::TextTooLong { .. }
            | EngineError::SpeechTooLong { .. }
            | EngineError::EncodedSpeechTooLarge { .. } => return Self::InvalidText(message),
            EngineError::UnknownVoice { voice, known } => {
                return Self::UnknownVoice { voice, known };
            }
            EngineError::Cancelled => return Self::Cancelled,
            EngineError::Program { source } if matches!(*source, SpawnError::Cancelled { .. }) => {
                return Self::Cancelled;
            }
            EngineError::TruncatedHeader { source, .. } => Some(Box::new(source)),
            EngineError::ProgramNotFound { source, .. } | EngineError::Program { source } => {
                Some(source)
            }
            EngineError::Io { source, .. } => Some(Box::new(source)),
            EngineError::Task { source } => Some(Box::new(source)),
            EngineError::Refused { source, .. } | EngineError::Client { source, .. } => {
                Some(Box::new(source))
            }
            EngineError::Connect { source, .. } | EngineError::Http { source, .. } => {
                Some(Box::new(source))
            }
            EngineError::MalformedResponse { source, .. } => Some(Box::new(source)),
            EngineError::Backend { source } => Some(Box::new(source)),
            EngineError::EmptyInput
            | EngineError::NotWav { .. }
            | EngineError::UnsupportedWav { .. }
            | EngineError::NoSamples
            | EngineError::AudioTooLong { .. }
            | EngineError::UnsupportedLanguage { .. }
            | EngineError::EngineOutput { .. }
            | EngineError::ModelMissing { .. }
            | EngineError::DecoderInit { .. }
            | EngineError::Decode { .. }
            | EngineError::InvalidEndpoint { .. }
            | EngineError::Unauthorized { .. }
            | EngineError::HttpStatus { .. }
            | EngineError::ResponseTooLarge { .. } => None,
        };
        Self::Provider { message, source }
    }
}

impl From<BackendError> for EngineError {
    fn from(err: BackendError) -> Self {
        match err {
            BackendError::Cancelled => Self::Cancelled,
            BackendError::Unreachable { url, source, .. } if source.is_connect() => {
                Self::Connect { url, source }
            }
            BackendError::Unreachable { url, source, .. }
            | BackendError::InvalidUrl { url, source, .. }
            | BackendError::Broken { url, source, .. } => Self::Http { url, source },
            BackendError::Refused { url, source, .. } => Self::Refused { url, source },
            BackendError::Client { url, source, .. } => Self::Client { url, source },
            other => Self::Backend { source: other },
        }
    }
}

/// The first `limit` bytes of `text`, cut at a character boundary.
pub(crate) fn truncate(text: &str, limit: usize) -> String {
    oscova_core::text::cut(text, oscova_core::text::Limit::Bytes(limit)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audio_problems_become_invalid_audio_with_the_same_text() {
        let err = SpeechError::from(EngineError::EmptyInput);
        let SpeechError::InvalidAudio(text) = &err else {
            panic!("unexpected {err:?}");
        };
        assert_eq!(text, "the audio is empty (0 bytes); send a WAV file");
    }

    #[test]
    fn voices_text_and_cancellation_keep_their_meaning() {
        let err = SpeechError::from(EngineError::UnknownVoice {
            voice: "kal17".into(),
            known: vec!["kal16".into()],
        });
        assert!(matches!(err, SpeechError::UnknownVoice { ref voice, .. } if voice == "kal17"));
        assert!(matches!(
            SpeechError::from(EngineError::EmptyText),
            SpeechError::InvalidText(_)
        ));
        assert!(matches!(
            SpeechError::from(EngineError::Cancelled),
            SpeechError::Cancelled
        ));
    }

    #[test]
    fn provider_failures_keep_message_and_source() {
        let err = SpeechError::from(EngineError::Io {
            action: "reading /tmp/x".into(),
            source: std::io::Error::other("disk on fire"),
        });
        assert_eq!(err.to_string(), "reading /tmp/x failed: disk on fire");
        let source = std::error::Error::source(&err).map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("disk on fire"));
    }

    #[test]
    fn truncate_respects_char_boundaries() {
        assert_eq!(truncate("héllo", 2), "h…");
        assert_eq!(truncate("short", 10), "short");
    }
}
