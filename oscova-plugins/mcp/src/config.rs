//! The configuration of MCP servers: `[mcp.servers.NAME]` tables in the
//! CLI's TOML, or the same values through [`ServerConfig`]'s builder
//! methods for an embedding host.
//!
//! Rules: unknown keys are refused (a misspelt `per_usr` must not quietly
//! share one process between users); a server has exactly one of `command`
//! and `url`; credentials are named by key, never written here, and only a
//! `per_user` server may have them, so one user's credential never reaches
//! a process or session another user's calls use. The one exception is
//! `oauth` (a url server's client credentials): a shared server takes them
//! from the host's credentials, a `per_user` one from each user's.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use oscova_core::{NetworkScope, ToolApprovalMode};
use serde::Deserialize;

mod oauth;

pub use oauth::{ClientAuth, OAuthClient, OAuthGrant};

/// The default per-call timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Every configured server, by name (the owner segment of its tools'
/// wire names).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// The servers.
    #[serde(default)]
    pub servers: BTreeMap<String, ServerConfig>,
}

/// One MCP server.
///
/// ```
/// use oscova_plugin_mcp::ServerConfig;
/// use oscova_core::{NetworkScope, ToolApprovalMode};
///
/// let notes = ServerConfig::command("python3")
///     .arg("server.py")
///     .env("NOTES_MODE", "test")
///     .credential_env("NOTES_TOKEN", "notes.token")
///     .per_user(true)
///     .approval(ToolApprovalMode::Required)
///     .network(NetworkScope::Internet);
/// assert!(notes.check().is_ok());
///
/// let shared_secret = ServerConfig::command("python3").credential_env("T", "notes.token");
/// assert!(shared_secret.check().is_err()); // credentials need per_user
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// A stdio server: the program to start.
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments, passed as a list (never through a shell).
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables given to the process as they are.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables set from the calling user's credentials: variable name →
    /// credential key.
    #[serde(default)]
    pub credential_env: BTreeMap<String, String>,
    /// One process (or session) per user scope, started on that user's
    /// first call; otherwise one shared by every user.
    #[serde(default)]
    pub per_user: bool,
    /// The approval mode of every tool of this server.
    #[serde(default)]
    pub approval: ToolApprovalMode,
    /// What its tools may reach. `none` is enforced for stdio servers
    /// where the platform allows it (Linux: an empty network namespace and
    /// a seccomp filter, so no IP address and no unix socket of the host
    /// is reachable; the filesystem is not confined); otherwise it is a
    /// declaration approval policies and the catalog show.
    #[serde(default = "internet")]
    pub network: NetworkScope,
    /// A streamable HTTP server: its endpoint.
    #[serde(default)]
    pub url: Option<String>,
    /// Headers set from the calling user's credentials: header → key. An
    /// `Authorization` header gets `Bearer <credential>`.
    #[serde(default)]
    pub credential_header: BTreeMap<String, String>,
    /// An `https://` server: a PEM file of certificates trusted beside the
    /// system's roots (a private CA, a self-signed server). The `oscova`
    /// CLI reads a relative path relative to its config file.
    #[serde(default)]
    pub ca_file: Option<PathBuf>,
    /// Seconds a call may take before it ends with a timeout error; also
    /// the bound on making a connection (starting the process or opening
    /// the session, `initialize` and `tools/list` together).
    #[serde(default)]
    pub timeout_secs: Option<f64>,
    /// What happens to the server's elicitation requests (its questions
    /// for the person): declined unasked (the default), or forwarded to
    /// the person of the call in flight, attributed to the server.
    #[serde(default)]
    pub elicitation: Elicitation,
    /// A url server that answers 401: the OAuth client credentials a
    /// token is got with (see [`OAuthClient`]).
    #[serde(default)]
    pub oauth: Option<OAuthClient>,
}

/// What happens to a server's elicitation requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Elicitation {
    /// Declined without asking anyone; the capability is not offered, so
    /// a server that keeps to MCP does not ask.
    #[default]
    Decline,
    /// Asked of the person through the call it belongs to, the message
    /// folded to one line and prefixed with ``MCP server `NAME` asks:``,
    /// each field's title with ``MCP server `NAME`:``, so nobody takes the
    /// server's words for the host's.
    Forward,
}

fn internet() -> NetworkScope {
    NetworkScope::Internet
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            credential_env: BTreeMap::new(),
            per_user: false,
            approval: ToolApprovalMode::Default,
            network: NetworkScope::Internet,
            url: None,
            credential_header: BTreeMap::new(),
            ca_file: None,
            timeout_secs: None,
            elicitation: Elicitation::Decline,
            oauth: None,
        }
    }
}

/// What is wrong with a server's configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// Neither `command` nor `url`, or both.
    #[error("set exactly one of `command` (a stdio server) and `url` (a streamable HTTP server)")]
    Transport,
    /// Credentials on a server shared by every user.
    #[error(
        "`credential_env` and `credential_header` need `per_user = true`: a shared server would carry one user's credential into every user's calls"
    )]
    SharedCredentials,
    /// A stdio option on a url server, or the reverse.
    #[error("`{0}` does not apply to this kind of server")]
    Misplaced(&'static str),
    /// A timeout that is not a positive number of seconds.
    #[error("`timeout_secs` must be a positive number of seconds")]
    Timeout,
    /// `oauth` beside a `credential_header` that sets `Authorization`.
    #[error("`oauth` sets the `Authorization` header itself; remove it from `credential_header`")]
    OAuthAuthorization,
    /// An `oauth.issuer` that is not an `http://` or `https://` URL.
    #[error("`oauth.issuer` must be an `https://` (or loopback `http://`) URL")]
    OAuthIssuer,
    /// An `oauth` key the grant needs is not set.
    #[error("`oauth.{0}` is required by this `oauth.grant`")]
    OAuthMissing(&'static str),
    /// An `oauth` key that the grant does not use.
    #[error("`oauth.{0}` does not apply to this `oauth.grant`")]
    OAuthMisplaced(&'static str),
    /// An `oauth.client_metadata_url` that is not an `https://` URL.
    #[error("`oauth.client_metadata_url` must be an `https://` URL")]
    OAuthClientMetadataUrl,
}

impl ServerConfig {
    /// A stdio server started as `program`.
    pub fn command(program: impl Into<String>) -> Self {
        Self {
            command: Some(program.into()),
            ..Self::default()
        }
    }

    /// A streamable HTTP server at `url`.
    pub fn url(url: impl Into<String>) -> Self {
        Self {
            url: Some(url.into()),
            ..Self::default()
        }
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets a variable of the process.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(name.into(), value.into());
        self
    }

    /// Sets variable `name` from the calling user's credential `key`.
    pub fn credential_env(mut self, name: impl Into<String>, key: impl Into<String>) -> Self {
        self.credential_env.insert(name.into(), key.into());
        self
    }

    /// Sends header `name` from the calling user's credential `key`.
    pub fn credential_header(mut self, name: impl Into<String>, key: impl Into<String>) -> Self {
        self.credential_header.insert(name.into(), key.into());
        self
    }

    /// Trusts the certificates of the PEM file at `path` beside the
    /// system's roots (an `https://` server with a private CA).
    pub fn ca_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.ca_file = Some(path.into());
        self
    }

    /// One process (or session) per user scope.
    pub fn per_user(mut self, per_user: bool) -> Self {
        self.per_user = per_user;
        self
    }

    /// The approval mode of its tools.
    pub fn approval(mut self, mode: ToolApprovalMode) -> Self {
        self.approval = mode;
        self
    }

    /// What its tools may reach.
    pub fn network(mut self, scope: NetworkScope) -> Self {
        self.network = scope;
        self
    }

    /// The per-call timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout_secs = Some(timeout.as_secs_f64());
        self
    }

    /// Gets a token by OAuth client credentials when the server answers
    /// 401 (a url server).
    pub fn oauth(mut self, oauth: OAuthClient) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// What happens to the server's elicitation requests.
    pub fn elicitation(mut self, elicitation: Elicitation) -> Self {
        self.elicitation = elicitation;
        self
    }

    /// The per-call timeout in effect.
    pub fn call_timeout(&self) -> Duration {
        self.timeout_secs
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .unwrap_or(DEFAULT_TIMEOUT)
    }

    /// Whether this is a stdio server.
    pub fn is_stdio(&self) -> bool {
        self.command.is_some()
    }

    /// Checks the rules a table cannot express.
    pub fn check(&self) -> Result<(), ConfigError> {
        match (&self.command, &self.url) {
            (Some(_), None) => {
                if !self.credential_header.is_empty() {
                    return Err(ConfigError::Misplaced("credential_header"));
                }
                if self.ca_file.is_some() {
                    return Err(ConfigError::Misplaced("ca_file"));
                }
                if self.oauth.is_some() {
                    return Err(ConfigError::Misplaced("oauth"));
                }
            }
            (None, Some(_)) => {
                for (set, key) in [
                    (!self.args.is_empty(), "args"),
                    (!self.env.is_empty(), "env"),
                    (!self.credential_env.is_empty(), "credential_env"),
                ] {
                    if set {
                        return Err(ConfigError::Misplaced(key));
                    }
                }
            }
            _ => return Err(ConfigError::Transport),
        }
        let has_credentials =
            !(self.credential_env.is_empty() && self.credential_header.is_empty());
        if has_credentials && !self.per_user {
            return Err(ConfigError::SharedCredentials);
        }
        if let Some(oauth) = &self.oauth {
            if self
                .credential_header
                .keys()
                .any(|h| h.eq_ignore_ascii_case("authorization"))
            {
                return Err(ConfigError::OAuthAuthorization);
            }
            if let Some(issuer) = &oauth.issuer
                && crate::oauth::check_endpoint(issuer).is_err()
            {
                return Err(ConfigError::OAuthIssuer);
            }
            oauth.check()?;
        }
        if let Some(secs) = self.timeout_secs
            && !(secs > 0.0 && Duration::try_from_secs_f64(secs).is_ok())
        {
            return Err(ConfigError::Timeout);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_table_deserialises() {
        // The CLI parses the TOML; this is the same table as a value.
        let config: McpConfig = serde_json::from_value(serde_json::json!({
            "servers": {
                "notes": {
                    "command": "python3", "args": ["server.py"],
                    "env": {"NOTES_MODE": "test"},
                    "credential_env": {"NOTES_TOKEN": "notes.token"},
                    "per_user": true, "approval": "required", "network": "internet"
                },
                "remote": {
                    "url": "http://127.0.0.1:8080/mcp",
                    "credential_header": {"Authorization": "notes.bearer"},
                    "per_user": true, "timeout_secs": 5, "elicitation": "forward"
                }
            }
        }))
        .expect("config");
        let notes = &config.servers["notes"];
        assert_eq!(notes.approval, ToolApprovalMode::Required);
        assert!(notes.per_user && notes.check().is_ok());
        let remote = &config.servers["remote"];
        assert_eq!(remote.call_timeout(), Duration::from_secs(5));
        assert_eq!(remote.network, NetworkScope::Internet);
        assert_eq!(remote.elicitation, Elicitation::Forward);
        assert_eq!(
            notes.elicitation,
            Elicitation::Decline,
            "declined by default"
        );
        assert!(remote.check().is_ok());
    }

    #[test]
    fn mistakes_are_refused() {
        assert_eq!(ServerConfig::default().check(), Err(ConfigError::Transport));
        assert_eq!(
            ServerConfig::url("http://x").arg("a").check(),
            Err(ConfigError::Misplaced("args"))
        );
        assert_eq!(
            ServerConfig::command("x").timeout_secs_raw(-1.0).check(),
            Err(ConfigError::Timeout)
        );
        let unknown = serde_json::from_value::<ServerConfig>(serde_json::json!({"per_usr": true}));
        assert!(unknown.is_err());
        let oauth = OAuthClient::new("n.id", "n.secret");
        assert_eq!(
            ServerConfig::command("x").oauth(oauth.clone()).check(),
            Err(ConfigError::Misplaced("oauth"))
        );
        assert_eq!(
            ServerConfig::url("http://127.0.0.1:1/mcp")
                .per_user(true)
                .credential_header("authorization", "n.bearer")
                .oauth(oauth.clone())
                .check(),
            Err(ConfigError::OAuthAuthorization)
        );
        for bad in [
            "auth.example.com",
            "http://auth.example.com",
            "ftp://127.0.0.1",
        ] {
            assert_eq!(
                ServerConfig::url("http://127.0.0.1:1/mcp")
                    .oauth(oauth.clone().issuer(bad))
                    .check(),
                Err(ConfigError::OAuthIssuer),
                "{bad}"
            );
        }
        // Shared: the host's credentials, so no `per_user` needed.
        assert!(
            ServerConfig::url("http://127.0.0.1:1/mcp")
                .oauth(oauth.issuer("http://127.0.0.1:2"))
                .check()
                .is_ok()
        );
        let table = serde_json::from_value::<ServerConfig>(serde_json::json!({
            "url": "https://notes.example.com/mcp",
            "oauth": {"client_id_credential": "n.id", "client_secret_credential": "n.secret",
                      "scopes": ["mcp"], "issuer": "https://auth.example.com",
                      "client_auth": "client_secret_post"}
        }))
        .expect("the oauth table");
        assert_eq!(
            table.oauth.as_ref().map(|o| o.scopes.clone()),
            Some(vec!["mcp".to_owned()])
        );
        assert_eq!(
            table.oauth.and_then(|o| o.client_auth),
            Some(ClientAuth::ClientSecretPost)
        );
        let misspelt = serde_json::from_value::<ServerConfig>(serde_json::json!({
            "url": "https://notes.example.com/mcp",
            "oauth": {"client_id_credential": "n.id", "client_secret": "n.secret"}
        }));
        assert!(misspelt.is_err(), "unknown oauth keys are refused");
    }

    impl ServerConfig {
        fn timeout_secs_raw(mut self, secs: f64) -> Self {
            self.timeout_secs = Some(secs);
            self
        }
    }
}
