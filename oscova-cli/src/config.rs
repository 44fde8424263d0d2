//! The user's configuration: a small TOML file plus `OSCOVA_*` variables.
//!
//! Rules: the environment is read once, when the configuration is loaded,
//! and nothing reads it later. An explicit file (`--config`, then
//! `OSCOVA_CONFIG`) must exist; the default file may be missing. Unknown
//! keys in the file are errors, so a typo never silently drops a setting.
//! Environment values win over the file; a user's own credentials win over
//! the shared `[credentials]` table. Secrets are held as [`SecretString`]
//! from the moment they are parsed, and the configuration's `Debug` output
//! shows no value. The format is documented in the crate docs; the
//! provider tables and the files root follow the rules in [`providers`],
//! the `[speech]` section those in [`speech`]. `[network] allow` lists the
//! internal destinations `Internet` tools may reach, checked when the file
//! is loaded. `[sessions]` (where sessions are kept) follows the rules in
//! [`sessions`]: a Postgres password is never in the file, only in
//! `PGPASSWORD`. `[prompts.NAME]` (what `oscova mcp` serves as prompts)
//! follows the rules in [`prompts`]. `[auth]` (who may use the servers)
//! follows the rules in `auth.rs`: the OAuth introspection client's secret
//! is never in the file, only in `OSCOVA_OAUTH_CLIENT_SECRET`.

mod a2a;
mod auth;
mod credentials;
mod mcp;
mod parse;
mod prompts;
mod providers;
mod ranges;
mod serve;
pub(crate) mod sessions;
mod source;
mod speech;

pub use auth::OAUTH_SECRET_ENV;
pub use credentials::{ConfigCredentials, credential_env_var};
pub use sessions::SESSIONS_PASSWORD_ENV;
pub use speech::{default_recognizer, default_synthesis};

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(crate) use auth::AuthSection;
pub(crate) use mcp::McpSection;
use oscova_core::provider::model::ModelProviderConfig;
use oscova_core::{HttpClient, SecretString, UserInfo, host::DefaultApproval};
use parse::parse;
use providers::{NetworkSection, ProviderTable};
use serde::Deserialize;
use sessions::SessionsSection;
pub(crate) use sessions::{SessionsCompaction, SessionsStore};
use speech::SpeechSection;

use crate::error::CliError;

/// Names the config file instead of the default location.
pub const CONFIG_ENV: &str = "OSCOVA_CONFIG";
/// The user a command runs as, unless `--user` is given.
pub const USER_ENV: &str = "OSCOVA_USER";
/// The IANA time zone of the user a command runs as.
pub const TIME_ZONE_ENV: &str = "OSCOVA_TIME_ZONE";
/// Prefix of credential variables: `OSCOVA_CREDENTIAL_ACME_API_KEY` holds
/// the credential `acme.api_key` (see [`credential_env_var`]).
pub const CREDENTIAL_ENV_PREFIX: &str = "OSCOVA_CREDENTIAL_";
/// The user id when none is configured anywhere.
pub const DEFAULT_USER: &str = "local";
/// The base directory of the files plugin's per-user roots; wins over the
/// file's `files_root` (the plugin's own variable, read here once).
pub const FILES_ROOT_ENV: &str = oscova_core::fs::ROOT_ENV;

/// The file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    default_user: Option<String>,
    default_approval: Option<String>,
    files_root: Option<PathBuf>,
    #[serde(default)]
    credentials: BTreeMap<String, String>,
    #[serde(default)]
    users: BTreeMap<String, FileUser>,
    #[serde(default)]
    providers: BTreeMap<String, ProviderTable>,
    #[serde(default)]
    speech: SpeechSection,
    #[serde(default)]
    network: NetworkSection,
    /// `[mcp]`: serving (`tokens`, limits) and `[mcp.servers.NAME]`, MCP
    /// servers used as toolsets.
    #[serde(default)]
    mcp: McpSection,
    /// `[auth]`: static tokens and OAuth, for every server.
    #[serde(default)]
    auth: AuthSection,
    /// `[sessions]`: where sessions are kept.
    #[serde(default)]
    sessions: SessionsSection,
    /// `[a2a]`: the served agent (`provider`, `model`, `skills`), and A2A
    /// agents called as tools (the `oscova.a2a` plugin).
    #[serde(default)]
    a2a: a2a::A2aSection,
    /// `[prompts.NAME]`: prompts `oscova mcp` serves.
    #[serde(default)]
    prompts: BTreeMap<String, prompts::FilePrompt>,
    /// `[serve]`: what `oscova serve` adds to MCP (`[serve.a2a]`).
    #[serde(default)]
    serve: serve::ServeSection,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileUser {
    time_zone: Option<String>,
    #[serde(default)]
    credentials: BTreeMap<String, String>,
}

/// A user's section of the file.
#[derive(Debug, Default)]
struct UserEntry {
    time_zone: Option<String>,
    credentials: BTreeMap<String, SecretString>,
}

#[derive(Debug, Default)]
struct Secrets {
    /// `[credentials]`: every user.
    shared: BTreeMap<String, SecretString>,
    /// `[users.<id>]`.
    users: BTreeMap<String, UserEntry>,
    /// `OSCOVA_CREDENTIAL_<SUFFIX>`, keyed by the suffix.
    env: BTreeMap<String, SecretString>,
}

/// The loaded configuration: the file (if any) and the `OSCOVA_*`
/// variables captured when it was loaded.
///
/// ```
/// use oscova_cli::Config;
///
/// let config = Config::from_toml_str(
///     r#"
///     default_user = "alice"
///     [users.alice]
///     time_zone = "Europe/Berlin"
///     "#,
///     [("OSCOVA_CREDENTIAL_ACME_API_KEY", "k-123")],
/// )?;
/// let user = config.user(None);
/// assert_eq!(user.id(), "alice");
/// assert_eq!(user.time_zone(), Some("Europe/Berlin"));
/// # Ok::<(), oscova_cli::CliError>(())
/// ```
#[derive(Clone)]
pub struct Config {
    source: Option<PathBuf>,
    default_user: Option<String>,
    env_user: Option<String>,
    env_time_zone: Option<String>,
    default_approval: DefaultApproval,
    files_root: Option<PathBuf>,
    providers: Arc<BTreeMap<String, ProviderTable>>,
    speech: Arc<SpeechSection>,
    mcp: Arc<McpSection>,
    auth: Arc<AuthSection>,
    serve: Arc<serve::ServeSection>,
    sessions: SessionsStore,
    compaction: SessionsCompaction,
    prompts: oscova_mcp::prompt::PromptTemplates,
    secrets: Arc<Secrets>,
    env_names: Vec<String>,
    http: Option<HttpClient>,
    #[cfg(feature = "mcp-servers")]
    mcp_servers: Arc<oscova_plugin_mcp::McpConfig>,
    #[cfg(feature = "a2a-agents")]
    a2a: Arc<oscova_plugin_a2a::A2aConfig>,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("source", &self.source)
            .field("default_user", &self.default_user)
            .field("env_user", &self.env_user)
            .field("default_approval", &self.default_approval)
            .field("files_root", &self.files_root)
            .field("providers", &self.providers.keys().collect::<Vec<_>>())
            .field("users", &self.secrets.users.keys().collect::<Vec<_>>())
            .field("http", &self.http.is_some())
            .finish_non_exhaustive()
    }
}

impl Config {
    /// Loads the configuration from the process environment and the file
    /// `explicit` (from `--config`), else `OSCOVA_CONFIG`, else
    /// [`Config::default_path`] when that file exists. A variable whose
    /// name or value is not UTF-8 is skipped with a warning naming it.
    pub fn load(explicit: Option<&Path>) -> Result<Self, CliError> {
        Self::load_from(explicit, source::process_env())
    }

    /// [`load`](Self::load) with a given environment instead of the
    /// process's.
    pub fn load_from<I, K, V>(explicit: Option<&Path>, env: I) -> Result<Self, CliError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let env: Vec<(String, String)> =
            env.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        let from_env = env
            .iter()
            .find(|(k, v)| k == CONFIG_ENV && !v.is_empty())
            .map(|(_, v)| PathBuf::from(v));
        let (path, required) = match (explicit, from_env) {
            (Some(p), _) => (Some(p.to_path_buf()), true),
            (None, Some(p)) => (Some(p), true),
            (None, None) => (Self::default_path(), false),
        };
        let Some(path) = path else {
            return Self::build(None, FileConfig::default(), env);
        };
        match source::read_config(&path) {
            Ok(text) => {
                let file = parse(&text, &path)?;
                Self::build(Some(path), file, env)
            }
            Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => {
                Self::build(None, FileConfig::default(), env)
            }
            Err(source) => Err(CliError::ConfigRead { path, source }),
        }
    }

    /// Parses a config file's text, with `env` as the environment.
    pub fn from_toml_str<I, K, V>(text: &str, env: I) -> Result<Self, CliError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let path = PathBuf::from("<string>");
        let file = parse(text, &path)?;
        let env = env.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        Self::build(None, file, env)
    }

    /// The default config file: `config.toml` in the platform config
    /// directory (`$XDG_CONFIG_HOME/oscova/` or `~/.config/oscova/` on
    /// Linux). `None` when the platform has no home directory.
    pub fn default_path() -> Option<PathBuf> {
        directories::ProjectDirs::from("", "", "oscova")
            .map(|dirs| dirs.config_dir().join("config.toml"))
    }

    fn build(
        source: Option<PathBuf>,
        file: FileConfig,
        env: Vec<(String, String)>,
    ) -> Result<Self, CliError> {
        let origin = || source.clone().unwrap_or_else(|| PathBuf::from("<string>"));
        let default_approval = match file.default_approval.as_deref() {
            None | Some("not_required") => DefaultApproval::NotRequired,
            Some("required") => DefaultApproval::Required,
            Some(other) => {
                return Err(CliError::ConfigValue {
                    path: origin(),
                    message: format!(
                        "default_approval is {other:?}; use \"not_required\" or \"required\""
                    ),
                });
            }
        };
        let mut file = file;
        file.serve
            .take_agent(std::mem::take(&mut file.a2a.served))
            .map_err(|message| CliError::ConfigValue {
                path: origin(),
                message,
            })?;
        file.serve
            .check()
            .map_err(|message| CliError::ConfigValue {
                path: origin(),
                message,
            })?;
        file.mcp.check().map_err(|message| CliError::ConfigValue {
            path: origin(),
            message,
        })?;
        file.speech
            .check()
            .map_err(|message| CliError::ConfigValue {
                path: origin(),
                message,
            })?;
        a2a::check(&file.a2a).map_err(|message| CliError::ConfigValue {
            path: origin(),
            message,
        })?;
        #[cfg(feature = "a2a-agents")]
        a2a::resolve_pending_dir(&mut file.a2a.agents, source.as_deref());
        let http = file
            .network
            .http_client()
            .map_err(|message| CliError::ConfigValue {
                path: origin(),
                message,
            })?;
        let secret = |map: BTreeMap<String, String>| {
            map.into_iter()
                .map(|(k, v)| (k, SecretString::from(v)))
                .collect::<BTreeMap<_, _>>()
        };
        let users = file
            .users
            .into_iter()
            .map(|(id, u)| {
                let entry = UserEntry {
                    time_zone: u.time_zone,
                    credentials: secret(u.credentials),
                };
                (id, entry)
            })
            .collect();
        let mut env_user = None;
        let mut env_time_zone = None;
        let mut env_files_root = None;
        let mut pg_password = None;
        let mut oauth_secret = None;
        let mut env_secrets = BTreeMap::new();
        let mut env_names = Vec::new();
        for (name, value) in env {
            if let Some(suffix) = name.strip_prefix(CREDENTIAL_ENV_PREFIX) {
                env_names.push(name.clone());
                if !suffix.is_empty() && !value.is_empty() {
                    env_secrets.insert(suffix.to_ascii_uppercase(), SecretString::from(value));
                }
            } else if name == USER_ENV && !value.is_empty() {
                env_user = Some(value);
            } else if name == TIME_ZONE_ENV && !value.is_empty() {
                env_time_zone = Some(value);
            } else if name == FILES_ROOT_ENV && !value.is_empty() {
                env_files_root = Some(value);
            } else if name == SESSIONS_PASSWORD_ENV && !value.is_empty() {
                pg_password = Some(SecretString::from(value));
            } else if name == OAUTH_SECRET_ENV && !value.is_empty() {
                oauth_secret = Some(SecretString::from(value));
            }
        }
        file.auth
            .check(oauth_secret)
            .map_err(|message| CliError::ConfigValue {
                path: origin(),
                message,
            })?;
        let sessions = file
            .sessions
            .resolve(source.as_deref(), pg_password)
            .map_err(|message| CliError::ConfigValue {
                path: origin(),
                message,
            })?;
        let compaction = file
            .sessions
            .compaction()
            .map_err(|message| CliError::ConfigValue {
                path: origin(),
                message,
            })?;
        let prompts = prompts::templates(std::mem::take(&mut file.prompts), source.as_deref())
            .map_err(|message| CliError::ConfigValue {
                path: origin(),
                message,
            })?;
        let files_root = providers::files_root(
            env_files_root.as_deref(),
            file.files_root.as_deref(),
            source.as_deref(),
        );
        #[cfg(feature = "mcp-servers")]
        let ca_base = source.clone();
        Ok(Self {
            source,
            default_user: file.default_user.filter(|u| !u.is_empty()),
            env_user,
            env_time_zone,
            default_approval,
            files_root,
            providers: Arc::new(file.providers),
            speech: Arc::new(file.speech),
            #[cfg(feature = "mcp-servers")]
            mcp_servers: Arc::new(file.mcp.servers(ca_base.as_deref())),
            #[cfg(feature = "a2a-agents")]
            a2a: Arc::new(file.a2a.agents),
            mcp: Arc::new(file.mcp),
            auth: Arc::new(file.auth),
            serve: Arc::new(file.serve),
            sessions,
            compaction,
            prompts,
            secrets: Arc::new(Secrets {
                shared: secret(file.credentials),
                users,
                env: env_secrets,
            }),
            env_names,
            http,
        })
    }

    /// The `[mcp.servers]` section (feature `mcp-servers`).
    #[cfg(feature = "mcp-servers")]
    pub fn mcp_servers(&self) -> &oscova_plugin_mcp::McpConfig {
        &self.mcp_servers
    }

    /// The `[a2a]` section (feature `a2a-agents`): the agents the
    /// `oscova.a2a` plugin calls.
    #[cfg(feature = "a2a-agents")]
    pub fn a2a_agents(&self) -> &oscova_plugin_a2a::A2aConfig {
        &self.a2a
    }

    /// The lock file of pinned MCP catalogs: beside the config file, with
    /// its name less the extension plus `.mcp.lock` (`oscova.toml` →
    /// `oscova.mcp.lock`); none without a config file.
    pub fn mcp_lock_file(&self) -> Option<PathBuf> {
        let source = self.source.as_deref()?;
        let stem = source.file_stem()?.to_string_lossy().into_owned();
        Some(source.with_file_name(format!("{stem}.mcp.lock")))
    }

    /// The file that was read, if any.
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// The user a command runs as: `cli` (from `--user`), else
    /// `OSCOVA_USER`, else the file's `default_user`, else
    /// [`DEFAULT_USER`]; with the time zone from `OSCOVA_TIME_ZONE`, else
    /// the user's `time_zone` in the file.
    pub fn user(&self, cli: Option<&str>) -> UserInfo {
        let id = cli
            .filter(|u| !u.is_empty())
            .or(self.env_user.as_deref())
            .or(self.default_user.as_deref())
            .unwrap_or(DEFAULT_USER);
        let zone = self
            .env_time_zone
            .clone()
            .or_else(|| self.secrets.users.get(id).and_then(|u| u.time_zone.clone()));
        let user = UserInfo::new(id);
        match zone {
            Some(zone) => user.with_time_zone(zone),
            None => user,
        }
    }

    /// What `ToolApprovalMode::Default` means: the file's
    /// `default_approval`, `not_required` unless set.
    pub fn default_approval(&self) -> DefaultApproval {
        self.default_approval
    }

    /// The base directory of the files plugin's per-user roots (each user
    /// gets a subdirectory): `OSCOVA_FILES_ROOT`, else the file's
    /// `files_root` (a relative path is relative to the config file's
    /// directory), else `files` in the platform data directory
    /// (`~/.local/share/oscova/files` on Linux, honouring
    /// `XDG_DATA_HOME`). `None` only when there is no home directory.
    ///
    /// ```
    /// let none: [(&str, &str); 0] = [];
    /// let config = oscova_cli::Config::from_toml_str(r#"files_root = "/srv/oscova""#, none)?;
    /// assert_eq!(config.files_root(), Some(std::path::Path::new("/srv/oscova")));
    /// # Ok::<(), oscova_cli::CliError>(())
    /// ```
    pub fn files_root(&self) -> Option<&Path> {
        self.files_root.as_deref()
    }

    /// The configuration of model provider `key`: its `[providers.<key>]`
    /// table (endpoint, model, endpoint scope, options), or only the key
    /// when the file has no such table.
    ///
    /// ```
    /// use oscova_core::provider::model::EndpointScope;
    ///
    /// let none: [(&str, &str); 0] = [];
    /// let config = oscova_cli::Config::from_toml_str(
    ///     r#"
    ///     [providers.ollama]
    ///     endpoint = "http://gpu-box:11434"
    ///     model = "llama3.2"
    ///     endpoint_scope = "remote"
    ///     "#,
    ///     none,
    /// )?;
    /// let ollama = config.model_provider("ollama");
    /// assert_eq!(ollama.model.as_deref(), Some("llama3.2"));
    /// assert_eq!(ollama.endpoint_scope, Some(EndpointScope::Remote));
    /// assert_eq!(config.model_provider("openai").endpoint, None);
    /// # Ok::<(), oscova_cli::CliError>(())
    /// ```
    pub fn model_provider(&self, key: &str) -> ModelProviderConfig {
        self.providers
            .get(key)
            .map_or_else(|| ModelProviderConfig::new(key), |t| t.to_config(key))
    }

    /// The HTTP client the host hands to toolsets when the file's
    /// `[network] allow` lists internal destinations (`host[:port]`) that
    /// `Internet` tools may reach; `None` leaves the host's default, which
    /// allows none.
    ///
    /// ```
    /// let none: [(&str, &str); 0] = [];
    /// let text = "[network]\nallow = [\"10.0.0.5:8080\", \"intranet.example\"]";
    /// let config = oscova_cli::Config::from_toml_str(text, none)?;
    /// assert!(config.http_client().is_some());
    /// # Ok::<(), oscova_cli::CliError>(())
    /// ```
    pub fn http_client(&self) -> Option<HttpClient> {
        self.http.clone()
    }

    /// The `[serve]` section, for `oscova serve`.
    pub(crate) fn serve(&self) -> &serve::ServeSection {
        &self.serve
    }

    /// The `[mcp]` section.
    pub(crate) fn mcp(&self) -> &McpSection {
        &self.mcp
    }

    /// The `[prompts.NAME]` sections, checked (empty when there are none).
    pub fn prompts(&self) -> &oscova_mcp::prompt::PromptTemplates {
        &self.prompts
    }

    /// The `[auth]` section: who may use the servers.
    pub(crate) fn auth(&self) -> &AuthSection {
        &self.auth
    }

    /// Where sessions are kept (`[sessions]`).
    pub(crate) fn sessions(&self) -> &SessionsStore {
        &self.sessions
    }

    /// When `chat --session` compacts (`[sessions]`'s compaction keys).
    pub(crate) fn compaction(&self) -> SessionsCompaction {
        self.compaction
    }

    /// A credential resolver over this configuration.
    pub fn credentials(&self) -> ConfigCredentials {
        ConfigCredentials {
            secrets: self.secrets.clone(),
        }
    }

    /// Names of the `OSCOVA_CREDENTIAL_*` variables that were set, so the
    /// host can keep them out of child processes.
    pub fn credential_env_names(&self) -> &[String] {
        &self.env_names
    }

    /// Every configured secret value, so the host can redact them all.
    pub fn secret_values(&self) -> impl Iterator<Item = &SecretString> + '_ {
        let s = &*self.secrets;
        s.shared
            .values()
            .chain(s.users.values().flat_map(|u| u.credentials.values()))
            .chain(s.env.values())
            .chain(match &self.sessions {
                SessionsStore::Postgres {
                    password: Some(password),
                    ..
                } => Some(password),
                _ => None,
            })
    }
}

#[cfg(test)]
mod tests;
