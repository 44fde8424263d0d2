//! Where Whisper models are found.
//!
//! Rules: a model is named by the request's configuration (`model`), else
//! by the environment variable [`WHISPER_MODEL_ENV`], else it is the first
//! of [`WHISPER_DEFAULTS`] whose model is installed. A name in
//! [`WHISPER_MODELS`], alone or with a quantization suffix from
//! [`WHISPER_QUANTIZATIONS`] (`base-q8_0`), is a folder of the cache ([`whisper_cache_dir`]:
//! `$XDG_CACHE_HOME/oscova/whisper/<name>`, `~/.cache/...` without
//! `XDG_CACHE_HOME`), where `scripts/ensure-whisper-model.sh` installs it;
//! anything else is a path: a folder holding a CTranslate2 model
//! (`model.bin` and `vocabulary.txt`, as faster-whisper uses) or a
//! whisper.cpp model file. A suffix asks for the weight matrices in that
//! quantization, converted on load from the same folder. Looking costs a few `stat` calls and reads
//! nothing; a missing model is [`Missing`], which names the install
//! command.

use std::path::{Path, PathBuf};

use super::quant::Quant;

/// The models the install script installs: English-only tiny and
/// multilingual base.
pub(crate) const WHISPER_MODELS: [&str; 2] = ["tiny.en", "base"];

/// The quantizations a model name can ask for as a suffix (`base-q8_0`):
/// ggml's 8-bit and 5-bit blocks, converted when the model loads.
pub(crate) const WHISPER_QUANTIZATIONS: [&str; 2] = ["q8_0", "q5_0"];

/// The model a configuration without one uses: the first of these whose
/// model is installed. Most accurate first, among those that decode at
/// tiny.en's speed (see the crate's README for the measurements).
pub(crate) const WHISPER_DEFAULTS: [&str; 2] = ["base-q8_0", "tiny.en"];

/// The environment variable naming the model when the configuration does
/// not: a name from [`WHISPER_MODELS`] or a path.
pub(crate) const WHISPER_MODEL_ENV: &str = "OSCOVA_WHISPER_MODEL";

/// The command that installs a model into the cache (from a checkout of
/// this project).
pub(crate) const WHISPER_INSTALL_COMMAND: &str = "scripts/ensure-whisper-model.sh";

/// The folder the install script puts models in:
/// `$XDG_CACHE_HOME/oscova/whisper`, or `$HOME/.cache/oscova/whisper`;
/// `None` when neither variable is set to an absolute path.
pub(crate) fn whisper_cache_dir() -> Option<PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let cache =
        absolute("XDG_CACHE_HOME").or_else(|| absolute("HOME").map(|h| h.join(".cache")))?;
    Some(cache.join("oscova").join("whisper"))
}

/// A model found on disk.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Located {
    /// A CTranslate2 model folder, converted on load, its weight
    /// matrices in `quant`.
    Ct2 {
        name: String,
        dir: PathBuf,
        quant: Quant,
    },
    /// A whisper.cpp model file, loaded as it is.
    Ggml { name: String, file: PathBuf },
}

impl Located {
    /// The name to show: the model's name or its path.
    pub(crate) fn name(&self) -> &str {
        match self {
            Self::Ct2 { name, .. } | Self::Ggml { name, .. } => name,
        }
    }
}

/// A model that is not where it was looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Missing {
    /// What is missing, for a person.
    pub(crate) what: String,
    /// The command that installs it.
    pub(crate) install: String,
}

fn ct2_dir(name: &str, dir: &Path, quant: Quant) -> Option<Located> {
    (dir.join("model.bin").is_file() && dir.join("vocabulary.txt").is_file()).then(|| {
        Located::Ct2 {
            name: name.to_owned(),
            dir: dir.to_path_buf(),
            quant,
        }
    })
}

/// A model name from [`WHISPER_MODELS`], with or without a quantization
/// suffix: the model and the quantization.
fn split_name(name: &str) -> Option<(&'static str, Quant)> {
    let (model, quant) = match name.rsplit_once('-') {
        Some((model, suffix)) if WHISPER_MODELS.contains(&model) => {
            let quant = Quant::ALL.into_iter().find(|q| q.name() == suffix)?;
            (model, quant)
        }
        _ => (name, Quant::F16),
    };
    WHISPER_MODELS
        .iter()
        .find(|m| **m == model)
        .map(|m| (*m, quant))
}

/// Whether `name` is a model name (not a path): one of
/// [`WHISPER_MODELS`], with or without a suffix of
/// [`WHISPER_QUANTIZATIONS`] (or `f16`).
pub(crate) fn is_whisper_model_name(name: &str) -> bool {
    split_name(name).is_some()
}

fn install_command(name: &str) -> String {
    format!("{WHISPER_INSTALL_COMMAND} {name}")
}

/// Finds the model `configured` names (see the module's rules), in
/// `cache` for the named models.
pub(crate) fn locate_in(
    configured: Option<&str>,
    cache: Option<&Path>,
) -> Result<Located, Missing> {
    let from_env = std::env::var(WHISPER_MODEL_ENV).ok();
    let asked = configured
        .or(from_env.as_deref())
        .map(str::trim)
        .filter(|m| !m.is_empty());
    let named = |name: &str| {
        let (model, quant) = split_name(name)?;
        cache.and_then(|c| ct2_dir(name, &c.join(model), quant))
    };
    let Some(asked) = asked else {
        return WHISPER_DEFAULTS
            .iter()
            .find_map(|n| named(n))
            .ok_or_else(|| Missing {
                what: format!(
                    "no Whisper model in {}",
                    cache.map_or("the cache (HOME is not set)".into(), |c| c
                        .display()
                        .to_string())
                ),
                install: install_command(WHISPER_MODELS[0]),
            });
    };
    if let Some((model, _)) = split_name(asked) {
        return named(asked).ok_or_else(|| Missing {
            what: format!(
                "the Whisper model `{model}` is not in {}",
                cache.map_or("the cache (HOME is not set)".into(), |c| c
                    .display()
                    .to_string())
            ),
            install: install_command(model),
        });
    }
    let path = Path::new(asked);
    if path.is_file() {
        return Ok(Located::Ggml {
            name: asked.to_owned(),
            file: path.to_path_buf(),
        });
    }
    if path.is_dir() {
        return ct2_dir(asked, path, Quant::F16).ok_or_else(|| Missing {
            what: format!("the folder {asked} has no model.bin and vocabulary.txt"),
            install: install_command(WHISPER_MODELS[0]),
        });
    }
    Err(Missing {
        what: format!(
            "`{asked}` is neither a model name ({}, or one of them with a suffix -{}) \
             nor an existing file or folder",
            WHISPER_MODELS.join(", "),
            WHISPER_QUANTIZATIONS.join(" or -")
        ),
        install: install_command(WHISPER_MODELS[0]),
    })
}

/// [`locate_in`] the user's cache.
pub(crate) fn locate(configured: Option<&str>) -> Result<Located, Missing> {
    locate_in(configured, whisper_cache_dir().as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn install(cache: &Path, name: &str) {
        let dir = cache.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("model.bin"), b"x").unwrap();
        std::fs::write(dir.join("vocabulary.txt"), b"x").unwrap();
    }

    #[test]
    fn names_paths_and_the_default_are_found() {
        let cache = tempfile::tempdir().unwrap();
        let c = Some(cache.path());
        let missing = locate_in(None, c).unwrap_err();
        assert_eq!(missing.install, "scripts/ensure-whisper-model.sh tiny.en");
        install(cache.path(), "base");
        assert_eq!(locate_in(None, c).unwrap().name(), "base-q8_0");
        assert!(
            locate_in(Some("tiny.en"), c)
                .unwrap_err()
                .what
                .contains("`tiny.en`")
        );
        install(cache.path(), "tiny.en");
        // base quantized stays the default once tiny.en is there too.
        assert_eq!(locate_in(None, c).unwrap().name(), "base-q8_0");
        assert_eq!(locate_in(Some(" base "), c).unwrap().name(), "base");
        for (name, quant) in [
            ("tiny.en-q8_0", Quant::Q8_0),
            ("base-q5_0", Quant::Q5_0),
            ("base-f16", Quant::F16),
        ] {
            let Located::Ct2 { dir, quant: q, .. } = locate_in(Some(name), c).unwrap() else {
                panic!("{name}");
            };
            assert_eq!(
                (dir.file_name().unwrap(), q),
                (name.split('-').next().unwrap().as_ref(), quant)
            );
        }
        assert!(!is_whisper_model_name("base-q4_0"));
        assert!(
            locate_in(Some("base-q4_0"), c)
                .unwrap_err()
                .what
                .contains("-q8_0 or -q5_0")
        );
        std::fs::remove_dir_all(cache.path().join("base")).unwrap();
        assert_eq!(locate_in(None, c).unwrap().name(), "tiny.en");
        let missing = locate_in(Some("base-q8_0"), c).unwrap_err();
        assert!(missing.what.contains("`base`"), "{}", missing.what);
        assert_eq!(missing.install, "scripts/ensure-whisper-model.sh base");
        install(cache.path(), "base");

        let dir = cache.path().join("base");
        let by_path = locate_in(dir.to_str(), c).unwrap();
        assert_eq!(
            by_path,
            Located::Ct2 {
                name: dir.display().to_string(),
                dir: dir.clone(),
                quant: Quant::F16,
            }
        );
        let file = dir.join("model.bin");
        assert!(matches!(
            locate_in(file.to_str(), c).unwrap(),
            Located::Ggml { .. }
        ));
        let empty = tempfile::tempdir().unwrap();
        assert!(
            locate_in(empty.path().to_str(), c)
                .unwrap_err()
                .what
                .contains("no model.bin")
        );
        assert!(
            locate_in(Some("huge"), c)
                .unwrap_err()
                .what
                .contains("neither a model name")
        );
        assert!(
            locate_in(Some("base"), None)
                .unwrap_err()
                .what
                .contains("HOME")
        );
    }
}
