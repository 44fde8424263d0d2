//! Why a path was refused inside a user's root, or a file refused anywhere.
//!
//! Rules: every path in a [`RootPathError`] is relative to the root (the
//! one the caller gave, or the entry on its way that the error is about),
//! never the host's absolute path, so a plugin can show it to a model; the
//! root is called "your files root", as the plugins that share it call it
//! to the model. I/O errors keep their source. The texts are plain
//! statements; a plugin wraps the error and adds what the model can do
//! instead ([`RootPathError::hint`], or advice about its own arguments).

use std::fmt;
use std::io;
use std::path::PathBuf;

/// What is at a path, as the file system says without following links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FileKind {
    /// A regular file: the only kind that is read or written.
    File,
    /// A directory.
    Directory,
    /// A symbolic link.
    Symlink,
    /// A FIFO (named pipe): opening it could block, reading it never end.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character device (`/dev/zero`, a terminal).
    CharDevice,
    /// A block device.
    BlockDevice,
    /// Something else.
    Unknown,
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::File => "a regular file",
            Self::Directory => "a directory",
            Self::Symlink => "a symbolic link",
            Self::Fifo => "a FIFO (named pipe)",
            Self::Socket => "a socket",
            Self::CharDevice => "a character device",
            Self::BlockDevice => "a block device",
            Self::Unknown => "not a regular file",
        })
    }
}

/// Why [`open_regular`](super::open_regular),
/// [`read_regular`](super::read_regular),
/// [`create_regular`](super::create_regular) or one of their private
/// and trusted kin refused a file the host named.
///
/// ```
/// use oscova_core::fs::{FileError, FileKind, read_regular};
///
/// let dir = std::env::temp_dir();
/// let err = read_regular(&dir, 1024).unwrap_err();
/// assert!(matches!(err, FileError::NotRegular { kind: FileKind::Directory }));
/// assert_eq!(err.to_string(), "it is a directory, not a regular file");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// Not a regular file (checked on the opened handle).
    #[error("it is {kind}, not a regular file")]
    NotRegular {
        /// What it is.
        kind: FileKind,
    },
    /// More bytes than the cap (counted while reading, not only from the
    /// size the file system reports).
    #[error("it is larger than {limit} bytes")]
    TooLarge {
        /// The cap.
        limit: u64,
    },
    /// A file the host trusts ([`read_trusted`](super::read_trusted)),
    /// or a directory or link on its way, could have been written by
    /// someone other than its owner and root.
    #[error("{} {why}", .path.display())]
    Untrusted {
        /// The file, directory or link at fault (links resolved up to it).
        path: PathBuf,
        /// What is wrong with it.
        why: Untrusted,
    },
    /// A file that holds what only its owner may read (conversations,
    /// tasks, tokens, credentials: see
    /// [`ensure_private`](super::ensure_private)) is open to its group or
    /// others. Refused, not repaired.
    #[error(
        "{} is open to {} (mode {mode:04o}), but what it holds (conversations, tasks, \
         tokens or credentials) is for its owner alone; run `chmod go-rwx` on it",
        .path.display(),
        exposed_to(*.mode)
    )]
    Exposed {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The file could not be opened or read.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Who a mode lets at a file besides its owner.
fn exposed_to(mode: u32) -> &'static str {
    match (mode & 0o070 != 0, mode & 0o007 != 0) {
        (true, true) => "its group and others",
        (true, false) => "its group",
        _ => "others",
    }
}

/// Why [`read_trusted`](super::read_trusted) refused a file, a directory
/// on its way or a link it would follow: ssh's rules.
///
/// ```
/// use oscova_core::fs::Untrusted;
///
/// let why = Untrusted::Writable { mode: 0o775 };
/// assert_eq!(
///     why.to_string(),
///     "is writable by its group (mode 0775), so someone other than its owner could change what \
///      this program trusts; run `chmod go-w` on it"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Untrusted {
    /// Its group or others may write it (a directory only when it has no
    /// sticky bit).
    Writable {
        /// Its permission bits.
        mode: u32,
    },
    /// Owned by someone who is neither the process's user nor root.
    Owner {
        /// Its owner.
        uid: u32,
        /// The process's effective user.
        user: u32,
    },
    /// A symbolic link owned by someone who is neither the process's user
    /// nor root (one planted in a shared directory such as `/tmp`).
    LinkOwner {
        /// The link's owner.
        uid: u32,
        /// The process's effective user.
        user: u32,
    },
}

impl fmt::Display for Untrusted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Writable { mode } => {
                let who = match (mode & 0o020 != 0, mode & 0o002 != 0) {
                    (true, true) => "its group and others",
                    (true, false) => "its group",
                    _ => "others",
                };
                write!(
                    f,
                    "is writable by {who} (mode {mode:04o}), so someone other than its owner \
                     could change what this program trusts; run `chmod go-w` on it"
                )
            }
            Self::Owner { uid, user } => write!(
                f,
                "is owned by uid {uid}, neither this user (uid {user}) nor root, so its owner \
                 decides what this program trusts"
            ),
            Self::LinkOwner { uid, user } => write!(
                f,
                "is a symbolic link owned by uid {uid}, neither this user (uid {user}) nor \
                 root; refusing to follow it"
            ),
        }
    }
}

impl From<FileError> for io::Error {
    /// For callers that report I/O errors: the refusal's text, with the
    /// closest kind.
    fn from(error: FileError) -> Self {
        match error {
            FileError::Io(error) => error,
            FileError::NotRegular {
                kind: FileKind::Directory,
            } => io::Error::new(io::ErrorKind::IsADirectory, error.to_string()),
            FileError::TooLarge { .. } => {
                io::Error::new(io::ErrorKind::FileTooLarge, error.to_string())
            }
            FileError::Untrusted { .. } | FileError::Exposed { .. } => {
                io::Error::new(io::ErrorKind::PermissionDenied, error.to_string())
            }
            other => io::Error::new(io::ErrorKind::InvalidInput, other.to_string()),
        }
    }
}

/// Why [`UserRoot`](super::UserRoot) refused or could not resolve a path.
///
/// ```
/// use oscova_core::fs::{RootPathError, UserRoot};
///
/// # let dir = std::env::temp_dir().join(format!("oscova-fs-err-doc-{}", std::process::id()));
/// let root = UserRoot::new(&dir);
/// let Err(err) = root.open_file("a/../../b") else { unreachable!() };
/// assert!(matches!(err, RootPathError::ParentDir { ref path } if path == "a/../../b"));
/// assert_eq!(err.path(), Some("a/../../b"));
/// assert!(!dir.exists(), "a path refused as written touches nothing");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RootPathError {
    /// An absolute path (`/etc/passwd`, `C:\x`).
    #[error("`{path}` is an absolute path; paths are relative to your files root")]
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
    /// A path that leads outside the root through a symbolic link.
    #[error("`{path}` leads outside your files root through a symbolic link")]
    Escapes {
        /// The path as given.
        path: String,
    },
    /// A symbolic link inside the root whose target does not exist.
    #[error("`{path}` is a symbolic link to something that does not exist")]
    DanglingSymlink {
        /// The link, relative to the root.
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
    /// A directory was needed and this is something else.
    #[error("`{path}` is not a directory")]
    NotADirectory {
        /// That entry, relative to the root.
        path: String,
    },
    /// A file was needed and this is a directory.
    #[error("`{path}` is a directory")]
    IsADirectory {
        /// The path as given.
        path: String,
    },
    /// A FIFO, device or socket: never opened, read or written.
    #[error("`{path}` is {kind}, not a regular file")]
    NotRegular {
        /// The path as given.
        path: String,
        /// What it is.
        kind: FileKind,
    },
    /// A file with more than one hard link, and the root does not allow
    /// them ([`UserRoot::allow_hard_links`](super::UserRoot::allow_hard_links)):
    /// another name of it may be outside the root.
    #[error("`{path}` has {links} hard links, so it may also be a file outside your files root")]
    HardLinked {
        /// The path as given.
        path: String,
        /// Its link count.
        links: u64,
    },
    /// A file to create is already there.
    #[error("`{path}` already exists")]
    AlreadyExists {
        /// The path as given.
        path: String,
    },
    /// A file to read is over the cap.
    #[error("`{path}` is larger than {limit} bytes")]
    TooLarge {
        /// The path as given.
        path: String,
        /// The cap.
        limit: u64,
    },
    /// The root could not be created or opened.
    #[error("your files root is not available: {source}")]
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
            | Self::NotRegular { path, .. }
            | Self::HardLinked { path, .. }
            | Self::AlreadyExists { path }
            | Self::TooLarge { path, .. }
            | Self::Io { path, .. } => Some(path),
            Self::RootUnavailable { .. } => None,
        }
    }

    /// What a model can do about this refusal, as text to append to the
    /// message (starting with `,` or `;`), or `""` when there is nothing to
    /// add or the advice depends on the tool (an existing file: which
    /// argument replaces it). Plugins that show root errors to a model use
    /// it, so every plugin gives the same advice.
    ///
    /// ```
    /// use oscova_core::fs::RootPathError;
    ///
    /// let err = RootPathError::MissingParent { path: "audio".into() };
    /// assert_eq!(
    ///     format!("{err}{}", err.hint()),
    ///     "the directory `audio` does not exist; pass `create_dirs: true` to create it"
    /// );
    /// ```
    pub fn hint(&self) -> &'static str {
        match self {
            Self::Absolute { .. } => ", like `notes/todo.txt`",
            Self::Escapes { .. } => ", so it cannot be used",
            Self::DanglingSymlink { .. } => "; refusing to use it",
            Self::NoFileName { .. } => "; give a file name such as `notes.txt`",
            Self::MissingParent { .. } => "; pass `create_dirs: true` to create it",
            Self::NotRegular { .. } => "; only regular files are read or written",
            _ => "",
        }
    }

    /// An [`Io`](Self::Io) maker for `map_err`.
    #[cfg_attr(not(feature = "fs"), allow(dead_code))]
    pub(super) fn io(action: &'static str, path: &str) -> impl FnOnce(io::Error) -> Self + use<> {
        let path = path.to_owned();
        move |source| Self::Io {
            action,
            path,
            source,
        }
    }
}
