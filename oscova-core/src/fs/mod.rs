//! Per-user root directories, and the one way a model-given path gets into
//! one.
//!
//! Plugins that keep files for a user (`oscova.files`, `oscova.speech`)
//! give each user one directory, their root, and take paths from the model
//! relative to it. [`UserRoot`] resolves such a path by these rules, so a
//! path means the same thing to every plugin sharing a root:
//!
//! - A path is refused, before anything inside the root is looked at, if
//!   it is absolute, has a `..` component or contains a NUL byte. `.` components
//!   are dropped; `""` and `.` name the root itself.
//! - What remains is joined to the canonical root and canonicalised, so
//!   symbolic links are resolved, and the result must still be inside the
//!   canonical root, compared whole component by whole component
//!   (`/srv/alice2` is not inside `/srv/alice`).
//! - A file to be written may not exist yet: then its parent is the path
//!   checked this way, each directory on the way one level at a time, and a
//!   missing directory is created (when asked) inside a checked parent. An
//!   existing target that is a symbolic link must resolve inside the root
//!   too, and a directory is refused.
//! - A dangling symbolic link is refused, since writing through it would
//!   create its target wherever it points.
//!
//! The root itself is created when missing, on every call.
//!
//! Not covered: a process on the host that swaps a directory for a symbolic
//! link between the check and the open (a time-of-check to time-of-use
//! race). The root is meant to be a directory only Oscova's plugins write
//! to.
//!
//! Where the roots are is the host's choice, made per user by a
//! [`RootResolver`]. The default, shared by the first-party plugins, is one
//! subdirectory per user ([`per_user_roots`], named by [`user_dir_name`])
//! of [`default_base`]: `$OSCOVA_FILES_ROOT`, else `./oscova-files`.
//!
//! # Example
//!
//! ```
//! use oscova_core::fs::{RootPathError, UserRoot};
//!
//! let base = std::env::temp_dir().join(format!("oscova-fs-doc-{}", std::process::id()));
//! let root = UserRoot::new(base.join("alice"));
//!
//! let target = root.resolve_for_write("notes/todo.txt", true)?; // creates `notes/`
//! std::fs::write(&target.abs, "milk\n")?;
//! assert_eq!(target.rel, "notes/todo.txt");
//! assert_eq!(root.resolve_existing("./notes/todo.txt")?.abs, target.abs);
//!
//! assert!(matches!(root.resolve_existing("../bob"), Err(RootPathError::ParentDir { .. })));
//! assert!(matches!(root.resolve_existing("/etc"), Err(RootPathError::Absolute { .. })));
//! # std::fs::remove_dir_all(&base)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod root;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::Arc;

use crate::context::{AgentPluginContext, UserInfo};

pub use error::RootPathError;
pub use root::{ResolvedPath, UserRoot, relative_inside};

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
