//! The piper provider's own error, and how it becomes [`SpeechError`].
//!
//! Rules: every failure of the provider is a [`PiperError`] variant, so the
//! provider's code and its tests can tell the cases apart; what fails in
//! the parts shared with kokoro (onnxruntime, espeak-ng, WAV encoding, a
//! missing asset, a stop) is the shared [`OnnxError`], wrapped; the public
//! API returns [`SpeechError`], converted in one place. A missing asset
//! (the onnxruntime library, a voice, the espeak-ng program) is
//! [`SpeechError::NotInstalled`] naming the command that installs it; an
//! unknown voice [`SpeechError::UnknownVoice`]; text with nothing to say
//! [`SpeechError::InvalidText`]; cancellation [`SpeechError::Cancelled`];
//! everything else [`SpeechError::Provider`] with this error's text.

use std::path::PathBuf;

use oscova_core::provider::speech::{SpeechError, SpeechProviderKeys};

use crate::onnx::error::OnnxError;

/// An error of the piper provider.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PiperError {
    /// A failure of the parts shared with kokoro.
    #[error(transparent)]
    Shared(#[from] OnnxError),

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

    /// The voice's phoneme map has nothing for what espeak-ng wrote.
    #[error("the text contains nothing the piper voice can pronounce")]
    NothingToSay,

    /// The audio passed the length cap; the rest was not computed.
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
}

impl PiperError {
    /// Something the provider needs is missing; `install` installs it.
    pub(crate) fn not_installed(missing: String, install: &'static str) -> Self {
        Self::Shared(OnnxError::NotInstalled { missing, install })
    }

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
            PiperError::Shared(shared) => shared.into_speech(SpeechProviderKeys::PIPER),
            PiperError::UnknownVoice { voice, known } => Self::UnknownVoice { voice, known },
            PiperError::EmptyText | PiperError::NothingToSay | PiperError::TooLong { .. } => {
                Self::InvalidText(message)
            }
            PiperError::BadVoice { .. } | PiperError::BadOption { .. } => Self::Provider {
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
        let err = SpeechError::from(PiperError::not_installed(
            "no voice in /x".into(),
            "scripts/ensure-piper.sh",
        ));
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
            SpeechError::from(PiperError::from(OnnxError::Cancelled)),
            SpeechError::Cancelled
        ));
    }
}
