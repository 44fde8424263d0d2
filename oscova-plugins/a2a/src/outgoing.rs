//! What a sent message is made of beyond its text: its id and the files
//! attached from the user's files root.
//!
//! Rules: files are read only beneath the user's root (`UserRoot`: no
//! `..`, no absolute path, no link out), each capped at [`MAX_FILE_BYTES`]
//! while it is read, and sent as A2A 1.0 `raw` parts (base64, with the
//! file name and a media type from its extension). Message ids are the
//! protocol model's (`oscova_a2a::model::new_id`: 128 random bits, written
//! as a version-4 UUID).

use std::path::Path;

use base64::Engine as _;
use oscova_a2a::model::Part;
use oscova_core::fs::UserRoot;

use crate::ClientError;

/// The most bytes of one attached file.
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// The attachments: each file of the user's root as a `raw` part.
pub(crate) fn attachments(root: Option<&Path>, files: &[String]) -> Result<Vec<Part>, ClientError> {
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let Some(root) = root else {
        return Err(ClientError::File {
            path: files.join(", "),
            reason: "this host gives the user no files root".to_owned(),
        });
    };
    let root = UserRoot::new(root);
    files
        .iter()
        .map(|path| {
            let bytes = root
                .open_file(path)
                .and_then(|f| f.read_capped(MAX_FILE_BYTES))
                .map_err(|e| ClientError::File {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
            let filename = path.rsplit('/').next().unwrap_or(path).to_owned();
            let raw = base64::engine::general_purpose::STANDARD.encode(&bytes);
            let media = media_type(&filename);
            Ok(Part::file(raw, filename, media))
        })
        .collect()
}

/// `n` random bytes as hex (a push webhook's id or token).
pub(crate) fn random_hex(n: usize) -> Option<String> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A MIME type from a file name's extension (what agents look at first).
fn media_type(name: &str) -> &'static str {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("txt" | "log") => "text/plain",
        Some("md") => "text/markdown",
        Some("csv") => "text/csv",
        Some("json") => "application/json",
        Some("html" | "htm") => "text/html",
        Some("pdf") => "application/pdf",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("wav") => "audio/wav",
        Some("mp3") => "audio/mpeg",
        _ => "application/octet-stream",
    }
}
