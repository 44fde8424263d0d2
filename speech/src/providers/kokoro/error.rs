//! The kokoro provider's own error, and how it becomes [`SpeechError`].
//!
//! Rules: every failure of the provider is a [`KokoroError`] variant; what
//! fails in the parts shared with piper (onnxruntime, espeak-ng, WAV
//! encoding, a missing asset, a stop) is the shared [`OnnxError`],
//! wrapped, keeping the install command it names; the public API returns
//! [`SpeechError`], converted in one place. A missing file (model,
//! vocabulary, voices, the onnxruntime library, espeak-ng) is
//! [`SpeechError::NotInstalled`] naming the command that installs it; an
//! unknown voice [`SpeechError::UnknownVoice`] with the installed voices;
//! text with nothing to say or too long [`SpeechError::InvalidText`];
//! cancellation [`SpeechError::Cancelled`]; everything else
//! [`SpeechError::Provider`].

use oscova_core::provider::speech::{SpeechError, SpeechProviderKeys};

use crate::onnx::error::OnnxError;

/// An error of the kokoro provider.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KokoroError {
    /// A failure of the parts shared with piper.
    #[error(transparent)]
    Shared(#[from] OnnxError),

    /// The voice named is not among the installed ones.
    #[error("unknown kokoro voice `{voice}`")]
    UnknownVoice { voice: String, known: Vec<String> },

    /// One of the provider's files exists but cannot be used.
    #[error("the kokoro file {path} cannot be used: {reason}")]
    BadFile { path: String, reason: String },

    /// A provider setting (`options`) is wrong.
    #[error("the kokoro setting `{key}` {reason}")]
    BadOption { key: String, reason: String },

    /// The text is empty or only whitespace.
    #[error("there is no text to speak; pass a non-empty text")]
    EmptyText,

    /// The vocabulary has nothing for what espeak-ng wrote.
    #[error("the text contains nothing the kokoro voice can pronounce")]
    NothingToSay,

    /// The audio passed the length cap; the rest was not computed.
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
}

impl KokoroError {
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

impl From<KokoroError> for SpeechError {
    fn from(err: KokoroError) -> Self {
        let message = err.to_string();
        match err {
            KokoroError::Shared(shared) => shared.into_speech(SpeechProviderKeys::KOKORO),
            KokoroError::UnknownVoice { voice, known } => Self::UnknownVoice { voice, known },
            KokoroError::EmptyText | KokoroError::NothingToSay | KokoroError::TooLong { .. } => {
                Self::InvalidText(message)
            }
            KokoroError::BadFile { .. } | KokoroError::BadOption { .. } => Self::Provider {
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
        let err = SpeechError::from(KokoroError::not_installed(
            "no model".into(),
            "scripts/ensure-kokoro.sh",
        ));
        assert!(matches!(
            &err,
            SpeechError::NotInstalled { provider, install, .. }
                if provider == "kokoro" && install == "scripts/ensure-kokoro.sh"
        ));
    }

    #[test]
    fn a_shared_part_keeps_its_install_command() {
        let err = SpeechError::from(KokoroError::from(OnnxError::NotInstalled {
            missing: "no espeak-ng".into(),
            install: "apt-get install espeak-ng",
        }));
        assert!(matches!(
            &err,
            SpeechError::NotInstalled { provider, install, .. }
                if provider == "kokoro" && install == "apt-get install espeak-ng"
        ));
    }
}
