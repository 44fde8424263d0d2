//! Per-user root directories, the one way a model-given path gets into
//! one, and the one way a file is read or written.
//!
//! Plugins that keep files for a user (`oscova.files`, `oscova.speech`)
//! give each user one directory, their root, and take paths from the model
//! relative to it. [`UserRoot`] resolves such a path by these rules, so a
//! path means the same thing to every plugin sharing a root, and hands
//! back an open handle ([`RootFile`], [`RootDir`]), never a path to open
//! later:
//!
//! - A path is refused, before anything is looked at, if it is absolute,
//!   has a `..` component or contains a NUL byte. `.` components are
//!   dropped; `""` and `.` name the root itself.
//! - The path is walked one component at a time beneath an open handle of
//!   the root, and every step (look, open, create) is made relative to the
//!   handle of the directory it is in, with `O_NOFOLLOW`. A symbolic link
//!   is followed only by reading it and walking its target the same way:
//!   a relative target from the link's directory, an absolute one only if
//!   it starts with the root's canonical path. A target that leads out of
//!   the root (too many `..`, any other absolute path) is refused
//!   ([`Escapes`](RootPathError::Escapes)), as is a link whose target does
//!   not exist ([`DanglingSymlink`](RootPathError::DanglingSymlink)):
//!   writing through it would create its target. So there is no moment
//!   between the check and the use: swapping a directory for a link to
//!   somewhere else while a call runs makes that step fail or be looked
//!   at again, never followed out of the root. Listing and searching walk
//!   down through [`RootDir`] handles and follow no link at all.
//! - Only regular files are read or written. A FIFO, device or socket is
//!   refused ([`NotRegular`](RootPathError::NotRegular)) by a look at the
//!   entry before anything opens it, and every file is opened with
//!   `O_NONBLOCK | O_NOCTTY` and checked again on the opened handle, so a
//!   FIFO swapped in cannot make an open hang. Reads through
//!   [`RootFile::read_capped`] stop one byte past their cap.
//! - A file with more than one hard link is refused
//!   ([`HardLinked`](RootPathError::HardLinked)) unless the root allows
//!   them ([`UserRoot::allow_hard_links`]). A hard link to a file outside
//!   the root is that file under a second name; nothing on the file says
//!   which name is the "real" one, so no check can tell it from a file of
//!   the root's own. The link count is the only sign, and it is checked on
//!   the opened handle before anything is read, truncated or written.
//! - A file to write may not exist yet: its missing parent directories are
//!   created (when asked) inside their held parents; an existing file is
//!   opened without truncation, checked, and only then emptied.
//!
//! The root itself is created when missing, on every call; its own path
//! (and any link in it) is the host's choice and is followed.
//!
//! Why this mechanism: the walk is built from `openat`, `fstatat`,
//! `mkdirat` and `readlinkat` with `O_NOFOLLOW`, which every Unix has
//! (through [`rustix`], already in the dependency graph, so no `unsafe`
//! here). `openat2` with `RESOLVE_BENEATH` would do the walk in the
//! kernel, but only on Linux 5.6 and later (and not under every sandbox),
//! it refuses absolute links into the root that this module follows, and
//! it does not say which path inside the root was reached, which messages
//! need; a second code path for it would be the one the tests exercise
//! least. `cap-std` would bring a dozen crates for the same walk. Not
//! covered: a directory the walk already holds being moved out of the
//! root by someone who can write outside it (the walk then works inside
//! that directory, which came from inside the root). On platforms without
//! `openat` (not Unix) every path is refused rather than resolved with a
//! gap.
//!
//! The handles ([`UserRoot`], [`RootFile`], [`RootDir`]) and the
//! regular-file functions need the `fs` feature (on by default, it brings
//! `rustix`); where the roots are (the functions below) is always there.
//!
//! Files the host names itself (a config file, an audio file on the
//! command line) are not in a root: [`open_regular`], [`read_regular`]
//! and [`create_regular`] apply the same regular-file and capped-read
//! rules to them. A file whose content decides what the host does (its
//! configuration, a lock file of reviewed catalogs) is read with
//! [`read_trusted`]: the same rules, and ssh's on who may have written
//! it (nobody but its owner and root, on the file and on every directory
//! on its way; see `trusted.rs`). A file that holds what only its owner
//! may read (the sessions database, the A2A pending lists, a session
//! export) is made with [`create_private_dir`] (folders 0700),
//! [`ensure_private`] and [`create_private`] (files 0600), and read or
//! looked at with [`read_private`] and [`check_private`], which refuse one
//! its group or others have any permission on ([`FileError::Exposed`];
//! see `private.rs`).
//!
//! Where the roots are is the host's choice, made per user by a
//! [`RootResolver`]. The default, shared by the first-party plugins, is one
//! subdirectory per user ([`per_user_roots`], named by [`user_dir_name`])
//! of [`default_base`]: `$OSCOVA_FILES_ROOT`, else `./oscova-files`.
//!
//! # Example
//!
//! ```
//! use std::io::{Read, Write};
//! use oscova_core::fs::{CreateMode, RootPathError, UserRoot};
//!
//! let base = std::env::temp_dir().join(format!("oscova-fs-doc-{}", std::process::id()));
//! let root = UserRoot::new(base.join("alice"));
//!
//! let file = root.create_file("notes/todo.txt", CreateMode::New, true)?; // creates `notes/`
//! file.as_file().write_all(b"milk\n")?;
//! assert_eq!(file.rel(), "notes/todo.txt");
//! assert_eq!(root.open_file("./notes/todo.txt")?.read_capped(1024)?, b"milk\n");
//!
//! assert!(matches!(root.open_file("../bob"), Err(RootPathError::ParentDir { .. })));
//! assert!(matches!(root.open_dir("/etc"), Err(RootPathError::Absolute { .. })));
//! # std::fs::remove_dir_all(&base)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(all(unix, feature = "fs"))]
mod beneath;
#[cfg(feature = "fs")]
mod dir;
mod error;
#[cfg(feature = "fs")]
mod file;
#[cfg(feature = "fs")]
mod private;
#[cfg(feature = "fs")]
mod root;
#[cfg(all(test, feature = "fs"))]
mod tests;
#[cfg(feature = "fs")]
mod trusted;

use std::path::PathBuf;
use std::sync::Arc;

use crate::context::{AgentPluginContext, UserInfo};

#[cfg(feature = "fs")]
pub use dir::{Entries, RootDir, RootEntry};
pub use error::{FileError, FileKind, RootPathError, Untrusted};
#[cfg(feature = "fs")]
pub use file::{create_regular, open_regular, read_capped, read_regular};
#[cfg(feature = "fs")]
pub use private::{
    check_private, create_private, create_private_dir, ensure_private, read_private,
};
#[cfg(feature = "fs")]
pub use root::{CreateMode, RootFile, UserRoot, WriteCheck};
#[cfg(feature = "fs")]
pub use trusted::read_trusted;

/// The environment variable naming the default base directory of the
/// per-user roots.
pub const ROOT_ENV: &str = "OSCOVA_FILES_ROOT";

/// The base directory used when [`ROOT_ENV`] is unset or empty.
pub const DEFAULT_BASE: &str = "oscova-files";

/// Picks a user's root directory, or `None` to give that user no tools
/// that need one.
///
/// ```
/// use std::path::PathBuf;
/// use std::sync::Arc;
/// use oscova_core::UserInfo;
/// use oscova_core::fs::RootResolver;
///
/// let roots: RootResolver = Arc::new(|user: &UserInfo| {
///     (user.id() != "guest").then(|| PathBuf::from("/srv/oscova").join(user.id()))
/// });
/// assert_eq!(roots(&UserInfo::new("guest")), None);
/// ```
pub type RootResolver = Arc<dyn Fn(&UserInfo) -> Option<PathBuf> + Send + Sync>;

/// The files root of `ctx`'s user for a plugin that works on files:
/// `own` roots when the plugin was given some, else the user's files root
/// from the host ([`AgentPluginContext::files_root`]), else the user's
/// directory under [`default_base`]. `None` when the chosen resolver gives
/// this user none.
///
/// ```
/// use oscova_core::{AgentPluginContext, UserInfo};
/// use std::path::Path;
///
/// let ctx = AgentPluginContext::for_user("demo", UserInfo::new("ann").with_files_root("/srv/ann"));
/// assert_eq!(oscova_core::fs::root_for(None, &ctx).as_deref(), Some(Path::new("/srv/ann")));
/// ```
pub fn root_for(own: Option<&RootResolver>, ctx: &AgentPluginContext) -> Option<PathBuf> {
    match own {
        Some(roots) => roots(ctx.user()),
        None => match ctx.files_root() {
            Some(root) => Some(root.to_path_buf()),
            None => per_user_roots(default_base())(ctx.user()),
        },
    }
}

/// The default base directory: `$OSCOVA_FILES_ROOT` ([`ROOT_ENV`]), else
/// `./oscova-files` ([`DEFAULT_BASE`]). Read at each call.
///
/// ```
/// let base = oscova_core::fs::default_base();
/// assert!(!base.as_os_str().is_empty());
/// ```
pub fn default_base() -> PathBuf {
    std::env::var_os(ROOT_ENV)
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_BASE), PathBuf::from)
}

/// A resolver giving each user the subdirectory of `base` named by
/// [`user_dir_name`], and no root to a user with an empty id.
///
/// ```
/// use std::path::Path;
/// use oscova_core::UserInfo;
/// use oscova_core::fs::per_user_roots;
///
/// let roots = per_user_roots("/srv/oscova-files");
/// assert_eq!(roots(&UserInfo::new("a@b.com")).as_deref(), Some(Path::new("/srv/oscova-files/a%40b.com")));
/// assert_eq!(roots(&UserInfo::new("")), None);
/// ```
pub fn per_user_roots(
    base: impl Into<PathBuf>,
) -> impl Fn(&UserInfo) -> Option<PathBuf> + Clone + Send + Sync + 'static {
    let base = base.into();
    move |user: &UserInfo| user_dir_name(user.id()).map(|name| base.join(name))
}

/// The directory name for a user id: ASCII letters, digits, `-` and `_`
/// are kept, so are dots except a leading one; every other byte becomes
/// `%XX`. Distinct ids give distinct names (`%` itself is escaped), and no
/// name is `.`, `..` or contains a separator. `None` for an empty id.
///
/// ```
/// use oscova_core::fs::user_dir_name;
/// assert_eq!(user_dir_name("alice").as_deref(), Some("alice"));
/// assert_eq!(user_dir_name("../bob").as_deref(), Some("%2E.%2Fbob"));
/// assert_eq!(user_dir_name("a@b.com").as_deref(), Some("a%40b.com"));
/// assert_eq!(user_dir_name(""), None);
/// ```
pub fn user_dir_name(id: &str) -> Option<String> {
    if id.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(id.len());
    for (i, byte) in id.bytes().enumerate() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' => out.push(char::from(byte)),
            b'.' if i > 0 => out.push('.'),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    Some(out)
}
