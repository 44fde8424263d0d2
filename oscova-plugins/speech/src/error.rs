//! The one error type of the speech tools.
//!
//! Rules: messages name paths as the model wrote them (relative to the
//! files root), never the host's absolute paths, and say what to do
//! instead. Routing and provider failures keep the [`SpeechError`] as their
//! source and add which provider was asked and what to try next; an
//! offline refusal says so plainly, so the model does not retry it.

use std::io;

use oscova_core::fs::RootPathError;
use oscova_speech::SpeechError;

/// Why a speech tool refused or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpeechToolError {
    /// An absolute path (`/etc/passwd`, `C:\x`).
    #[error(
        "`{path}` is an absolute path; paths are relative to your files root, like `audio/hello.wav`"
    )]
    Absolute {
        /// The path as given.
        path: String,
    },
    /// A path with a `..` component.
    #[error("`{path}` contains `..`; paths must stay inside your files root")]
    ParentDir {
        /// The path as given.
        path: String,
    },
    /// A path that resolves outside the root through a symbolic link.
    #[error("`{path}` leads outside your files root through a symbolic link, so it cannot be used")]
    Escapes {
        /// The path as given.
        path: String,
    },
    /// A symbolic link whose target does not exist.
    #[error("`{path}` is a symbolic link to something that does not exist; refusing to use it")]
    DanglingSymlink {
        /// The path as given.
        path: String,
    },
    /// A path that is not usable at all (no file name, a NUL byte).
    #[error("`{path}` is not a usable path: {reason}")]
    InvalidPath {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Nothing at this path.
    #[error("`{path}` does not exist; check the name, or list your files to see what is there")]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// The parent directory of the file to write does not exist.
    #[error("the directory `{path}` does not exist; pass `create_dirs: true` to create it")]
    MissingParent {
        /// The missing directory, relative to the root.
        path: String,
    },
    /// A directory was needed.
    #[error("`{path}` is a file, not a directory")]
    NotADirectory {
        /// The path as given.
        path: String,
    },
    /// A file was needed.
    #[error("`{path}` is a directory; give the path of a file")]
    IsADirectory {
        /// The path as given.
        path: String,
    },
    /// `speak` would replace a file and `overwrite` was not set.
    #[error(
        "`{path}` already exists; pass `overwrite: true` to replace it, or choose another path"
    )]
    AlreadyExists {
        /// The path as given.
        path: String,
    },
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
    /// The root could not be created or opened.
    #[error("your files root is not available: {source}")]
    RootUnavailable {
        /// The I/O error.
        #[source]
        source: io::Error,
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

impl From<RootPathError> for SpeechToolError {
    /// The root's refusal in this plugin's words.
    fn from(error: RootPathError) -> Self {
        match error {
            RootPathError::Absolute { path } => Self::Absolute { path },
            RootPathError::ParentDir { path } => Self::ParentDir { path },
            RootPathError::NulByte { path } => Self::InvalidPath {
                path,
                reason: "it contains a NUL byte",
            },
            RootPathError::NoFileName { path } => Self::InvalidPath {
                path,
                reason: "it names no file; give a file name such as `hello.wav`",
            },
            RootPathError::Escapes { path } => Self::Escapes { path },
            RootPathError::DanglingSymlink { path } => Self::DanglingSymlink { path },
            RootPathError::NotFound { path } => Self::NotFound { path },
            RootPathError::MissingParent { path } => Self::MissingParent { path },
            RootPathError::NotADirectory { path } => Self::NotADirectory { path },
            RootPathError::IsADirectory { path } => Self::IsADirectory { path },
            RootPathError::RootUnavailable { source } => Self::RootUnavailable { source },
            RootPathError::Io {
                action,
                path,
                source,
            } => Self::Io {
                action,
                path,
                source,
            },
            RootPathError::AlreadyExists { path } => Self::AlreadyExists { path },
            RootPathError::NotRegular { path, .. } => Self::InvalidPath {
                path,
                reason: "it is not a regular file",
            },
            RootPathError::HardLinked { path, .. } => Self::InvalidPath {
                path,
                reason: "it has more than one hard link, so it may be a file outside the root",
            },
            // A refusal added to oscova-core after this plugin was written.
            other => Self::Io {
                action: "use",
                path: other.path().unwrap_or_default().to_owned(),
                source: io::Error::other(other),
            },
        }
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
        _ => "",
    }
}
