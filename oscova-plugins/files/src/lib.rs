//! The `oscova.files` plugin: the user's files, inside one root directory
//! per user that the host chooses.
//!
//! | wire name | does | approval |
//! |---|---|---|
//! | `oscova_files__files__list` | lists a directory (optionally recursive) | not required |
//! | `oscova_files__files__read` | reads a text file or a byte range of it, capped | not required |
//! | `oscova_files__files__search` | finds files by glob and/or lines by text | not required |
//! | `oscova_files__files__write` | creates, overwrites or appends to a text file | **required** |
//!
//! All tools are `NetworkScope::None`. Paths are relative to the user's
//! root: absolute paths, `..`, and symbolic links that lead out of the root
//! are refused with an error saying so (the rules of [`oscova_core::fs`]).
//!
//! # What the root promises
//!
//! - **No escape, even under a race.** Every path is walked one component
//!   at a time beneath an open handle of the root, and each file or
//!   directory is used through the handle that was checked, never reopened
//!   by path. A directory swapped for a link to somewhere else while a call
//!   runs makes that step fail or be looked at again; it is never followed
//!   out. `list` and `search` go down through directory handles and follow
//!   no link at all (links are listed as links).
//! - **Regular files only.** A FIFO, device or socket is never read or
//!   written (a write to a FIFO used to hang the call and the server); it
//!   is refused before anything opens it, and every open is non-blocking
//!   and checked on the handle. Reads are capped while reading.
//! - **Hard links are refused.** A hard link to a file outside the root is
//!   that file under a second name, and nothing can tell it apart from the
//!   root's own files, so a file with more than one link is refused (and
//!   skipped by `search`) unless the host allows it with
//!   [`FilesPlugin::allow_hard_links`], for roots nobody else can link into.
//! - **Bounded work.** Reads, writes, listings and searches have caps
//!   ([`FileLimits`]); a glob is matched in at most pattern × path steps
//!   (no backtracking blow-up), a walk goes at most 64 directories deep,
//!   and the call's cancellation token is checked between entries, inside
//!   large directories and inside large files.
//! - **Names are shown as one line.** In the text for the model, a name's
//!   control characters (a newline, ESC) and bidirectional controls are
//!   escaped (`\n`, `\u{1b}`); the details carry the exact names.
//!
//! # Tutorial
//!
//! A host decides where each user's files live by giving the plugin a root
//! resolver, then hands the configured plugin to its builder:
//!
//! ```
//! use oscova_core::prelude::*;
//! use oscova_plugin_files::FilesPlugin;
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let base = tempfile::tempdir()?;
//! let files = FilesPlugin::per_user(base.path()); // <base>/<user id>/
//! let host = PluginHost::builder()
//!     .no_linked_plugins()
//!     .plugin_instance(files)
//!     .approval_handler(|_: &oscova_core::ApprovalRequest<'_>| true) // `write` needs approval
//!     .build()?;
//! let scope = host.user_scope(UserInfo::new("alice"));
//!
//! let w = scope
//!     .invoke("oscova_files__files__write", json!({"path": "todo.txt", "content": "milk\n"}))
//!     .await;
//! assert!(!w.is_error, "{}", w.content);
//! let r = scope.invoke("oscova_files__files__read", json!({"path": "todo.txt"})).await;
//! assert_eq!(r.content, "milk\n");
//! assert!(base.path().join("alice/todo.txt").exists());
//!
//! let escape = scope.invoke("oscova_files__files__read", json!({"path": "../x"})).await;
//! assert!(escape.is_error);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! Any rule works as a resolver, for example a directory from the host's
//! own user records: `FilesPlugin::with_resolver(|user| lookup(user.id()))`.
//! A user for whom it returns `None` gets no files tools (the host records
//! a diagnostic for that scope).
//!
//! With no configuration (the plugin created from its registration, as
//! `PluginHost::builder().build()` does for every linked plugin), the base
//! directory is `$OSCOVA_FILES_ROOT`, else `./oscova-files`, with one
//! subdirectory per user; see [`user_dir_name`] for how ids become names.

#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod error;
mod glob;
mod ops;
mod search;
mod text;
mod toolset;
mod walk;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use oscova_core::fs;
use oscova_core::prelude::*;

pub use error::FilesError;
pub use ops::WriteMode;
pub use toolset::{FileLimits, FilesToolset};

/// The per-user root rules and defaults this plugin shares with
/// `oscova.speech`, from [`oscova_core::fs`].
pub use oscova_core::fs::{DEFAULT_BASE, ROOT_ENV, RootResolver, user_dir_name};

/// The `oscova.files` plugin: contributes [`FilesToolset`] to every user
/// with a files root: the plugin's own roots when it was given some, else
/// the user's files root from the host (`PluginHostBuilder::files_roots`,
/// `UserInfo::with_files_root`), else the default base (see
/// [`oscova_core::fs::root_for`]).
#[plugin(
    id = "oscova.files",
    name = "Files",
    framework = ">=0.1",
    description = "List, read, search and write files inside one root directory per user."
)]
#[derive(Clone)]
pub struct FilesPlugin {
    roots: Option<RootResolver>,
    limits: FileLimits,
    hard_links: bool,
}

impl FilesPlugin {
    /// Roots chosen by `resolver`.
    pub fn with_resolver(
        resolver: impl Fn(&UserInfo) -> Option<PathBuf> + Send + Sync + 'static,
    ) -> Self {
        Self {
            roots: Some(Arc::new(resolver)),
            limits: FileLimits::default(),
            hard_links: false,
        }
    }

    /// One subdirectory of `base` per user, named by [`user_dir_name`].
    pub fn per_user(base: impl Into<PathBuf>) -> Self {
        Self::with_resolver(fs::per_user_roots(base))
    }

    /// Uses these caps instead of the defaults.
    pub fn limits(mut self, limits: FileLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Lets the tools read and write files with more than one hard link
    /// (default: refused, since another name of such a file may be outside
    /// the root and no check can tell). Allow it only for roots nobody
    /// else can link into.
    #[must_use]
    pub fn allow_hard_links(mut self, allow: bool) -> Self {
        self.hard_links = allow;
        self
    }
}

impl Default for FilesPlugin {
    /// The user's files root from the host; for a user without one,
    /// `$OSCOVA_FILES_ROOT/<user>`, else `./oscova-files/<user>`.
    fn default() -> Self {
        Self {
            roots: None,
            limits: FileLimits::default(),
            hard_links: false,
        }
    }
}

impl fmt::Debug for FilesPlugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilesPlugin")
            .field("limits", &self.limits)
            .field("hard_links", &self.hard_links)
            .finish_non_exhaustive()
    }
}

impl AgentPlugin for FilesPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        let roots = self.roots.clone();
        let (limits, hard_links) = (self.limits.clone(), self.hard_links);
        builder.add_toolset(move |ctx: &AgentPluginContext| {
            match fs::root_for(roots.as_ref(), ctx) {
                Some(root) => {
                    Ok(FilesToolset::new(root, limits.clone()).allow_hard_links(hard_links))
                }
                None => Err(FilesError::NoRoot {
                    user: ctx.user_id().to_owned(),
                }),
            }
        });
    }
}
