//! A result's blocks after its text, as `tools call` shows them.
//!
//! Rules: text blocks and text resources are printed; bytes (images,
//! audio, blob resources) are written to files in the output directory,
//! named `{tool}-{n}.{ext}` after the tool's last wire-name segment, the
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
pub(super) fn print_blocks(result: &ToolResult, tool: &str, dir: &Path) -> Result<(), CliError> {
    let stem = tool.rsplit("__").next().unwrap_or(tool);
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
                let path = write_new(dir, stem, i + 1, extension(mime), bytes)?;
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
    fn extensions_follow_the_mime_type() {
        assert_eq!(extension("image/png"), "png");
        assert_eq!(extension("audio/wav; codecs=1"), "wav");
        assert_eq!(extension("application/x-unknown"), "bin");
    }
}
