//! The `[providers.<key>]` tables, `[network]` and the files root: the
//! parts of the configuration that say where services and data live.
//!
//! `[network] allow` lists the internal destinations `Internet` tools may
//! reach; it becomes the host's HTTP client when the file is loaded, so a
//! bad entry is a config error naming it before anything starts.
//!
//! Rules: a provider table is keyed by the provider's type key
//! (`[providers.ollama]`), holds no secret (keys are credentials,
//! `<key>.api_key`), and turns into a [`ModelProviderConfig`] unchanged, so
//! the saved `endpoint_scope` reaches `check_offline` as written. Command
//! line flags override a table's `endpoint` and `model`, never its
//! `endpoint_scope`: a scope saved as `remote` (a tunnel to another
//! machine, say) stays remote whatever endpoint is given. The files root
//! is `OSCOVA_FILES_ROOT`, else the file's `files_root` (relative to the
//! file's directory), else `files` in the platform data directory; never
//! the working directory, which is wherever a client happened to start
//! `oscova mcp`.

use std::path::{Path, PathBuf};

use oscova_core::HttpClient;
use oscova_core::provider::model::{EndpointScope, ModelProviderConfig};
use serde::Deserialize;
use serde_json::{Map, Value};

/// `[providers.<key>]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProviderTable {
    /// The server, instead of the provider's default.
    endpoint: Option<String>,
    /// The model `oscova chat` uses when `--model` is not given.
    model: Option<String>,
    /// Where the endpoint runs, as the user says: `"local"` or `"remote"`.
    endpoint_scope: Option<EndpointScope>,
    /// Provider-specific settings, passed on as they are.
    #[serde(default)]
    options: Map<String, Value>,
}

impl ProviderTable {
    /// The provider configuration for type key `key`.
    pub(crate) fn to_config(&self, key: &str) -> ModelProviderConfig {
        let mut config = ModelProviderConfig::new(key);
        config.endpoint = non_empty(self.endpoint.as_deref());
        config.model = non_empty(self.model.as_deref());
        config.endpoint_scope = self.endpoint_scope;
        config.options = self.options.clone();
        config
    }
}

/// `[network]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NetworkSection {
    /// `host[:port]` entries.
    #[serde(default)]
    pub(crate) allow: Vec<String>,
}

impl NetworkSection {
    /// The HTTP client allowing these destinations, `None` when none are
    /// listed; an error names the bad entry.
    pub(crate) fn http_client(&self) -> Result<Option<HttpClient>, String> {
        if self.allow.is_empty() {
            return Ok(None);
        }
        HttpClient::builder()
            .allow_internal(&self.allow)
            .build()
            .map(Some)
            .map_err(|e| format!("[network] allow: {e}"))
    }
}

fn non_empty(text: Option<&str>) -> Option<String> {
    text.map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
}

/// The files root from its three sources, in order of precedence.
pub(crate) fn files_root(
    env: Option<&str>,
    file: Option<&Path>,
    config_path: Option<&Path>,
) -> Option<PathBuf> {
    if let Some(env) = env.filter(|e| !e.is_empty()) {
        return Some(PathBuf::from(env));
    }
    if let Some(file) = file.filter(|f| !f.as_os_str().is_empty()) {
        let dir = config_path.and_then(Path::parent);
        return Some(match dir {
            Some(dir) if file.is_relative() => dir.join(file),
            _ => file.to_path_buf(),
        });
    }
    default_files_root()
}

/// `files` in the platform data directory (`$XDG_DATA_HOME/oscova/files`,
/// else `~/.local/share/oscova/files` on Linux); `None` without a home
/// directory.
pub(crate) fn default_files_root() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "oscova").map(|dirs| dirs.data_dir().join("files"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_becomes_a_provider_config() {
        let table: ProviderTable = toml::from_str(
            r#"
            endpoint = "http://10.0.0.5:11434"
            model = "llama3.2"
            endpoint_scope = "remote"
            options = { keep_alive = "5m", catalog = ["qwen3"] }
            "#,
        )
        .unwrap();
        let config = table.to_config("ollama");
        assert_eq!(config.provider, "ollama");
        assert_eq!(config.endpoint.as_deref(), Some("http://10.0.0.5:11434"));
        assert_eq!(config.model.as_deref(), Some("llama3.2"));
        assert_eq!(config.endpoint_scope, Some(EndpointScope::Remote));
        assert_eq!(config.options["catalog"][0], "qwen3");
        assert_eq!(
            ProviderTable::default().to_config("openai"),
            ModelProviderConfig::new("openai")
        );
    }

    #[test]
    fn mistakes_in_a_table_are_errors() {
        let err = toml::from_str::<ProviderTable>("endpoint_scope = \"nearby\"").unwrap_err();
        assert!(err.to_string().contains("nearby"), "{err}");
        let err = toml::from_str::<ProviderTable>("api_key = \"x\"").unwrap_err();
        assert!(err.to_string().contains("api_key"), "{err}");
    }

    #[test]
    fn the_files_root_never_depends_on_the_working_directory() {
        let config = Path::new("/etc/oscova/config.toml");
        assert_eq!(
            files_root(Some("/srv/env"), Some(Path::new("/srv/file")), Some(config)),
            Some(PathBuf::from("/srv/env"))
        );
        assert_eq!(
            files_root(Some(""), Some(Path::new("data")), Some(config)),
            Some(PathBuf::from("/etc/oscova/data"))
        );
        assert_eq!(
            files_root(None, Some(Path::new("/srv/file")), Some(config)),
            Some(PathBuf::from("/srv/file"))
        );
        let default = files_root(None, None, Some(config));
        assert_eq!(default, default_files_root());
        if let Some(default) = default {
            assert!(
                default.is_absolute() && default.ends_with("oscova/files"),
                "{default:?}"
            );
        }
    }
}
