//! A result's blocks after its text, as `tools call` shows them.
//!
//! Rules: text blocks and text resources are printed; bytes (images,
//! audio, blob resources) are written to files in the output directory
//! (`--out-dir`, else a folder made for this call in the system's
//! temporary directory, readable by this user only, and never the working
//! directory, which may be anywhere), named `{tool}-{n}.{ext}` after the tool's last wire-name segment, the
//! block's position and its MIME type, never over an existing file (a
//! taken name gets a further number); each such block prints one summary
//! line: its kind, MIME type, size and the file's path.

use std::io::Write;
use std::path::{Path, PathBuf};

use oscova_core::ToolResult;
use oscova_core::tool::{ContentBlock, EmbeddedResource};

use crate::error::CliError;
use crate::output::print_text;

/// Prints or writes every block of `result` after its text.
pub(super) fn print_blocks(
    result: &ToolResult,
    tool: &str,
    dir: Option<&Path>,
) -> Result<(), CliError> {
    let stem = tool.rsplit("__").next().unwrap_or(tool);
    // Made on the first block with bytes, so text results leave nothing.
    let mut made: Option<PathBuf> = None;
    for (i, block) in result.blocks.iter().enumerate() {
        match (block, block.bytes()) {
            (ContentBlock::Text { text }, _) => print_text(text)?,
            (ContentBlock::Resource(EmbeddedResource { uri, .. }), None) => {
                let mime = block.mime_type().unwrap_or("text");
                let text = block.as_text().unwrap_or_default();
                print_text(&format!("resource {uri} ({mime}):\n{text}"))?;
            }
            (_, Some(bytes)) => {
                let mime = block.mime_type().unwrap_or("application/octet-stream");
                let dir = match (dir, &made) {
                    (Some(dir), _) => dir.to_path_buf(),
                    (None, Some(made)) => made.clone(),
                    (None, None) => made.insert(temp_folder(stem)?).clone(),
                };
                let path = write_new(&dir, stem, i + 1, extension(mime), bytes)?;
                let what = match block {
                    ContentBlock::Resource(r) => format!("resource {}", r.uri),
                    other => other.kind().to_owned(),
                };
                print_text(&format!(
                    "{what} ({mime}, {} bytes) written to {}",
                    bytes.len(),
                    path.display()
                ))?;
            }
            (other, None) => print_text(&format!("[{} content]", other.kind()))?,
        }
    }
    Ok(())
}

/// A new folder for one call's files in the system's temporary directory,
/// `{program}-{tool}-{n}`, made by this call (never one that existed) and,
/// on Unix, readable by this user only.
fn temp_folder(stem: &str) -> Result<PathBuf, CliError> {
    let base = std::env::temp_dir();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let mut last = None;
    for attempt in 0..100u32 {
        let n = format!("{}{:08x}", std::process::id(), seed.wrapping_add(attempt));
        let path = base.join(format!("{}-{stem}-{n}", crate::output::program()));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        match builder.create(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                return Err(CliError::File {
                    path,
                    reason: format!("the folder for the result's files could not be made: {e}"),
                });
            }
        }
    }
    Err(CliError::File {
        path: base,
        reason: format!(
            "no new folder for the result's files could be made: {}",
            last.map(|e| e.to_string()).unwrap_or_default()
        ),
    })
}

/// The file extension for a MIME type.
fn extension(mime: &str) -> &'static str {
    let essence = mime.split(';').next().unwrap_or(mime).trim();
    match essence.to_ascii_lowercase().as_str() {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" | "audio/wave" | "audio/vnd.wave" => "wav",
        "audio/mpeg" | "audio/mp3" => "mp3",
        "audio/ogg" => "ogg",
        "audio/flac" => "flac",
        "application/pdf" => "pdf",
        "application/json" => "json",
        "text/plain" => "txt",
        _ => "bin",
    }
}

/// Writes `bytes` to a file that did not exist before.
fn write_new(
    dir: &Path,
    stem: &str,
    n: usize,
    ext: &str,
    bytes: &[u8],
) -> Result<PathBuf, CliError> {
    let refuse = |path: &Path, e: std::io::Error| CliError::File {
        path: path.to_path_buf(),
        reason: format!("the block's bytes could not be written: {e}"),
    };
    for attempt in 0..1000 {
        let name = match attempt {
            0 => format!("{stem}-{n}.{ext}"),
            k => format!("{stem}-{n}-{k}.{ext}"),
        };
        let path = dir.join(name);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                file.write_all(bytes).map_err(|e| refuse(&path, e))?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(refuse(&path, e)),
        }
    }
    Err(CliError::File {
        path: dir.to_path_buf(),
        reason: format!("every file name for {stem}-{n}.{ext} is taken"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_call_gets_a_new_private_folder() {
        let a = temp_folder("show").unwrap();
        let b = temp_folder("show").unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with(std::env::temp_dir()) && a.is_dir());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&a).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        std::fs::remove_dir(a).unwrap();
        std::fs::remove_dir(b).unwrap();
    }

    #[test]
    fn extensions_follow_the_mime_type() {
        assert_eq!(extension("image/png"), "png");
        assert_eq!(extension("audio/wav; codecs=1"), "wav");
        assert_eq!(extension("application/x-unknown"), "bin");
    }
}
