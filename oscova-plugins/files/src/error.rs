//! The one error type of the files tools.
//!
//! Rules: messages name paths as the model wrote them (relative to the
//! files root), never the host's absolute paths, and say what to do
//! instead; I/O errors keep their source. A refusal of the root itself is
//! [`FilesError::Root`], the [`RootPathError`] wrapped (not copied variant
//! by variant, so a refusal added to `oscova-core` reaches the model as
//! it is), with the advice of [`RootPathError::hint`] or, where it names
//! one of this plugin's arguments, this plugin's own.

use std::io;

use oscova_core::fs::RootPathError;

/// Why a files tool refused or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FilesError {
    /// The root refused the path, or the file system failed under it.
    #[error("{0}{hint}", hint = hint(.0))]
    Root(#[from] RootPathError),
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

/// What the model can do about a root refusal, in this plugin's words
/// where the advice names its tools or arguments.
fn hint(error: &RootPathError) -> &'static str {
    match error {
        RootPathError::NotFound { .. } => "; call list to see what is there",
        RootPathError::IsADirectory { .. } => "; call list to see its contents",
        RootPathError::AlreadyExists { .. } => {
            "; pass mode `overwrite` to replace it or `append` to add to it"
        }
        other => other.hint(),
    }
}

#[cfg(test)]
mod tests {
    use oscova_core::fs::FileKind;

    use super::*;

    #[test]
    fn root_refusals_are_wrapped_with_advice() {
        let shown = |e: RootPathError| FilesError::from(e).to_string();
        assert_eq!(
            shown(RootPathError::NotFound {
                path: "a.txt".into()
            }),
            "`a.txt` does not exist; call list to see what is there"
        );
        assert_eq!(
            shown(RootPathError::AlreadyExists {
                path: "a.txt".into()
            }),
            "`a.txt` already exists; pass mode `overwrite` to replace it or `append` to add to it"
        );
        assert_eq!(
            shown(RootPathError::Absolute {
                path: "/etc".into()
            }),
            "`/etc` is an absolute path; paths are relative to your files root, like `notes/todo.txt`"
        );
        // A refusal this plugin never names still reaches the model whole.
        assert_eq!(
            shown(RootPathError::NotRegular {
                path: "pipe".into(),
                kind: FileKind::Fifo
            }),
            "`pipe` is a FIFO (named pipe), not a regular file; only regular files are read or written"
        );
        let wrapped = FilesError::from(RootPathError::NotFound { path: "x".into() });
        assert!(matches!(
            wrapped,
            FilesError::Root(RootPathError::NotFound { .. })
        ));
    }
}
