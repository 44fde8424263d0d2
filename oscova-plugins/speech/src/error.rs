//! The one error type of the speech tools.
//!
//! Rules: messages name paths as the model wrote them (relative to the
//! files root), never the host's absolute paths, and say what to do
//! instead. A refusal of the root itself is [`SpeechToolError::Root`], the
//! [`RootPathError`] wrapped rather than copied variant by variant, with
//! [`RootPathError::hint`]'s advice or, where it names one of this
//! plugin's arguments, this plugin's own. Routing and provider failures keep the [`SpeechError`] as their
//! source and add which provider was asked and what to try next; an
//! offline refusal says so plainly, so the model does not retry it.

use std::io;

use oscova_core::fs::RootPathError;
use oscova_speech::SpeechError;

/// Why a speech tool refused or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpeechToolError {
    /// The root refused the path, or the file system failed under it.
    #[error("{0}{hint}", hint = root_hint(.0))]
    Root(#[from] RootPathError),
    /// The file to transcribe is not WAV audio.
    #[error(
        "`{path}` is not a WAV file ({reason}); transcribe takes WAV audio (RIFF/WAVE PCM), such as a file made by speak"
    )]
    NotWav {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The file to transcribe is over the size cap.
    #[error(
        "`{path}` has {size} bytes; at most {limit} bytes of audio can be transcribed in one call"
    )]
    AudioTooLarge {
        /// The path as given.
        path: String,
        /// Its size in bytes.
        size: u64,
        /// The cap.
        limit: u64,
    },
    /// Text to speak over the cap.
    #[error(
        "the text has {chars} characters; at most {limit} can be spoken in one call, so split it over several files"
    )]
    TextTooLong {
        /// The text's length in characters.
        chars: usize,
        /// The cap.
        limit: usize,
    },
    /// Nothing to speak.
    #[error("the text is empty; give the words to speak")]
    EmptyText,
    /// A `provider` argument naming a provider this user may not pick.
    #[error(
        "speech provider `{key}` is not set up for you for {direction}; leave `provider` out to use `{configured}`, or pick one of: {}",
        choices.join(", ")
    )]
    ProviderNotOffered {
        /// The key asked for.
        key: String,
        /// `speaking` or `transcribing`.
        direction: &'static str,
        /// The user's configured provider.
        configured: String,
        /// What may be picked: the configured provider and the routable
        /// providers that run on this machine by design.
        choices: Vec<String>,
    },
    /// The router refused or the provider failed.
    #[error(
        "{action} with speech provider `{provider}` failed: {source}{}",
        hint(source)
    )]
    Speech {
        /// `speaking` or `transcribing`.
        action: &'static str,
        /// The provider's type key.
        provider: String,
        /// What the router or provider said.
        #[source]
        source: SpeechError,
    },
    /// The provider returned something that is not WAV audio.
    #[error("speech provider `{provider}` returned audio that is not a usable WAV file ({reason})")]
    BadProviderAudio {
        /// The provider's type key.
        provider: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The host configured no root for this user.
    #[error("no files root is configured for user `{user}`")]
    NoRoot {
        /// The user's id.
        user: String,
    },
    /// The call was cancelled.
    #[error("the call was cancelled")]
    Cancelled,
    /// Any other I/O failure.
    #[error("could not {action} `{path}`: {source}")]
    Io {
        /// What was being done (`read`, `write`).
        action: &'static str,
        /// The path as given.
        path: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
}

impl SpeechToolError {
    /// An [`Io`](Self::Io) maker for `map_err`.
    pub(crate) fn io(action: &'static str, path: &str) -> impl FnOnce(io::Error) -> Self + use<> {
        let path = path.to_owned();
        move |source| Self::Io {
            action,
            path,
            source,
        }
    }

    /// A routing or provider error; cancellation stays [`Cancelled`](Self::Cancelled).
    pub(crate) fn speech(action: &'static str, provider: &str, source: SpeechError) -> Self {
        match source {
            SpeechError::Cancelled => Self::Cancelled,
            source => Self::Speech {
                action,
                provider: provider.to_owned(),
                source,
            },
        }
    }
}

/// What the model can do about a root refusal, in this plugin's words
/// where the advice names its arguments.
fn root_hint(error: &RootPathError) -> &'static str {
    match error {
        RootPathError::NotFound { .. } => {
            "; check the name, or list your files to see what is there"
        }
        RootPathError::IsADirectory { .. } => "; give the path of a file",
        RootPathError::AlreadyExists { .. } => {
            "; pass `overwrite: true` to replace it, or choose another path"
        }
        RootPathError::NoFileName { .. } => "; give a file name such as `hello.wav`",
        other => other.hint(),
    }
}

/// What the model can do about a speech error, as a sentence to append.
fn hint(error: &SpeechError) -> &'static str {
    match error {
        SpeechError::NotLocal { .. } | SpeechError::NoLocalEndpoint { .. } => {
            ". Your settings keep speech on this machine, so this provider cannot be used; \
             leave `provider` out or pick one that runs locally, such as `flite` or `pocketsphinx`"
        }
        SpeechError::UnknownVoice { .. } => {
            ". Call again with one of those voices, or leave `voice` out"
        }
        SpeechError::UnknownProvider { .. } => ". Leave `provider` out to use your configured one",
        SpeechError::NotInstalled { .. } => {
            ". Only the host's operator can install it; until then leave `provider` out or pick \
             another local provider, such as `flite`"
        }
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_refusals_are_wrapped_with_advice() {
        let shown = |e: RootPathError| SpeechToolError::from(e).to_string();
        assert_eq!(
            shown(RootPathError::AlreadyExists {
                path: "a.wav".into()
            }),
            "`a.wav` already exists; pass `overwrite: true` to replace it, or choose another path"
        );
        assert_eq!(
            shown(RootPathError::NoFileName { path: "".into() }),
            "`` names no file; give a file name such as `hello.wav`"
        );
        assert_eq!(
            shown(RootPathError::HardLinked {
                path: "l.wav".into(),
                links: 2
            }),
            "`l.wav` has 2 hard links, so it may also be a file outside your files root"
        );
    }
}
