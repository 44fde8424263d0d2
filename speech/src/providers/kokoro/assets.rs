//! Where the kokoro provider finds its files, and reading them.
//!
//! Rules: one folder, the one `scripts/ensure-kokoro.sh` installs into:
//! `OSCOVA_KOKORO_DIR`, else `kokoro/` in the cache folder the onnxruntime
//! voices share (`crate::onnx`: `$XDG_CACHE_HOME/oscova`, else
//! `~/.cache/oscova`). It holds the model
//! [`MODEL_FILE`], the vocabulary `vocab.json` (IPA symbol → token id) and
//! the voices as `voices/NAME.bin`: raw little-endian float32, 510 rows of
//! 256 (one style per token count). A voice *name* must be a plain name of
//! letters, digits and `_` (so a name from a tool call cannot reach a file
//! elsewhere) and is only looked up in that folder; a name starting with
//! `a` is spoken as US English (`en-us`), with `b` as UK English (`en-gb`);
//! other languages' voices are not offered.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::error::KokoroError;

/// The command that installs the model, the voices and the vocabulary.
pub(crate) const KOKORO_INSTALL_COMMAND: &str = "scripts/ensure-kokoro.sh";

/// The voice used when neither the request nor the configuration names one.
pub(crate) const KOKORO_DEFAULT_VOICE: &str = "af_heart";

/// The model's file name in the folder.
pub(crate) const MODEL_FILE: &str = "kokoro-v1.0.int8.onnx";

/// The variable that names another folder.
pub(crate) const DIR_ENV: &str = "OSCOVA_KOKORO_DIR";

/// Rows in a voice file: one style per token count, 1 to 510.
pub(crate) const STYLE_ROWS: usize = 510;

/// Floats in one style row.
pub(crate) const STYLE_WIDTH: usize = 256;

/// The folder: `OSCOVA_KOKORO_DIR`, else the cache's.
pub(crate) fn default_dir() -> Option<PathBuf> {
    std::env::var_os(DIR_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| crate::onnx::cache_root().map(|root| root.join("kokoro")))
}

/// Whether the model, the vocabulary and the default voice are in `dir`.
pub(crate) fn installed(dir: &Path) -> bool {
    dir.join(MODEL_FILE).is_file()
        && dir.join("vocab.json").is_file()
        && voice_path(dir, KOKORO_DEFAULT_VOICE).is_file()
}

fn voice_path(dir: &Path, name: &str) -> PathBuf {
    dir.join("voices").join(format!("{name}.bin"))
}

/// The English voices installed in `dir`, by name.
pub(crate) fn installed_voices(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir.join("voices")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let stem = name.strip_suffix(".bin")?.to_owned();
            (is_voice_name(&stem) && espeak_voice(&stem).is_some()).then_some(stem)
        })
        .collect();
    names.sort_unstable();
    names
}

fn is_voice_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The espeak-ng voice a kokoro voice is spoken with.
pub(crate) fn espeak_voice(name: &str) -> Option<&'static str> {
    match name.as_bytes().first() {
        Some(b'a') => Some("en-us"),
        Some(b'b') => Some("en-gb"),
        _ => None,
    }
}

/// What `dir` lacks for the provider to run, if anything.
pub(crate) fn missing(dir: Option<&Path>) -> KokoroError {
    let missing = match dir {
        None => "no kokoro folder: set OSCOVA_KOKORO_DIR, XDG_CACHE_HOME or HOME".to_owned(),
        Some(dir) => format!(
            "the kokoro model, vocabulary or voices are not installed in {}",
            dir.display()
        ),
    };
    KokoroError::not_installed(missing, KOKORO_INSTALL_COMMAND)
}

/// A voice's 510 style rows, read from `dir`.
pub(crate) fn load_voice(dir: &Path, name: &str) -> Result<Vec<f32>, KokoroError> {
    if !is_voice_name(name) || espeak_voice(name).is_none() {
        return Err(unknown(dir, name));
    }
    let path = voice_path(dir, name);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if installed(dir) {
                return Err(unknown(dir, name));
            }
            return Err(missing(Some(dir)));
        }
        Err(e) => {
            return Err(KokoroError::BadFile {
                path: path.display().to_string(),
                reason: e.to_string(),
            });
        }
    };
    if bytes.len() != STYLE_ROWS * STYLE_WIDTH * 4 {
        return Err(KokoroError::BadFile {
            path: path.display().to_string(),
            reason: format!(
                "it has {} bytes, not {STYLE_ROWS} x {STYLE_WIDTH} float32",
                bytes.len()
            ),
        });
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

fn unknown(dir: &Path, name: &str) -> KokoroError {
    KokoroError::UnknownVoice {
        voice: name.to_owned(),
        known: installed_voices(dir),
    }
}

/// The vocabulary: IPA symbol → token id.
pub(crate) type Vocab = HashMap<char, i64>;

/// Reads `vocab.json` from `dir`.
pub(crate) fn load_vocab(dir: &Path) -> Result<Vocab, KokoroError> {
    let path = dir.join("vocab.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            missing(Some(dir))
        } else {
            KokoroError::BadFile {
                path: path.display().to_string(),
                reason: e.to_string(),
            }
        }
    })?;
    parse_vocab(&text).map_err(|reason| KokoroError::BadFile {
        path: path.display().to_string(),
        reason,
    })
}

/// A vocabulary from its JSON: an object of one-character keys to ids.
pub(crate) fn parse_vocab(text: &str) -> Result<Vocab, String> {
    let map: HashMap<String, i64> =
        serde_json::from_str(text).map_err(|e| format!("it is not a vocabulary ({e})"))?;
    let mut vocab = Vocab::with_capacity(map.len());
    for (symbol, id) in map {
        let mut chars = symbol.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if (0..=511).contains(&id) => {
                vocab.insert(c, id);
            }
            _ => {
                return Err(format!(
                    "its entry {symbol:?} → {id} is not one symbol → id"
                ));
            }
        }
    }
    if vocab.is_empty() {
        return Err("it is empty".to_owned());
    }
    Ok(vocab)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_and_english() {
        assert_eq!(espeak_voice("af_heart"), Some("en-us"));
        assert_eq!(espeak_voice("bm_george"), Some("en-gb"));
        assert_eq!(espeak_voice("jf_alpha"), None);
        assert!(!is_voice_name("../af_heart"));
        assert!(!is_voice_name("af/heart"));
        assert!(!is_voice_name(""));
    }

    #[test]
    fn a_name_outside_the_folder_is_an_unknown_voice() {
        let dir = tempfile::tempdir().unwrap();
        let err = load_voice(dir.path(), "../../etc/passwd").unwrap_err();
        assert!(matches!(err, KokoroError::UnknownVoice { .. }), "{err:?}");
    }

    #[test]
    fn vocabularies_map_one_symbol_to_an_id() {
        let vocab = parse_vocab(r#"{"a": 43, "ˈ": 156, " ": 16}"#).unwrap();
        assert_eq!(vocab.get(&'ˈ'), Some(&156));
        assert!(parse_vocab(r#"{"ab": 1}"#).is_err());
        assert!(parse_vocab(r#"{}"#).is_err());
    }
}
