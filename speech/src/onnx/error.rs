//! The error of the parts kokoro and piper share, and how it becomes
//! [`SpeechError`].
//!
//! Rules: what fails in the shared parts (loading onnxruntime, running a
//! model, the espeak-ng phonemizer, encoding WAV, the blocking task, a
//! stop) is an [`OnnxError`] variant, and each provider's own error wraps
//! it (`Shared`) rather than copying its variants; the conversion to
//! [`SpeechError`] is written once, [`OnnxError::into_speech`], with the
//! provider's key. A missing asset is [`SpeechError::NotInstalled`] naming
//! the command that installs it; text with nothing to say
//! [`SpeechError::InvalidText`]; a stop (or a killed espeak-ng)
//! [`SpeechError::Cancelled`]; everything else [`SpeechError::Provider`]
//! with this error's text.

use oscova_core::process::SpawnError;
use oscova_core::provider::speech::SpeechError;

/// A failure of the parts the onnxruntime voices share.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OnnxError {
    /// A file or program is missing; `install` installs it.
    #[error("{missing}")]
    NotInstalled {
        missing: String,
        install: &'static str,
    },

    /// onnxruntime failed.
    #[error("onnxruntime failed while {action}: {reason}")]
    Onnx { action: String, reason: String },

    /// espeak-ng could not be run, or ran and failed.
    #[error("{source}")]
    Program {
        #[source]
        source: Box<SpawnError>,
    },

    /// espeak-ng wrote something that is not UTF-8 text.
    #[error("espeak-ng wrote phonemes that are not UTF-8 text; check its installation")]
    BadPhonemes,

    /// espeak-ng found nothing the voice can pronounce.
    #[error("the text contains nothing the voice can pronounce")]
    NothingToSay,

    /// The synthesis task stopped (it panicked or the runtime shut down).
    #[error("the synthesis task stopped unexpectedly: {source}")]
    Task {
        #[source]
        source: tokio::task::JoinError,
    },

    /// Encoding the audio failed.
    #[error("encoding the audio as WAV failed: {source}")]
    Wav {
        #[source]
        source: hound::Error,
    },

    /// The request was cancelled.
    #[error("the speech operation was cancelled")]
    Cancelled,
}

impl OnnxError {
    /// A `map_err` for an onnxruntime call made while doing `action`.
    pub(crate) fn onnx<E: std::fmt::Display>(action: &str) -> impl FnOnce(E) -> Self + use<'_, E> {
        move |err| Self::Onnx {
            action: action.to_owned(),
            reason: err.to_string(),
        }
    }

    /// As the [`SpeechError`] of the provider whose type key is `provider`.
    pub(crate) fn into_speech(self, provider: &str) -> SpeechError {
        let message = self.to_string();
        match self {
            Self::NotInstalled { missing, install } => SpeechError::NotInstalled {
                provider: provider.to_owned(),
                missing,
                install: install.to_owned(),
            },
            Self::NothingToSay => SpeechError::InvalidText(message),
            Self::Cancelled => SpeechError::Cancelled,
            Self::Program { source } if matches!(*source, SpawnError::Cancelled { .. }) => {
                SpeechError::Cancelled
            }
            Self::Program { source } => SpeechError::Provider {
                message,
                source: Some(source),
            },
            Self::Task { source } => SpeechError::Provider {
                message,
                source: Some(Box::new(source)),
            },
            Self::Wav { source } => SpeechError::Provider {
                message,
                source: Some(Box::new(source)),
            },
            Self::Onnx { .. } | Self::BadPhonemes => SpeechError::Provider {
                message,
                source: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_asset_names_the_provider_and_its_installer() {
        let err = OnnxError::NotInstalled {
            missing: "no espeak-ng".into(),
            install: "apt-get install espeak-ng",
        }
        .into_speech("kokoro");
        assert!(matches!(
            &err,
            SpeechError::NotInstalled { provider, install, .. }
                if provider == "kokoro" && install == "apt-get install espeak-ng"
        ));
    }

    #[test]
    fn text_and_cancellation_keep_their_meaning() {
        assert!(matches!(
            OnnxError::NothingToSay.into_speech("piper"),
            SpeechError::InvalidText(_)
        ));
        assert!(matches!(
            OnnxError::Cancelled.into_speech("piper"),
            SpeechError::Cancelled
        ));
        let killed = OnnxError::Program {
            source: Box::new(SpawnError::Cancelled {
                command: "espeak-ng".into(),
                origin: None,
            }),
        };
        assert!(matches!(
            killed.into_speech("piper"),
            SpeechError::Cancelled
        ));
    }
}
