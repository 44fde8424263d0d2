//! The piper provider's own error, and how it becomes [`SpeechError`].
//!
//! Rules: every failure of the provider is a [`PiperError`] variant, so the
//! provider's code and its tests can tell the cases apart; the public API
//! returns [`SpeechError`], converted in one place. A missing asset (the
//! onnxruntime library, a voice, the espeak-ng program) is
//! [`SpeechError::NotInstalled`] naming the command that installs it; an
//! unknown voice [`SpeechError::UnknownVoice`]; text with nothing to say
//! [`SpeechError::InvalidText`]; cancellation [`SpeechError::Cancelled`];
//! everything else [`SpeechError::Provider`] with this error's text.

use std::path::PathBuf;

use oscova_core::process::SpawnError;
use oscova_core::provider::speech::{SpeechError, SpeechProviderKeys};

/// An error of the piper provider.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PiperError {
    /// Something the provider needs is not on this machine.
    #[error("{missing}")]
    NotInstalled {
        missing: String,
        install: &'static str,
    },

    /// The voice named is not among the installed ones.
    #[error("unknown piper voice `{voice}`")]
    UnknownVoice { voice: String, known: Vec<String> },

    /// A voice's files exist but cannot be used.
    #[error("the piper voice {} cannot be used: {reason}", .path.display())]
    BadVoice { path: PathBuf, reason: String },

    /// A provider setting (`options`) is wrong.
    #[error("the piper setting `{key}` {reason}")]
    BadOption { key: String, reason: String },

    /// The text is empty or only whitespace.
    #[error("there is no text to speak; pass a non-empty text")]
    EmptyText,

    /// espeak-ng found nothing the voice can pronounce.
    #[error("the text contains nothing the piper voice can pronounce")]
    NothingToSay,

    /// onnxruntime failed.
    #[error("onnxruntime failed while {action}: {reason}")]
    Onnx { action: String, reason: String },

    /// espeak-ng could not be run, or failed.
    #[error("{source}")]
    Program {
        #[source]
        source: Box<SpawnError>,
    },

    /// espeak-ng wrote something that is not UTF-8 text.
    #[error("espeak-ng wrote phonemes that are not UTF-8 text; check its installation")]
    BadPhonemes,

    /// The synthesis task stopped (it panicked or the runtime shut down).
    #[error("the piper synthesis task stopped unexpectedly: {source}")]
    Task {
        #[source]
        source: tokio::task::JoinError,
    },

    /// The WAV file could not be written.
    #[error("encoding the piper audio as WAV failed: {source}")]
    Wav {
        #[source]
        source: hound::Error,
    },

    /// The audio passed the provider's limit; the rest was not spoken.
    #[error(
        "the text makes more than {limit_seconds} seconds of speech, the limit ({seconds:.1} s \
         after {sentences} of {of} sentences); split it into shorter parts"
    )]
    TooLong {
        seconds: f64,
        sentences: usize,
        of: usize,
        limit_seconds: u32,
    },

    /// The operation was cancelled.
    #[error("the speech operation was cancelled")]
    Cancelled,
}

impl PiperError {
    /// A [`Onnx`](Self::Onnx) maker for `map_err`.
    pub(crate) fn onnx<E: std::fmt::Display>(action: &str) -> impl FnOnce(E) -> Self + use<'_, E> {
        move |err| Self::Onnx {
            action: action.to_owned(),
            reason: err.to_string(),
        }
    }

    /// A [`BadOption`](Self::BadOption).
    pub(crate) fn option(key: &str, reason: impl Into<String>) -> Self {
        Self::BadOption {
            key: key.to_owned(),
            reason: reason.into(),
        }
    }
}

impl From<PiperError> for SpeechError {
    fn from(err: PiperError) -> Self {
        let message = err.to_string();
        match err {
            PiperError::NotInstalled { missing, install } => Self::NotInstalled {
                provider: SpeechProviderKeys::PIPER.to_owned(),
                missing,
                install: install.to_owned(),
            },
            PiperError::UnknownVoice { voice, known } => Self::UnknownVoice { voice, known },
            PiperError::EmptyText | PiperError::NothingToSay | PiperError::TooLong { .. } => {
                Self::InvalidText(message)
            }
            PiperError::Cancelled => Self::Cancelled,
            PiperError::Program { source } if matches!(*source, SpawnError::Cancelled { .. }) => {
                Self::Cancelled
            }
            PiperError::Program { source } => Self::Provider {
                message,
                source: Some(source),
            },
            PiperError::Task { source } => Self::Provider {
                message,
                source: Some(Box::new(source)),
            },
            PiperError::Wav { source } => Self::Provider {
                message,
                source: Some(Box::new(source)),
            },
            PiperError::BadVoice { .. }
            | PiperError::BadOption { .. }
            | PiperError::Onnx { .. }
            | PiperError::BadPhonemes => Self::Provider {
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
    fn missing_assets_are_typed_and_name_the_install_command() {
        let err = SpeechError::from(PiperError::NotInstalled {
            missing: "no voice in /x".into(),
            install: "scripts/ensure-piper.sh",
        });
        assert!(matches!(
            &err,
            SpeechError::NotInstalled { provider, install, .. }
                if provider == "piper" && install == "scripts/ensure-piper.sh"
        ));
        assert_eq!(
            err.to_string(),
            "speech provider `piper` is not installed: no voice in /x; install it with `scripts/ensure-piper.sh`"
        );
    }

    #[test]
    fn voices_text_and_cancellation_keep_their_meaning() {
        let err = SpeechError::from(PiperError::UnknownVoice {
            voice: "x".into(),
            known: vec!["en_US-joe-medium".into()],
        });
        assert!(matches!(err, SpeechError::UnknownVoice { ref voice, .. } if voice == "x"));
        assert!(matches!(
            SpeechError::from(PiperError::NothingToSay),
            SpeechError::InvalidText(_)
        ));
        assert!(matches!(
            SpeechError::from(PiperError::Cancelled),
            SpeechError::Cancelled
        ));
    }
}
