//! Walking a directory tree inside the root, for `list` and `search`.
//!
//! Rules: the walk goes down through directory handles
//! ([`RootDir::open_dir`]), never through paths, so a directory swapped for
//! a link while it runs is not followed out of the root; entries come in
//! name order, depth first; symbolic links are reported as links and never
//! followed, so a walk cannot leave the root or loop; it goes at most
//! [`MAX_DEPTH`] directories down (each level holds one open handle); a
//! subdirectory that cannot be read is counted and skipped, while the
//! starting directory failing is an error. The call's cancellation token
//! is checked between entries and, while a directory is read, every
//! [`CHECK_EVERY`] entries, so a huge directory cannot hold a cancelled
//! call; the visitor can stop the walk.

use std::ffi::OsString;

use oscova_core::CancellationToken;
use oscova_core::fs::{FileKind, RootDir};
use serde::Serialize;

use crate::error::FilesError;

/// How deep a walk goes below its start.
pub(crate) const MAX_DEPTH: usize = 64;

/// How many entries are read between two looks at the cancellation token.
pub(crate) const CHECK_EVERY: usize = 256;

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
    /// Its name in its directory.
    pub(crate) name: OsString,
    /// Relative to the root, `/`-separated.
    pub(crate) rel: String,
    /// Relative to the walk's start, `/`-separated.
    pub(crate) below: String,
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
    /// Subdirectories that could not be read (or were too deep).
    pub(crate) unreadable: usize,
}

/// One directory being walked: its handle and what is left of its entries.
struct Level {
    dir: RootDir,
    entries: std::vec::IntoIter<Entry>,
}

/// Walks `start`; `visit` gets each entry and the directory holding it.
pub(crate) fn walk(
    start: RootDir,
    recursive: bool,
    cancel: &CancellationToken,
    mut visit: impl FnMut(&Entry, &RootDir) -> Flow,
) -> Result<Walked, FilesError> {
    let first = read_sorted(&start, "", cancel)?;
    let mut walked = Walked::default();
    let mut stack = vec![Level {
        dir: start,
        entries: first.into_iter(),
    }];
    loop {
        let depth = stack.len();
        let Some(level) = stack.last_mut() else {
            break;
        };
        let Some(entry) = level.entries.next() else {
            stack.pop();
            continue;
        };
        if cancel.is_cancelled() {
            return Err(FilesError::Cancelled);
        }
        if visit(&entry, &level.dir) == Flow::Stop {
            walked.stopped = true;
            break;
        }
        if !recursive || entry.kind != Kind::Dir {
            continue;
        }
        if depth > MAX_DEPTH {
            walked.unreadable += 1;
            continue;
        }
        let child = level
            .dir
            .open_dir(&entry.name)
            .map_err(FilesError::from)
            .and_then(|dir| read_sorted(&dir, &entry.below, cancel).map(|e| (dir, e)));
        match child {
            Ok((dir, entries)) => stack.push(Level {
                dir,
                entries: entries.into_iter(),
            }),
            Err(FilesError::Cancelled) => return Err(FilesError::Cancelled),
            Err(_) => walked.unreadable += 1,
        }
    }
    Ok(walked)
}

/// The entries of `dir` in name order; `below` is `dir` relative to the
/// walk's start.
fn read_sorted(
    dir: &RootDir,
    below: &str,
    cancel: &CancellationToken,
) -> Result<Vec<Entry>, FilesError> {
    let mut entries = Vec::new();
    for (i, item) in dir.entries()?.enumerate() {
        if i % CHECK_EVERY == 0 && cancel.is_cancelled() {
            return Err(FilesError::Cancelled);
        }
        let item = item?;
        let kind = match item.kind() {
            FileKind::File => Kind::File,
            FileKind::Directory => Kind::Dir,
            FileKind::Symlink => Kind::Symlink,
            _ => Kind::Other,
        };
        let name = item.name().to_string_lossy();
        let below = if below.is_empty() {
            name.into_owned()
        } else {
            format!("{below}/{name}")
        };
        entries.push(Entry {
            name: item.name().to_owned(),
            rel: item.rel().to_owned(),
            below,
            kind,
            size: (kind == Kind::File).then_some(item.size()),
        });
    }
    entries.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(entries)
}
