//! Walking a directory tree inside the root, for `list` and `search`.
//!
//! Rules: entries come in name order, depth first; symbolic links are
//! reported as links and never followed, so a walk cannot leave the root or
//! loop; a subdirectory that cannot be read is counted and skipped, while
//! the starting directory failing is an error; the walk checks the call's
//! cancellation token between entries and stops when the visitor says so.

use std::fs;
use std::path::{Path, PathBuf};

use oscova_core::CancellationToken;
use oscova_core::fs::relative_inside;
use serde::Serialize;

use crate::error::FilesError;

/// What an entry is (links are not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    File,
    Dir,
    Symlink,
    Other,
}

/// One entry of a walk.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) abs: PathBuf,
    /// Relative to the root, `/`-separated.
    pub(crate) rel: String,
    pub(crate) kind: Kind,
    /// The size, for files.
    pub(crate) size: Option<u64>,
}

/// Whether the visitor wants more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    Stop,
}

/// How a walk ended.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Walked {
    /// The visitor stopped it early.
    pub(crate) stopped: bool,
    /// Subdirectories that could not be read.
    pub(crate) unreadable: usize,
}

/// Walks `start` (an existing canonical directory inside `root`).
pub(crate) fn walk(
    root: &Path,
    start: &Path,
    recursive: bool,
    cancel: &CancellationToken,
    mut visit: impl FnMut(&Entry) -> Flow,
) -> Result<Walked, FilesError> {
    let first = read_sorted(root, start).map_err(|source| FilesError::Io {
        action: "list",
        path: relative_inside(root, start).unwrap_or_default(),
        source,
    })?;
    let mut walked = Walked::default();
    let mut stack = vec![first.into_iter()];
    while let Some(entries) = stack.last_mut() {
        let Some(entry) = entries.next() else {
            stack.pop();
            continue;
        };
        if cancel.is_cancelled() {
            return Err(FilesError::Cancelled);
        }
        if visit(&entry) == Flow::Stop {
            walked.stopped = true;
            break;
        }
        if recursive && entry.kind == Kind::Dir {
            match read_sorted(root, &entry.abs) {
                Ok(children) => stack.push(children.into_iter()),
                Err(_) => walked.unreadable += 1,
            }
        }
    }
    Ok(walked)
}

fn read_sorted(root: &Path, dir: &Path) -> std::io::Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for item in fs::read_dir(dir)? {
        let item = item?;
        let abs = item.path();
        let Some(rel) = relative_inside(root, &abs) else {
            continue;
        };
        let meta = fs::symlink_metadata(&abs)?;
        let file_type = meta.file_type();
        let kind = if file_type.is_symlink() {
            Kind::Symlink
        } else if file_type.is_dir() {
            Kind::Dir
        } else if file_type.is_file() {
            Kind::File
        } else {
            Kind::Other
        };
        let size = (kind == Kind::File).then_some(meta.len());
        entries.push(Entry {
            abs,
            rel,
            kind,
            size,
        });
    }
    entries.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(entries)
}
