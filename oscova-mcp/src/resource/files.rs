//! The user's files root as `file:///` resources.
//!
//! Rules: the root is shown as `/`: `file:///notes/todo.txt` is
//! `notes/todo.txt` under the user's root, and no real path is ever
//! shown. A URI is percent-decoded and then goes through `oscova-core`'s
//! files boundary (`UserRoot`) exactly as a model-given path does: `..`,
//! a NUL byte, a link that leads out of the root, a hard-linked file, a
//! FIFO, device or socket are refused (invalid params, with the
//! boundary's words); a missing file is an unknown resource; reads stop
//! one byte past [`FilesResources::max_read_bytes`] and are refused
//! whole, never cut. A URI with a host (`file://host/x`), a query or a
//! fragment is refused as written. Listing walks down through held
//! directory handles and follows no link at all, lists regular files
//! only, and stops at [`FilesResources::max_list`] files. A file is read
//! as text when it is UTF-8 without NUL bytes, else as a base64 blob.
//! The root is the user's files root (`UserInfo::files_root`, what the
//! host gives each scope), else the user's directory under
//! `oscova_core::fs::default_base`, as the `oscova.files` plugin finds it,
//! so both see the same files. File-system work runs on blocking
//! threads.

use std::path::PathBuf;
use std::time::UNIX_EPOCH;

use oscova_core::UserScope;
use oscova_core::fs::{self, FileKind, RootPathError, UserRoot};
use oscova_core::tool::encode_base64;
use rmcp::model::{Resource, ResourceContents, ResourceTemplate};

use super::ResourceSource;
use crate::offer::{BoxFuture, SourceError};
use crate::prompt::MAX_COMPLETIONS;

/// The URI template of a file in the root.
pub const FILES_TEMPLATE: &str = "file:///{+path}";
/// The default cap on one read: 8 MiB.
pub const DEFAULT_MAX_READ_BYTES: u64 = 8 * 1024 * 1024;
/// The default bound on files one `resources/list` gives.
pub const DEFAULT_MAX_LIST: usize = 1000;
/// How deep a listing goes below the root.
const MAX_DEPTH: usize = 16;
const SCHEME: &str = "file:///";

/// The user's files root as resources: listed, read, templated,
/// completed and subscribable.
///
/// ```
/// use oscova_mcp::McpServer;
/// use oscova_mcp::resource::FilesResources;
/// # fn demo(scope: oscova_core::UserScope) {
/// let server = McpServer::new(scope).resources(FilesResources::new().max_read_bytes(1 << 20));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct FilesResources {
    max_read_bytes: u64,
    max_list: usize,
}

impl Default for FilesResources {
    fn default() -> Self {
        Self::new()
    }
}

impl FilesResources {
    /// With the default caps ([`DEFAULT_MAX_READ_BYTES`], [`DEFAULT_MAX_LIST`]).
    pub fn new() -> Self {
        Self {
            max_read_bytes: DEFAULT_MAX_READ_BYTES,
            max_list: DEFAULT_MAX_LIST,
        }
    }

    /// Sets the largest file a read returns, in bytes; a larger one is
    /// refused.
    pub fn max_read_bytes(mut self, max: u64) -> Self {
        self.max_read_bytes = max;
        self
    }

    /// Sets how many files a listing gives at most.
    pub fn max_list(mut self, max: usize) -> Self {
        self.max_list = max;
        self
    }
}

/// The root of `scope`'s user, as the files plugin finds it.
fn root_of(scope: &UserScope) -> Result<UserRoot, SourceError> {
    let user = scope.user();
    let path: Option<PathBuf> = match user.files_root() {
        Some(root) => Some(root.to_path_buf()),
        None => fs::per_user_roots(fs::default_base())(user),
    };
    path.map(UserRoot::new)
        .ok_or_else(|| SourceError::Failed("this user has no files root".to_owned()))
}

/// The URI of `rel`, percent-encoded but for `/`.
pub(crate) fn uri_of(rel: &str) -> String {
    let mut out = String::from(SCHEME);
    for byte in rel.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The path under the root that `uri` names.
pub(crate) fn rel_of(uri: &str) -> Result<String, SourceError> {
    let refused = |reason: &str| SourceError::Refused {
        uri: uri.to_owned(),
        reason: reason.to_owned(),
    };
    let Some(rest) = uri.strip_prefix(SCHEME) else {
        return Err(SourceError::UnknownResource {
            uri: uri.to_owned(),
        });
    };
    if rest.contains(['?', '#']) {
        return Err(refused("a file URI here has no query or fragment"));
    }
    let mut bytes = Vec::with_capacity(rest.len());
    let mut raw = rest.bytes();
    while let Some(byte) = raw.next() {
        if byte != b'%' {
            bytes.push(byte);
            continue;
        }
        let hex = [raw.next(), raw.next()];
        let decoded = match hex {
            [Some(h), Some(l)] => std::str::from_utf8(&[h, l])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok()),
            _ => None,
        };
        bytes.push(decoded.ok_or_else(|| refused("a `%` not followed by two hex digits"))?);
    }
    String::from_utf8(bytes).map_err(|_| refused("the path is not UTF-8"))
}

/// A boundary refusal in the words the client gets.
fn refusal(uri: &str, error: &RootPathError) -> SourceError {
    match error {
        RootPathError::NotFound { .. } => SourceError::UnknownResource {
            uri: uri.to_owned(),
        },
        RootPathError::RootUnavailable { .. } | RootPathError::Io { .. } => {
            SourceError::Failed(error.to_string())
        }
        other => SourceError::Refused {
            uri: uri.to_owned(),
            reason: format!("{other}{}", other.hint()),
        },
    }
}

/// A MIME type from a file name's extension, for the common kinds.
fn mime_of(rel: &str) -> Option<&'static str> {
    let ext = rel.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "txt" | "log" | "rs" | "py" | "toml" | "ini" | "cfg" => "text/plain",
        "md" | "markdown" => "text/markdown",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "xml" => "application/xml",
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "wav" => "audio/wav",
        "mp3" => "audio/mpeg",
        "ogg" => "audio/ogg",
        _ => return None,
    })
}

/// Runs file-system work off the runtime's workers.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, SourceError> + Send + 'static,
) -> Result<T, SourceError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| SourceError::Failed(format!("the file work stopped: {e}")))?
}

fn list(root: &UserRoot, max: usize) -> Result<Vec<Resource>, SourceError> {
    let mut out = Vec::new();
    let top = root.open_dir("").map_err(|e| refusal(SCHEME, &e))?;
    let mut stack = vec![(top, 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let entries = dir.entries().map_err(|e| refusal(SCHEME, &e))?;
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by(|a, b| a.rel().cmp(b.rel()));
        for entry in entries {
            match entry.kind() {
                FileKind::File => {
                    if out.len() == max {
                        return Ok(out);
                    }
                    let mut resource =
                        Resource::new(uri_of(entry.rel()), entry.rel()).with_size(entry.size());
                    if let Some(mime) = mime_of(entry.rel()) {
                        resource = resource.with_mime_type(mime);
                    }
                    out.push(resource);
                }
                FileKind::Directory if depth < MAX_DEPTH => {
                    if let Ok(child) = dir.open_dir(entry.name()) {
                        stack.push((child, depth + 1));
                    }
                }
                _ => {}
            }
        }
    }
    Ok(out)
}

fn read(root: &UserRoot, uri: &str, cap: u64) -> Result<Vec<ResourceContents>, SourceError> {
    let rel = rel_of(uri)?;
    let file = root.open_file(&rel).map_err(|e| refusal(uri, &e))?;
    let bytes = file.read_capped(cap).map_err(|e| refusal(uri, &e))?;
    let mime = mime_of(file.rel());
    let contents = match String::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => {
            ResourceContents::text(text, uri).with_mime_type(mime.unwrap_or("text/plain"))
        }
        Ok(text) => ResourceContents::blob(encode_base64(text.as_bytes()), uri)
            .with_mime_type(mime.unwrap_or("application/octet-stream")),
        Err(e) => ResourceContents::blob(encode_base64(e.as_bytes()), uri)
            .with_mime_type(mime.unwrap_or("application/octet-stream")),
    };
    Ok(vec![contents])
}

fn complete(root: &UserRoot, value: &str) -> Result<Vec<String>, SourceError> {
    let (dir, prefix) = value.rsplit_once('/').unwrap_or(("", value));
    let Ok(listed) = root.open_dir(dir) else {
        return Ok(Vec::new());
    };
    let entries = listed.entries().map_err(|e| refusal(SCHEME, &e))?;
    let mut out: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.name().to_string_lossy().starts_with(prefix))
        .filter_map(|e| match e.kind() {
            FileKind::File => Some(e.rel().to_owned()),
            FileKind::Directory => Some(format!("{}/", e.rel())),
            _ => None,
        })
        .collect();
    out.sort();
    out.truncate(MAX_COMPLETIONS);
    Ok(out)
}

fn version(root: &UserRoot, uri: &str) -> Option<String> {
    let file = root.open_file(&rel_of(uri).ok()?).ok()?;
    let modified = file.as_file().metadata().ok()?.modified().ok()?;
    let nanos = modified.duration_since(UNIX_EPOCH).ok()?.as_nanos();
    Some(format!("{}:{nanos}", file.size()))
}

impl ResourceSource for FilesResources {
    fn list<'a>(
        &'a self,
        scope: &'a UserScope,
    ) -> BoxFuture<'a, Result<Vec<Resource>, SourceError>> {
        let max = self.max_list;
        Box::pin(async move {
            let root = root_of(scope)?;
            blocking(move || list(&root, max)).await
        })
    }

    fn templates<'a>(
        &'a self,
        _scope: &'a UserScope,
    ) -> BoxFuture<'a, Result<Vec<ResourceTemplate>, SourceError>> {
        let template = ResourceTemplate::new(FILES_TEMPLATE, "files")
            .with_title("Your files")
            .with_description("A file in your files root, by its path under the root");
        Box::pin(std::future::ready(Ok(vec![template])))
    }

    fn read<'a>(
        &'a self,
        scope: &'a UserScope,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<Vec<ResourceContents>, SourceError>> {
        let cap = self.max_read_bytes;
        let uri = uri.to_owned();
        Box::pin(async move {
            let root = root_of(scope)?;
            blocking(move || read(&root, &uri, cap)).await
        })
    }

    fn complete<'a>(
        &'a self,
        scope: &'a UserScope,
        template: &'a str,
        argument: &'a str,
        value: &'a str,
    ) -> BoxFuture<'a, Result<Vec<String>, SourceError>> {
        let value = value.to_owned();
        let ours = template == FILES_TEMPLATE && argument == "path";
        Box::pin(async move {
            if !ours {
                return Ok(Vec::new());
            }
            let root = root_of(scope)?;
            blocking(move || complete(&root, &value)).await
        })
    }

    fn subscribable(&self) -> bool {
        true
    }

    fn version<'a>(&'a self, scope: &'a UserScope, uri: &'a str) -> BoxFuture<'a, Option<String>> {
        let uri = uri.to_owned();
        Box::pin(async move {
            let root = root_of(scope).ok()?;
            tokio::task::spawn_blocking(move || version(&root, &uri))
                .await
                .ok()
                .flatten()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_and_paths_round_trip_with_percent_encoding() {
        assert_eq!(uri_of("notes/a b%.txt"), "file:///notes/a%20b%25.txt");
        assert_eq!(
            rel_of("file:///notes/a%20b%25.txt").as_deref(),
            Ok("notes/a b%.txt")
        );
        assert!(matches!(
            rel_of("file:///a%2"),
            Err(SourceError::Refused { .. })
        ));
        assert!(matches!(
            rel_of("file:///a?x=1"),
            Err(SourceError::Refused { .. })
        ));
        assert!(matches!(
            rel_of("file://host/a"),
            Err(SourceError::UnknownResource { .. })
        ));
        // Encoded `..` decodes to `..`, which the boundary then refuses.
        assert_eq!(rel_of("file:///%2E%2E/x").as_deref(), Ok("../x"));
    }
}
