//! The cache of converted (quantized) models.
//!
//! Rules: a CTranslate2 model converted to a quantized whisper.cpp file is
//! kept at `<whisper cache>/converted/<key>-<quantization>.bin`, so a
//! second start loads it without converting. The key is the SHA-256 of
//! the source: the install script's `SOURCE` stamp (which pins
//! `model.bin`'s own SHA-256) when the folder has one, else `model.bin`'s
//! bytes, together with `vocabulary.txt` and [`REVISION`] (bumped when the
//! converter's output changes), so a changed model or converter never
//! meets an old file. A file is written beside its final name and renamed
//! into place, so a half-written one is never read; a cached file that is
//! not a whisper.cpp model is ignored and rewritten. Failing to write the
//! cache is not an error: the model loads from memory all the same.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::quant::Quant;

/// The converter's output revision, part of every key.
const REVISION: &str = "oscova-whisper-convert-1";

/// Where the converted form of the model in `dir` is cached, under the
/// whisper cache `root`. Reads `SOURCE` (or hashes `model_bin` without
/// one).
pub(crate) fn path(
    root: &Path,
    dir: &Path,
    model_bin: Option<&[u8]>,
    vocabulary: &[u8],
    quant: Quant,
) -> Option<PathBuf> {
    let mut hash = Sha256::new();
    hash.update(REVISION.as_bytes());
    match std::fs::read_to_string(dir.join("SOURCE")) {
        Ok(stamp) if stamp.lines().any(|l| l.starts_with("model.bin sha256 ")) => {
            hash.update(b"stamp\0");
            hash.update(stamp.as_bytes());
        }
        _ => {
            hash.update(b"bytes\0");
            hash.update(model_bin?);
        }
    }
    hash.update(b"\0vocabulary\0");
    hash.update(vocabulary);
    let digest = hash.finalize();
    let key: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    Some(
        root.join("converted")
            .join(format!("{key}-{}.bin", quant.name())),
    )
}

/// Writes `bytes` to `path` atomically (a temporary file beside it, then a
/// rename); best effort.
pub(crate) fn store(path: &Path, bytes: &[u8]) {
    let Some(parent) = path.parent() else {
        return;
    };
    if std::fs::create_dir_all(parent).is_err() {
        return;
    }
    let Ok(mut file) = tempfile::NamedTempFile::new_in(parent) else {
        return;
    };
    // A failed write only costs the next start a conversion; the
    // temporary file is removed when `file` drops.
    if std::io::Write::write_all(&mut file, bytes).is_ok() && file.as_file().sync_all().is_ok() {
        let _ = file.persist(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_the_source_the_vocabulary_and_the_quantization() {
        let root = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let key = |bin: &[u8], vocab: &[u8], quant| {
            path(root.path(), dir.path(), Some(bin), vocab, quant).unwrap()
        };
        let first = key(b"model", b"vocab", Quant::Q8_0);
        assert!(first.starts_with(root.path().join("converted")));
        assert!(first.to_str().unwrap().ends_with("-q8_0.bin"));
        assert_eq!(first, key(b"model", b"vocab", Quant::Q8_0));
        assert_ne!(first, key(b"model2", b"vocab", Quant::Q8_0));
        assert_ne!(first, key(b"model", b"vocab2", Quant::Q8_0));
        assert_ne!(first, key(b"model", b"vocab", Quant::Q5_0));
        // With a SOURCE stamp the stamp is the key, not the bytes (which
        // are then not needed at all).
        std::fs::write(dir.path().join("SOURCE"), "model.bin sha256 ab\n").unwrap();
        let stamped = path(root.path(), dir.path(), None, b"vocab", Quant::Q8_0).unwrap();
        assert_eq!(stamped, key(b"other bytes", b"vocab", Quant::Q8_0));
        std::fs::write(dir.path().join("SOURCE"), "model.bin sha256 cd\n").unwrap();
        assert_ne!(stamped, key(b"other bytes", b"vocab", Quant::Q8_0));

        store(&first, b"ggml...");
        assert_eq!(std::fs::read(&first).unwrap(), b"ggml...");
        store(&first, b"ggml2");
        assert_eq!(std::fs::read(&first).unwrap(), b"ggml2");
        let leftovers = std::fs::read_dir(first.parent().unwrap()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
    }
}
