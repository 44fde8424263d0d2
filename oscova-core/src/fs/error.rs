//! Why a path was refused inside a user's root.
//!
//! Rules: every path in an error is the one the caller gave (relative to
//! the root) or a prefix of it, never the host's absolute path, so a plugin
//! can show it to a model; I/O errors keep their source. The texts are
//! plain statements; plugins map each variant to a message of their own
//! that says what the model can do instead.

use std::io;

/// Why [`UserRoot`](super::UserRoot) refused or could not resolve a path.
///
/// ```
/// use oscova_core::fs::{RootPathError, UserRoot};
///
/// # let dir = std::env::temp_dir().join(format!("oscova-fs-err-doc-{}", std::process::id()));
/// let root = UserRoot::new(&dir);
/// let Err(err) = root.resolve_existing("a/../../b") else { unreachable!() };
/// assert!(matches!(err, RootPathError::ParentDir { ref path } if path == "a/../../b"));
/// assert_eq!(err.path(), Some("a/../../b"));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RootPathError {
    /// An absolute path (`/etc/passwd`, `C:\x`).
    #[error("`{path}` is an absolute path; paths are relative to the root")]
    Absolute {
        /// The path as given.
        path: String,
    },
    /// A path with a `..` component.
    #[error("`{path}` contains `..`; paths must stay inside the root")]
    ParentDir {
        /// The path as given.
        path: String,
    },
    /// A path containing a NUL byte.
    #[error("`{path}` contains a NUL byte")]
    NulByte {
        /// The path as given.
        path: String,
    },
    /// A path to write that names no file (`""`, `.`).
    #[error("`{path}` names no file")]
    NoFileName {
        /// The path as given.
        path: String,
    },
    /// A path that resolves outside the root through a symbolic link.
    #[error("`{path}` leads outside the root through a symbolic link")]
    Escapes {
        /// The path as given.
        path: String,
    },
    /// A symbolic link whose target does not exist.
    #[error("`{path}` is a symbolic link to something that does not exist")]
    DanglingSymlink {
        /// The link: the path as given, or the directory on its way that is
        /// the link, relative to the root.
        path: String,
    },
    /// Nothing at this path.
    #[error("`{path}` does not exist")]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// A parent directory of a file to write does not exist, and creating
    /// it was not asked for.
    #[error("the directory `{path}` does not exist")]
    MissingParent {
        /// The first missing directory, relative to the root.
        path: String,
    },
    /// A parent of a file to write is not a directory.
    #[error("`{path}` is a file, not a directory")]
    NotADirectory {
        /// That parent, relative to the root.
        path: String,
    },
    /// A file to write is a directory.
    #[error("`{path}` is a directory")]
    IsADirectory {
        /// The path as given.
        path: String,
    },
    /// The root could not be created or opened.
    #[error("the root is not available: {source}")]
    RootUnavailable {
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// Any other I/O failure.
    #[error("could not {action} `{path}`: {source}")]
    Io {
        /// What was being done (`open`, `create the directory`).
        action: &'static str,
        /// The path as given.
        path: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
}

impl RootPathError {
    /// The path the error is about, relative to the root; `None` for
    /// [`RootUnavailable`](Self::RootUnavailable).
    pub fn path(&self) -> Option<&str> {
        match self {
            Self::Absolute { path }
            | Self::ParentDir { path }
            | Self::NulByte { path }
            | Self::NoFileName { path }
            | Self::Escapes { path }
            | Self::DanglingSymlink { path }
            | Self::NotFound { path }
            | Self::MissingParent { path }
            | Self::NotADirectory { path }
            | Self::IsADirectory { path }
            | Self::Io { path, .. } => Some(path),
            Self::RootUnavailable { .. } => None,
        }
    }

    /// An [`Io`](Self::Io) maker for `map_err`.
    pub(super) fn io(action: &'static str, path: &str) -> impl FnOnce(io::Error) -> Self + use<> {
        let path = path.to_owned();
        move |source| Self::Io {
            action,
            path,
            source,
        }
    }
}
