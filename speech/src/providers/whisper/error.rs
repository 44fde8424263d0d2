//! The `whisper` provider's failures and how they become [`SpeechError`]s.
//!
//! Rules: a model that is not installed is [`SpeechError::NotInstalled`]
//! naming the install command; cancellation is [`SpeechError::Cancelled`];
//! a language the model does not hear is a provider error saying which
//! model to use; everything else is [`SpeechError::Provider`] with this
//! error's text and, where there is one, its source.

use std::path::PathBuf;

use oscova_core::provider::speech::{SpeechError, SpeechProviderKeys};

/// A failure of the Whisper engine.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WhisperFailure {
    #[error("{what}")]
    NotInstalled { what: String, install: String },
    #[error("reading the Whisper model file {} failed: {source}", .path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the Whisper model in {} could not be converted for whisper.cpp: {reason}", .path.display())]
    Convert { path: PathBuf, reason: String },
    #[error("whisper.cpp could not load the model `{name}`: {reason}")]
    Load { name: String, reason: String },
    #[error(
        "the Whisper model `{model}` hears only English, not `{language}`; use the multilingual model (`model = \"base\"`)"
    )]
    EnglishOnly { model: String, language: String },
    #[error("Whisper has no language `{0}`; use a code such as `en`, `de` or `fr`")]
    UnknownLanguage(String),
    #[error("whisper.cpp failed to decode the audio: {reason}")]
    Decode { reason: String },
    #[error("the speech operation was cancelled")]
    Cancelled,
}

impl From<WhisperFailure> for SpeechError {
    fn from(failure: WhisperFailure) -> Self {
        match failure {
            WhisperFailure::NotInstalled { what, install } => Self::NotInstalled {
                provider: SpeechProviderKeys::WHISPER.to_owned(),
                missing: what,
                install,
            },
            WhisperFailure::Cancelled => Self::Cancelled,
            WhisperFailure::Read { .. } => {
                let message = failure.to_string();
                let WhisperFailure::Read { source, .. } = failure else {
                    return Self::provider(message);
                };
                Self::provider_with(message, source)
            }
            other => Self::provider(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_installed_names_the_command() {
        let err = SpeechError::from(WhisperFailure::NotInstalled {
            what: "no Whisper model in /x".into(),
            install: "scripts/ensure-whisper-model.sh tiny.en".into(),
        });
        assert!(
            matches!(err, SpeechError::NotInstalled { ref provider, .. } if provider == "whisper")
        );
        assert_eq!(
            err.to_string(),
            "speech provider `whisper` is not installed: no Whisper model in /x; \
             install it with `scripts/ensure-whisper-model.sh tiny.en`"
        );
        assert!(matches!(
            SpeechError::from(WhisperFailure::Cancelled),
            SpeechError::Cancelled
        ));
        let read = SpeechError::from(WhisperFailure::Read {
            path: "/m/model.bin".into(),
            source: std::io::Error::other("gone"),
        });
        assert!(std::error::Error::source(&read).is_some());
    }
}
