//! The `files` toolset: the tool methods, each a thin shell over `ops` or
//! `search`.
//!
//! Rules: tools that may walk a large tree (`list`, `search`) run on the
//! blocking pool and watch the call's cancellation token; `read` and
//! `write` are bounded by their caps and run inline. `write` needs
//! approval (`approval = Required`); nothing here touches the network.

use std::path::PathBuf;

use oscova_core::fs::UserRoot;
use oscova_core::prelude::*;

use crate::error::FilesError;
use crate::ops::{self, WriteMode};
use crate::search::{self, Query};

/// Size and count caps of the files tools.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileLimits {
    /// The most bytes one `read` returns (default 256 KiB).
    pub max_read_bytes: u64,
    /// The most bytes one `write` accepts (default 1 MiB).
    pub max_write_bytes: u64,
    /// The most entries one `list` returns (default 500).
    pub max_list_entries: usize,
    /// The most results one `search` returns (default 100).
    pub max_search_results: usize,
    /// Files larger than this are skipped by text search (default 1 MiB).
    pub max_search_file_bytes: u64,
    /// A search stops after this many files (default 10,000).
    pub max_search_files: usize,
}

impl Default for FileLimits {
    fn default() -> Self {
        Self {
            max_read_bytes: 256 * 1024,
            max_write_bytes: 1024 * 1024,
            max_list_entries: 500,
            max_search_results: 100,
            max_search_file_bytes: 1024 * 1024,
            max_search_files: 10_000,
        }
    }
}

/// File tools over one user's root directory.
#[derive(Debug, Clone)]
pub struct FilesToolset {
    root: UserRoot,
    limits: FileLimits,
}

impl FilesToolset {
    /// A toolset confined to `root` (created on first use if missing).
    pub fn new(root: impl Into<PathBuf>, limits: FileLimits) -> Self {
        Self {
            root: UserRoot::new(root),
            limits,
        }
    }

    /// Whether files with more than one hard link may be read and written
    /// (default: refused, see [`UserRoot::allow_hard_links`]).
    #[must_use]
    pub fn allow_hard_links(mut self, allow: bool) -> Self {
        self.root = self.root.allow_hard_links(allow);
        self
    }
}

async fn blocking<T: Send + 'static>(
    action: &'static str,
    f: impl FnOnce() -> Result<T, FilesError> + Send + 'static,
) -> Result<T, FilesError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| FilesError::Io {
            action,
            path: String::new(),
            source: std::io::Error::other(e.to_string()),
        })?
}

#[toolset]
impl FilesToolset {
    /// Lists a directory of the user's files. Paths are relative to the
    /// files root; symbolic links are shown, not followed.
    #[tool(approval = NotRequired)]
    pub async fn list(
        &self,
        /// The directory, relative to the files root (default: the root).
        path: Option<String>,
        /// Also list everything below it (default false).
        recursive: Option<bool>,
        invocation: &ToolInvocation,
    ) -> Result<ToolResult, FilesError> {
        let (root, limits) = (self.root.clone(), self.limits.clone());
        let cancel = invocation.cancellation_token().clone();
        let path = path.unwrap_or_default();
        blocking("list", move || {
            ops::list(&root, &limits, &path, recursive.unwrap_or(false), &cancel)
        })
        .await
    }

    /// Reads a text file, or a byte range of it. Long files come back in
    /// pieces; the result says which offset to read next.
    #[tool(approval = NotRequired)]
    pub fn read(
        &self,
        /// The file, relative to the files root.
        path: String,
        /// The first byte to read (default 0).
        offset: Option<u64>,
        /// How many bytes to read (default and maximum: the read cap).
        length: Option<u64>,
    ) -> Result<ToolResult, FilesError> {
        ops::read(&self.root, &self.limits, &path, offset, length)
    }

    /// Finds files by glob (`*.md` matches names at any depth,
    /// `docs/**/*.md` matches paths) and/or lines containing text.
    #[tool(approval = NotRequired)]
    pub async fn search(
        &self,
        /// A glob for the files to consider, such as `**/*.rs` or `*.txt`.
        pattern: Option<String>,
        /// Text to look for in each line.
        text: Option<String>,
        /// The directory to search, relative to the files root (default: the root).
        path: Option<String>,
        /// Match `text` case-sensitively (default false).
        case_sensitive: Option<bool>,
        /// At most this many results (default and maximum: the search cap).
        max_results: Option<u32>,
        invocation: &ToolInvocation,
    ) -> Result<ToolResult, FilesError> {
        let (root, limits) = (self.root.clone(), self.limits.clone());
        let cancel = invocation.cancellation_token().clone();
        let query = Query {
            path: path.unwrap_or_default(),
            pattern,
            text,
            case_sensitive: case_sensitive.unwrap_or(false),
            max_results: max_results.map_or(limits.max_search_results, |m| {
                usize::try_from(m).unwrap_or(usize::MAX)
            }),
        };
        blocking("search", move || {
            search::run(&root, &limits, &query, &cancel)
        })
        .await
    }

    /// Writes text to a file inside the files root. By default it only
    /// creates new files; pass mode `overwrite` or `append` to change an
    /// existing one.
    #[tool(approval = Required)]
    pub fn write(
        &self,
        /// The file, relative to the files root.
        path: String,
        /// The text to write.
        content: String,
        /// `create` (default: fail if the file exists), `overwrite` or `append`.
        mode: Option<WriteMode>,
        /// Create missing parent directories (default false).
        create_dirs: Option<bool>,
    ) -> Result<ToolResult, FilesError> {
        ops::write(
            &self.root,
            &self.limits,
            &path,
            &content,
            mode.unwrap_or_default(),
            create_dirs.unwrap_or(false),
        )
    }
}
