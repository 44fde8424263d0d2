//! Where the piper provider finds its voices.
//!
//! Rules: the cache folder is the one the onnxruntime voices share (see
//! `crate::onnx`, which also finds the library), the one
//! `scripts/ensure-piper.sh` installs into. Voices live in `piper/voices/`
//! beneath it as `NAME.onnx` beside `NAME.onnx.json`;
//! `OSCOVA_PIPER_VOICES` names another voice folder. A voice *name* is only ever looked up in the voice
//! folder and must be a plain file name, so a name from a tool call cannot
//! reach a file elsewhere; a voice anywhere else is configured as a path
//! (`model`), which only the host's configuration sets.

use std::path::{Path, PathBuf};

use super::error::PiperError;

/// The voice used when neither the request nor the configuration names
/// one and it is installed; else the first installed voice by name.
pub(crate) const PIPER_DEFAULT_VOICE: &str = "en_US-joe-medium";

/// The command that installs the onnxruntime library and the test voice.
pub(crate) const PIPER_INSTALL_COMMAND: &str = "scripts/ensure-piper.sh";

/// The variable that names another voice folder.
pub(crate) const VOICES_ENV: &str = "OSCOVA_PIPER_VOICES";

/// The voice folder: `OSCOVA_PIPER_VOICES`, else the cache's.
pub(crate) fn default_voices_dir() -> Option<PathBuf> {
    std::env::var_os(VOICES_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| crate::onnx::cache_root().map(|root| root.join("piper").join("voices")))
}

/// A voice's two files.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct VoiceFiles {
    /// The name people see: the model's file name without `.onnx`.
    pub(crate) name: String,
    /// `NAME.onnx`.
    pub(crate) model: PathBuf,
    /// `NAME.onnx.json`.
    pub(crate) config: PathBuf,
}

impl VoiceFiles {
    /// The files of the voice whose model is `model` (its config beside it,
    /// as Piper names it).
    pub(crate) fn at(model: &Path) -> Self {
        let mut config = model.as_os_str().to_owned();
        config.push(".json");
        let file = model.file_name().map(|f| f.to_string_lossy().into_owned());
        let name = file
            .as_deref()
            .map(|f| f.strip_suffix(".onnx").unwrap_or(f).to_owned())
            .unwrap_or_default();
        Self {
            name,
            model: model.to_path_buf(),
            config: PathBuf::from(config),
        }
    }

    /// Whether both files are there.
    pub(crate) fn exist(&self) -> bool {
        self.model.is_file() && self.config.is_file()
    }
}

/// The voices installed in `dir`, sorted by name: every `NAME.onnx` with a
/// `NAME.onnx.json` beside it. A missing folder has none.
pub(crate) fn installed_voices(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let file = entry.file_name().into_string().ok()?;
            let name = file.strip_suffix(".onnx")?;
            (is_plain_name(name) && VoiceFiles::at(&entry.path()).exist()).then(|| name.to_owned())
        })
        .collect();
    names.sort_unstable();
    names
}

/// A voice name that can only name a file inside the voice folder.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The installed voice called `name` in `dir`.
pub(crate) fn voice_named(dir: &Path, name: &str) -> Result<VoiceFiles, PiperError> {
    let files = VoiceFiles::at(&dir.join(format!("{name}.onnx")));
    if is_plain_name(name) && files.exist() {
        return Ok(files);
    }
    let known = installed_voices(dir);
    if known.is_empty() {
        return Err(no_voice(Some(dir)));
    }
    Err(PiperError::UnknownVoice {
        voice: name.to_owned(),
        known,
    })
}

/// The voice to use when none is named: the default one if installed,
/// else the first by name.
pub(crate) fn default_voice(dir: &Path) -> Result<VoiceFiles, PiperError> {
    let known = installed_voices(dir);
    let name = known
        .iter()
        .find(|n| *n == PIPER_DEFAULT_VOICE)
        .or_else(|| known.first())
        .ok_or_else(|| no_voice(Some(dir)))?;
    Ok(VoiceFiles::at(&dir.join(format!("{name}.onnx"))))
}

/// The error for an empty (or unknown) voice folder.
pub(crate) fn no_voice(dir: Option<&Path>) -> PiperError {
    let missing = match dir {
        Some(dir) => format!(
            "no Piper voice (NAME.onnx with NAME.onnx.json) in {}",
            dir.display()
        ),
        None => format!(
            "no voice folder: set HOME, XDG_CACHE_HOME or {VOICES_ENV}, or configure a voice file as `model`"
        ),
    };
    PiperError::not_installed(missing, PIPER_INSTALL_COMMAND)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::error::OnnxError;

    fn touch(path: &Path) {
        std::fs::write(path, b"x").unwrap();
    }

    #[test]
    fn a_voice_needs_both_files_and_a_plain_name() {
        let dir = tempfile::tempdir().unwrap();
        touch(&dir.path().join("b-voice.onnx"));
        touch(&dir.path().join("b-voice.onnx.json"));
        touch(&dir.path().join("a_voice.onnx"));
        touch(&dir.path().join("a_voice.onnx.json"));
        touch(&dir.path().join("lonely.onnx"));
        touch(&dir.path().join(".hidden.onnx"));
        touch(&dir.path().join(".hidden.onnx.json"));
        assert_eq!(installed_voices(dir.path()), ["a_voice", "b-voice"]);
        assert_eq!(
            default_voice(dir.path()).unwrap().name,
            "a_voice",
            "the first by name when the default voice is absent"
        );
        assert!(voice_named(dir.path(), "b-voice").is_ok());
        for bad in ["lonely", "../a_voice", "/etc/passwd", ".hidden", ""] {
            let err = voice_named(dir.path(), bad).unwrap_err();
            assert!(
                matches!(&err, PiperError::UnknownVoice { known, .. } if known.len() == 2),
                "{bad}: {err:?}"
            );
        }
    }

    #[test]
    fn an_empty_or_missing_folder_is_not_installed() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        assert!(installed_voices(&missing).is_empty());
        for err in [
            default_voice(&missing).unwrap_err(),
            voice_named(dir.path(), "x").unwrap_err(),
        ] {
            assert!(
                matches!(&err, PiperError::Shared(OnnxError::NotInstalled { install, .. }) if *install == PIPER_INSTALL_COMMAND),
                "{err:?}"
            );
        }
    }

    #[test]
    fn the_config_sits_beside_the_model() {
        let files = VoiceFiles::at(Path::new("/v/en_GB-alan-low.onnx"));
        assert_eq!(files.name, "en_GB-alan-low");
        assert_eq!(files.config, Path::new("/v/en_GB-alan-low.onnx.json"));
    }
}
