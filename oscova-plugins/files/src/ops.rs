//! `list`, `read` and `write`, as plain blocking functions over a
//! [`UserRoot`].
//!
//! Rules: every path is opened through [`UserRoot::open_dir`],
//! [`UserRoot::open_file`] or [`UserRoot::create_file`], which hand back
//! an open handle (so nothing is checked by path and used later) and
//! refuse anything but a regular file; reads never return more than the
//! cap, and a partial read says where the next one starts; writes are
//! text, capped, and `create` (the default) never replaces an existing
//! file, opened with `O_EXCL` so it cannot race another writer or follow a
//! link.

use std::io::{Read, Seek, SeekFrom, Write};

use oscova_core::CancellationToken;
use oscova_core::ToolResult;
use oscova_core::fs::{CreateMode, UserRoot};
use oscova_core::serde_json::json;
use serde::Serialize;

use crate::FileLimits;
use crate::error::FilesError;
use crate::text::{decode, escaped, looks_binary};
use crate::walk::{Flow, Kind, walk};

/// How `write` treats an existing file.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum WriteMode {
    /// Create a new file; fail if it exists (the default).
    #[default]
    Create,
    /// Replace the file's content, creating it if needed.
    Overwrite,
    /// Add to the end of the file, creating it if needed.
    Append,
}

/// One entry of a listing.
#[derive(Debug, Serialize)]
struct Listed {
    path: String,
    kind: Kind,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
}

fn shown(rel: &str) -> &str {
    if rel.is_empty() { "." } else { rel }
}

/// Lists a directory (blocking).
pub(crate) fn list(
    root: &UserRoot,
    limits: &FileLimits,
    path: &str,
    recursive: bool,
    cancel: &CancellationToken,
) -> Result<ToolResult, FilesError> {
    let dir = root.open_dir(path)?;
    let shown_dir = escaped(shown(dir.rel())).into_owned();
    let dir_rel = dir.rel().to_owned();
    let mut entries = Vec::new();
    let walked = walk(dir, recursive, cancel, |entry, _| {
        if entries.len() >= limits.max_list_entries {
            return Flow::Stop;
        }
        entries.push(Listed {
            path: entry.rel.clone(),
            kind: entry.kind,
            size: entry.size,
        });
        Flow::Continue
    })?;
    let mut content = if entries.is_empty() {
        format!("`{shown_dir}` is empty.")
    } else {
        format!("`{shown_dir}` ({} entries):", entries.len())
    };
    for Listed { path, kind, size } in &entries {
        content.push('\n');
        // A name may hold a newline: escaped, it cannot pose as another entry.
        let path = escaped(path);
        content.push_str(&match (kind, size) {
            (Kind::Dir, _) => format!("{path}/"),
            (Kind::Symlink, _) => format!("{path} (symbolic link)"),
            (_, Some(size)) => format!("{path} ({size} bytes)"),
            _ => path.into_owned(),
        });
    }
    if walked.stopped {
        content.push_str(&format!(
            "\n[stopped at {} entries; list a subdirectory to see more]",
            limits.max_list_entries
        ));
    }
    Ok(ToolResult::text(content).with_details(json!({
        "path": dir_rel,
        "entries": entries,
        "truncated": walked.stopped,
        "unreadable_dirs": walked.unreadable,
    })))
}

/// Reads a byte range of a text file (blocking).
pub(crate) fn read(
    root: &UserRoot,
    limits: &FileLimits,
    path: &str,
    offset: Option<u64>,
    length: Option<u64>,
) -> Result<ToolResult, FilesError> {
    // A regular file with one link, checked on the handle that is read.
    let file = root.open_file(path)?;
    let size = file.size();
    let offset = offset.unwrap_or(0);
    if offset > size {
        return Err(FilesError::OffsetPastEnd {
            path: path.to_owned(),
            offset,
            size,
        });
    }
    let wanted = length.unwrap_or(limits.max_read_bytes);
    let take = wanted.min(limits.max_read_bytes).min(size - offset);
    let mut bytes = Vec::new();
    let mut handle = file.as_file();
    handle
        .seek(SeekFrom::Start(offset))
        .and_then(|_| handle.take(take).read_to_end(&mut bytes))
        .map_err(FilesError::io("read", path))?;
    if looks_binary(&bytes) {
        return Err(FilesError::Binary {
            path: path.to_owned(),
            size,
        });
    }
    let end = offset + bytes.len() as u64;
    let decoded = decode(&bytes, end < size);
    let start = offset + decoded.skipped_front as u64;
    let end = end - decoded.cut_back as u64;
    let more = end < size;
    let capped = more && wanted > take;
    let mut content = decoded.text;
    let mut notes = Vec::new();
    if start > 0 || more {
        notes.push(format!("bytes {start}..{end} of {size}"));
    }
    if more {
        notes.push(format!("to continue, read again with offset {end}"));
    }
    if capped {
        notes.push(format!(
            "at most {} bytes are returned per call",
            limits.max_read_bytes
        ));
    }
    if decoded.lossy {
        notes.push("the file is not valid UTF-8; undecodable bytes are shown as U+FFFD".to_owned());
    }
    if !notes.is_empty() {
        content.push_str(&format!("\n\n[{}]", notes.join("; ")));
    }
    Ok(ToolResult::text(content).with_details(json!({
        "path": file.rel(),
        "size": size,
        "offset": start,
        "end": end,
        "next_offset": more.then_some(end),
        "truncated": more,
        "lossy": decoded.lossy,
    })))
}

/// Writes text to a file (blocking).
pub(crate) fn write(
    root: &UserRoot,
    limits: &FileLimits,
    path: &str,
    content: &str,
    mode: WriteMode,
    create_dirs: bool,
) -> Result<ToolResult, FilesError> {
    let size = content.len() as u64;
    if size > limits.max_write_bytes {
        return Err(FilesError::TooLarge {
            size,
            limit: limits.max_write_bytes,
        });
    }
    let opened = match mode {
        WriteMode::Create => CreateMode::New,
        WriteMode::Overwrite => CreateMode::Truncate,
        WriteMode::Append => CreateMode::Append,
    };
    let target = root.create_file(path, opened, create_dirs)?;
    let existed = target.existed();
    let mut file = target.as_file();
    file.write_all(content.as_bytes())
        .and_then(|()| file.flush())
        .map_err(FilesError::io("write", path))?;
    let total = file.metadata().map(|m| m.len()).unwrap_or(size);
    let verb = match (mode, existed) {
        (WriteMode::Append, true) => "appended",
        (_, true) => "replaced",
        (_, false) => "created",
    };
    Ok(ToolResult::text(format!(
        "Wrote {size} bytes to `{}` ({verb}; the file now has {total} bytes).",
        target.rel()
    ))
    .with_details(json!({
        "path": target.rel(),
        "bytes_written": size,
        "size": total,
        "mode": mode,
        "created": !existed,
    })))
}
