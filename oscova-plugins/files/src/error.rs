//! The one error type of the files tools.
//!
//! Rules: messages name paths as the model wrote them (relative to the
//! files root), never the host's absolute paths, and say what to do
//! instead; I/O errors keep their source.

use std::io;

use oscova_core::fs::RootPathError;

/// Why a files tool refused or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FilesError {
    /// An absolute path (`/etc/passwd`, `C:\x`).
    #[error(
        "`{path}` is an absolute path; paths are relative to your files root, like `notes/todo.txt`"
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
    /// A path that is not usable at all (an empty file name, a NUL byte).
    #[error("`{path}` is not a usable path: {reason}")]
    InvalidPath {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Nothing at this path.
    #[error("`{path}` does not exist; call list to see what is there")]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// The parent directory of a file to write does not exist.
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
    #[error("`{path}` is a directory; call list to see its contents")]
    IsADirectory {
        /// The path as given.
        path: String,
    },
    /// `mode: create` and the file is there.
    #[error(
        "`{path}` already exists; pass mode `overwrite` to replace it or `append` to add to it"
    )]
    AlreadyExists {
        /// The path as given.
        path: String,
    },
    /// The file is not text.
    #[error(
        "`{path}` looks binary ({size} bytes, contains NUL bytes); these tools handle text only"
    )]
    Binary {
        /// The path as given.
        path: String,
        /// Its size in bytes.
        size: u64,
    },
    /// A read starting past the end.
    #[error("offset {offset} is past the end of `{path}`, which has {size} bytes")]
    OffsetPastEnd {
        /// The path as given.
        path: String,
        /// The requested offset.
        offset: u64,
        /// The file's size.
        size: u64,
    },
    /// Content to write over the cap.
    #[error("the content is {size} bytes; at most {limit} bytes can be written in one call")]
    TooLarge {
        /// The content's size.
        size: u64,
        /// The cap.
        limit: u64,
    },
    /// A glob that does not parse.
    #[error(
        "the pattern `{pattern}` is not a valid glob ({reason}); use forms like `*.md` or `src/**/*.rs`"
    )]
    BadPattern {
        /// The pattern as given.
        pattern: String,
        /// What the glob parser said.
        reason: String,
    },
    /// A search with neither a pattern nor text.
    #[error(
        "give `pattern` (a glob such as `**/*.md`), `text` (words to look for inside files), or both"
    )]
    NothingToSearch,
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
        /// What was being done (`read`, `write`, `list`).
        action: &'static str,
        /// The path as given.
        path: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
}

impl FilesError {
    /// An [`Io`](Self::Io) maker for `map_err`.
    pub(crate) fn io(action: &'static str, path: &str) -> impl FnOnce(io::Error) -> Self + use<> {
        let path = path.to_owned();
        move |source| Self::Io {
            action,
            path,
            source,
        }
    }
}

impl From<RootPathError> for FilesError {
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
                reason: "it names no file; give a file name such as `notes.txt`",
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
