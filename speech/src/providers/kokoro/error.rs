//! The kokoro provider's own error, and how it becomes [`SpeechError`].
//!
//! Rules: every failure of the provider is a [`KokoroError`] variant; the
//! public API returns [`SpeechError`], converted in one place. A missing
//! file (model, vocabulary, voices, the onnxruntime library, espeak-ng) is
//! [`SpeechError::NotInstalled`] naming the command that installs it; an
//! unknown voice [`SpeechError::UnknownVoice`] with the installed voices;
//! text with nothing to say or too long [`SpeechError::InvalidText`];
//! cancellation [`SpeechError::Cancelled`]; everything else
//! [`SpeechError::Provider`]. Failures of the parts shared with piper
//! (onnxruntime loading, the espeak-ng phonemizer) arrive as `PiperError`
//! and are converted here, keeping the install command they name.

use oscova_core::process::SpawnError;
use oscova_core::provider::speech::{SpeechError, SpeechProviderKeys};

use crate::piper::error::PiperError;

#[derive(Debug, thiserror::Error)]
pub(crate) enum KokoroError {
    #[error("{missing}")]
    NotInstalled {
        missing: String,
        install: &'static str,
    },

    #[error("unknown kokoro voice `{voice}`")]
    UnknownVoice { voice: String, known: Vec<String> },

    #[error("the kokoro file {path} cannot be used: {reason}")]
    BadFile { path: String, reason: String },

    #[error("the kokoro setting `{key}` {reason}")]
    BadOption { key: String, reason: String },

    #[error("there is no text to speak; pass a non-empty text")]
    EmptyText,

    #[error("the text contains nothing the kokoro voice can pronounce")]
    NothingToSay,

    #[error("onnxruntime failed while {action}: {reason}")]
    Onnx { action: String, reason: String },

    #[error("{source}")]
    Program {
        #[source]
        source: Box<SpawnError>,
    },

    #[error("espeak-ng wrote phonemes that are not UTF-8 text; check its installation")]
    BadPhonemes,

    #[error("the kokoro synthesis task stopped unexpectedly: {source}")]
    Task {
        #[source]
        source: tokio::task::JoinError,
    },

    #[error("encoding the kokoro audio as WAV failed: {reason}")]
    Wav { reason: String },

    #[error(
        "the text makes more than {limit_seconds} seconds of speech, the limit ({seconds:.1} s \
         after {chunks} of {of} parts); split it into shorter parts"
    )]
    TooLong {
        seconds: f64,
        chunks: usize,
        of: usize,
        limit_seconds: u32,
    },

    #[error("the speech operation was cancelled")]
    Cancelled,
}

impl KokoroError {
    pub(crate) fn onnx<E: std::fmt::Display>(action: &str) -> impl FnOnce(E) -> Self + use<'_, E> {
        move |err| Self::Onnx {
            action: action.to_owned(),
            reason: err.to_string(),
        }
    }

    pub(crate) fn option(key: &str, reason: impl Into<String>) -> Self {
        Self::BadOption {
            key: key.to_owned(),
            reason: reason.into(),
        }
    }
}

impl From<PiperError> for KokoroError {
    fn from(err: PiperError) -> Self {
        match err {
            PiperError::NotInstalled { missing, install } => {
                Self::NotInstalled { missing, install }
            }
            PiperError::Onnx { action, reason } => Self::Onnx { action, reason },
            PiperError::Program { source } => Self::Program { source },
            PiperError::BadPhonemes => Self::BadPhonemes,
            PiperError::NothingToSay | PiperError::EmptyText => Self::NothingToSay,
            PiperError::Cancelled => Self::Cancelled,
            PiperError::Task { source } => Self::Task { source },
            PiperError::Wav { source } => Self::Wav {
                reason: source.to_string(),
            },
            other => Self::Onnx {
                action: "preparing the synthesis".to_owned(),
                reason: other.to_string(),
            },
        }
    }
}

impl From<KokoroError> for SpeechError {
    fn from(err: KokoroError) -> Self {
        let message = err.to_string();
        match err {
            KokoroError::NotInstalled { missing, install } => Self::NotInstalled {
                provider: SpeechProviderKeys::KOKORO.to_owned(),
                missing,
                install: install.to_owned(),
            },
            KokoroError::UnknownVoice { voice, known } => Self::UnknownVoice { voice, known },
            KokoroError::EmptyText | KokoroError::NothingToSay | KokoroError::TooLong { .. } => {
                Self::InvalidText(message)
            }
            KokoroError::Cancelled => Self::Cancelled,
            KokoroError::Program { source } if matches!(*source, SpawnError::Cancelled { .. }) => {
                Self::Cancelled
            }
            KokoroError::Program { source } => Self::Provider {
                message,
                source: Some(source),
            },
            KokoroError::Task { source } => Self::Provider {
                message,
                source: Some(Box::new(source)),
            },
            KokoroError::BadFile { .. }
            | KokoroError::BadOption { .. }
            | KokoroError::Onnx { .. }
            | KokoroError::BadPhonemes
            | KokoroError::Wav { .. } => Self::Provider {
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
    fn missing_files_name_the_installer_and_the_provider() {
        let err = SpeechError::from(KokoroError::NotInstalled {
            missing: "no model".into(),
            install: "scripts/ensure-kokoro.sh",
        });
        assert!(matches!(
            &err,
            SpeechError::NotInstalled { provider, install, .. }
                if provider == "kokoro" && install == "scripts/ensure-kokoro.sh"
        ));
    }

    #[test]
    fn a_shared_part_keeps_its_install_command() {
        let err = KokoroError::from(PiperError::NotInstalled {
            missing: "no espeak-ng".into(),
            install: "apt-get install espeak-ng",
        });
        assert!(
            matches!(&err, KokoroError::NotInstalled { install, .. } if *install == "apt-get install espeak-ng")
        );
    }
}
