//! The `oscova.mcp` plugin: MCP servers named in configuration become
//! toolsets, with the same per-user scopes, approval, network scope,
//! redaction and hooks as compiled-in ones.
//!
//! Each server is a runtime toolset whose owner segment is the server's
//! name: server `notes` with tool `Shout-Text` is
//! `oscova_mcp__notes__shout_text`. The catalog is known when the host
//! starts: [`McpPluginBuilder::start`] lists each server once over a
//! connection the host then owns (a shared server's calls use it), or reads
//! the server's pinned catalog from the lock file without contacting it.
//! The unpinned servers are connected concurrently, each within its
//! `timeout_secs`, so start-up waits for the slowest, not the sum; its
//! diagnostics and servers keep the configuration's order.
//! `configure` then only records what `start` found; nothing is started
//! or called while it runs.
//!
//! ```no_run
//! use oscova_core::prelude::*;
//! use oscova_plugin_mcp::{McpPlugin, ServerConfig};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let mcp = McpPlugin::builder()
//!     .server("notes", ServerConfig::command("python3").arg("server.py").per_user(true)
//!         .credential_env("NOTES_TOKEN", "notes.token"))
//!     .lock_file("oscova.mcp.lock")
//!     .start()
//!     .await;
//! let host = PluginHost::builder()
//!     .no_linked_plugins()
//!     .plugin_instance(mcp)
//!     .build()?;
//! let scope = host.user_scope(UserInfo::new("alice"));
//! let result = scope.invoke("oscova_mcp__notes__shout_text", json!({"text": "hi"})).await;
//! # Ok(()) }
//! ```
//!
//! What happens when things fail: a server whose configuration is wrong,
//! whose process cannot start, or which cannot list its tools is left out
//! with a diagnostic (in [`PluginHost::diagnostics`](oscova_core::PluginHost::diagnostics),
//! so `oscova plugins` shows it); every other server and plugin loads. A
//! server that dies is restarted on the next call, with an event in its
//! [`ServerStatus`]. Diagnostics and events carry a bounded, redacted tail
//! of the server's stderr. A user who has not set a credential the server
//! needs keeps its tools listed; each call returns an error result naming
//! the credential and how to set it, and no connection is tried for them.
//!
//! `network`: for a stdio server `network = "none"` is enforced where the
//! platform allows it (Linux with user namespaces and seccomp): the server
//! starts in an empty network namespace (`unshare -rn`) under a seccomp
//! filter that refuses every socket that could name a path, so it reaches
//! no IP address and no unix socket of the host, wherever it lives; it does
//! not confine the filesystem. Elsewhere, and for `local` and `internet`,
//! the scope is a declaration that approval policies and the catalog show.
//! A url server is refused when its URL is outside the declared scope.
//!
//! Prompts, resources and completion: [`McpPlugin::upstreams`] gives the
//! host [`McpUpstreams`], which reads them for a user scope and a server
//! over the connection that user's tool calls use (a `per_user` server's
//! own process, never another user's), with the same credentials,
//! timeouts and redaction; list changes a server announces are recorded
//! on the connection's own task ([`ChangedList`], [`ListChange`]).
//!
//! `https://` url servers: TLS is rustls on `ring`, the server's
//! certificate checked against the system's roots plus the PEM
//! certificates of its [`ServerConfig::ca_file`]; one no root vouches for
//! is refused in the handshake, before any request is sent.
//!
//! A url server that answers 401 gets an access token by OAuth client
//! credentials when it has an [`OAuthClient`] (`oauth`): its metadata
//! leads to its authorization server, whose token is cached per (server,
//! user) until it expires. The client secret is only ever sent to the
//! configured `issuer`, or, without one, to an authorization server on the
//! MCP server's own origin. A shared server's client is the host's
//! ([`McpPluginBuilder::host_credentials`]), a `per_user` one's the user's.
//!
//! A server whose `oauth` has `grant = "authorization_code"` needs a
//! person's consent instead: [`McpPluginBuilder::login`] gives the
//! authorization URL (PKCE, the client pre-registered, a Client ID
//! Metadata Document, or registered then), [`Login::finish`] exchanges the
//! redirect's code, and the grant is kept per (server, user), sealed, in
//! the [`TokenStore`] (SQLite, or Postgres with the `postgres` feature)
//! and refreshed one process or instance at a time. A user without
//! a grant keeps the tools listed; each call returns the
//! missing-credential result naming the login command.
//!
//! Bounds one server cannot break for the others: making a connection
//! (process, `initialize`, `tools/list`) takes at most the server's
//! `timeout_secs` and holds no lock other calls wait on; its stderr costs
//! the host at most [`TAIL_BYTES`] plus one read, newlines or not. A
//! server's elicitation is declined unless its [`Elicitation`] setting is
//! `Forward`, and then each question names the server.

mod changes;
mod config;
#[cfg(target_os = "linux")]
mod confine;
mod connect;
mod credentials;
mod elicit;
mod login;
mod oauth;
pub mod pin;
mod progress;
mod result;
mod server;
mod status;
mod tail;
mod tls;
mod upstream;
mod validate;

use std::path::PathBuf;
use std::sync::Arc;

use oscova_core::diagnostic::{Diagnostic, DiagnosticKind};
use oscova_core::process::ProcessSpawnPolicy;
use oscova_core::redact::Redactor;
use oscova_core::tool::ToolAnnotations;
use oscova_core::tool::{ToolInfo, ToolsetInfo};
use oscova_core::{
    AgentPlugin, AgentPluginBuilder, AgentPluginContext, ExposeSecret, NetworkScope, SecretString,
    plugin,
};

pub use changes::{ChangedList, ListChange};
pub use config::{
    ClientAuth, ConfigError, DEFAULT_TIMEOUT, Elicitation, McpConfig, OAuthClient, OAuthGrant,
    ServerConfig,
};
pub use connect::network_isolation_available;
pub use oauth::user::key::{TOKEN_KEY_ENV, TokenKey, TokenKeyError};
pub use oauth::user::link::{LOGIN_LINK_TERM, LinkError, LoggedIn, LoginStarted};
pub use oauth::user::login::{LoggedOut, Login, LoopbackRedirect};
pub use oauth::user::store::{TokenStore, TokenStoreError};
pub use status::{MAX_EVENTS, McpStatus, ServerStatus};
pub use tail::TAIL_BYTES;
pub use upstream::{McpUpstreams, UpstreamError};

use connect::{ConnectParams, Connection, OAuthAccess, connect};
use credentials::{HostCredentials, handler};
use oauth::{Credentials, TokenCache};
use pin::{CatalogTool, PinError, catalog_hash, read_pins, write_pin};
use server::{Server, Slot};
use status::summary;

/// The plugin id.
pub const PLUGIN_ID: &str = "oscova.mcp";

/// The kind of the warning for a server left out at start-up (it did not
/// start, could not list its tools, or its pin is not valid): code
/// `tool_source_failed`. This plugin's own kind, so not a variant of core's
/// [`DiagnosticKind`].
pub const TOOL_SOURCE_FAILED: DiagnosticKind = DiagnosticKind::Other("tool_source_failed");

/// The `oscova.mcp` plugin, holding what [`McpPluginBuilder::start`] found.
/// Linked without configuration (its `Default`), it contributes nothing.
#[plugin(id = "oscova.mcp", name = "MCP servers", framework = ">=0.1")]
#[derive(Default)]
pub struct McpPlugin {
    servers: Vec<Arc<Server>>,
    diagnostics: Vec<String>,
    status: McpStatus,
    changes: Arc<changes::ChangeLog>,
}

impl std::fmt::Debug for McpPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpPlugin")
            .field(
                "servers",
                &self.servers.iter().map(|s| &s.name).collect::<Vec<_>>(),
            )
            .field("diagnostics", &self.diagnostics)
            .finish()
    }
}

impl McpPlugin {
    /// Configures the servers.
    pub fn builder() -> McpPluginBuilder {
        McpPluginBuilder::default()
    }

    /// What went wrong at start-up, one message per server left out.
    pub fn start_diagnostics(&self) -> &[String] {
        &self.diagnostics
    }

    /// Every server's status.
    pub fn status(&self) -> &McpStatus {
        &self.status
    }

    /// The host's way to the servers' prompts, resources and completion,
    /// over the connections their tools use (see [`McpUpstreams`]). Take
    /// it before handing the plugin to the host; clones share everything.
    pub fn upstreams(&self) -> McpUpstreams {
        McpUpstreams::new(self.servers.clone(), self.changes.clone())
    }
}

impl AgentPlugin for McpPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        for server in &self.servers {
            let tools = server.catalog.iter().map(|t| tool_info(t, &server.config));
            let info = ToolsetInfo::new(server.name.clone(), tools);
            let server = server.clone();
            builder
                .add_runtime_toolset(info, move |ctx: &AgentPluginContext| handler(&server, ctx));
        }
        for message in &self.diagnostics {
            builder.report(Diagnostic::warning(
                TOOL_SOURCE_FAILED,
                Some(PLUGIN_ID),
                message.clone(),
            ));
        }
    }
}

/// A server's tool as runtime metadata: its title, schemas and hints as
/// the server gives them, the server's approval mode and network scope.
fn tool_info(tool: &CatalogTool, config: &ServerConfig) -> ToolInfo {
    let mut info = ToolInfo::new(
        tool.name.clone(),
        tool.description.clone(),
        tool.input_schema.clone(),
    )
    .with_approval(config.approval)
    .with_network_scope(config.network);
    if let Some(title) = &tool.title {
        info = info.with_title(title.clone());
    }
    if let Some(schema) = &tool.output_schema {
        info = info.with_output_schema(schema.clone());
    }
    let hint = |key: &str| {
        tool.annotations
            .as_ref()
            .and_then(|a| a.get(key))
            .and_then(serde_json::Value::as_bool)
    };
    let mut hints = ToolAnnotations::new();
    if let Some(v) = hint("readOnlyHint") {
        hints = hints.with_read_only(v);
    }
    if let Some(v) = hint("destructiveHint") {
        hints = hints.with_destructive(v);
    }
    if let Some(v) = hint("idempotentHint") {
        hints = hints.with_idempotent(v);
    }
    // The declared network scope decides the open world, as for compiled
    // tools, unless the server says otherwise.
    hints = hints
        .with_open_world(hint("openWorldHint").unwrap_or(config.network == NetworkScope::Internet));
    info.with_annotations(hints)
}

/// Configures servers, then [`start`](Self::start)s them.
#[derive(Debug, Default)]
pub struct McpPluginBuilder {
    config: McpConfig,
    lock_file: Option<PathBuf>,
    spawn: Option<ProcessSpawnPolicy>,
    redactor: Redactor,
    host_credentials: HostCredentials,
    token_store: Option<TokenStore>,
    /// The host's callback for logins by link (`oauth/user/link.rs`).
    login_redirect: Option<crate::oauth::user::link::LinkRoutes>,
}

/// What listing, pinning, logging in to or out of a configured MCP server
/// failed with: the MCP client's error (the MCP server's is
/// `oscova_mcp::McpError`, the A2A client's `oscova_plugin_a2a::ClientError`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// No server of that name is configured.
    #[error("no MCP server `{0}` is configured")]
    UnknownServer(String),
    /// Its configuration is wrong.
    #[error("MCP server `{name}`: {source}")]
    Config {
        /// The server.
        name: String,
        /// What is wrong.
        #[source]
        source: ConfigError,
    },
    /// It could not be reached or listed.
    #[error("MCP server `{name}`: {message}")]
    Connect {
        /// The server.
        name: String,
        /// Why, redacted.
        message: String,
    },
    /// No lock file was configured.
    #[error("no MCP lock file is configured")]
    NoLockFile,
    /// Logging in or out failed.
    #[error("MCP server `{name}`: {message}")]
    Login {
        /// The server.
        name: String,
        /// Why.
        message: String,
    },
    /// The lock file could not be read or written.
    #[error(transparent)]
    Pin(#[from] PinError),
}

impl McpPluginBuilder {
    /// Every server of `config`, after those already added.
    pub fn config(mut self, config: McpConfig) -> Self {
        self.config.servers.extend(config.servers);
        self
    }

    /// Adds server `name`.
    pub fn server(mut self, name: impl Into<String>, config: ServerConfig) -> Self {
        self.config.servers.insert(name.into(), config);
        self
    }

    /// The lock file of pinned catalogs (the CLI's sits beside its config).
    /// It is read as a file the host trusts (`oscova_core::fs::read_trusted`:
    /// a regular file owned by this user or root that nobody else can
    /// write, nor any directory on its way); one that is not loads no
    /// server, with a diagnostic saying why. See [`pin`] for what a pin
    /// protects against.
    pub fn lock_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.lock_file = Some(path.into());
        self
    }

    /// The spawn policy for shared servers' processes and the listing at
    /// start (a `per_user` server's calls use the scope's). Give it the
    /// host's: the default is [`ProcessSpawnPolicy::new`].
    pub fn spawn_policy(mut self, policy: ProcessSpawnPolicy) -> Self {
        self.spawn = Some(policy);
        self
    }

    /// Secrets redacted from diagnostics and stderr tails, on top of each
    /// user's credentials (give it the host's redactor).
    pub fn redactor(mut self, redactor: &Redactor) -> Self {
        self.redactor = redactor.clone();
        self
    }

    /// The host's own credentials, by key: a shared server's `oauth`
    /// client credentials, and those the listing at start (and
    /// [`pin`](Self::pin)) uses for any `oauth` server, `per_user` ones
    /// included (the `oscova` CLI: the `[credentials]` table and
    /// `OSCOVA_CREDENTIAL_*` variables, never a user's). Secrets it gives
    /// are added to the [`redactor`](Self::redactor).
    pub fn host_credentials(
        mut self,
        resolve: impl Fn(&str) -> Option<SecretString> + Send + Sync + 'static,
    ) -> Self {
        self.host_credentials = HostCredentials(Some(Arc::new(resolve)));
        self
    }

    /// The host's client credentials for `config`'s `oauth`, if it has
    /// both.
    fn host_oauth(&self, config: &ServerConfig) -> Option<Credentials> {
        let client = config.oauth.as_ref().filter(|c| !c.is_user_grant())?;
        let resolve = self.host_credentials.0.as_ref()?;
        let id = resolve(&client.client_id_credential)?;
        let secret = resolve(&client.client_secret_credential)?;
        self.redactor.add(secret.expose_secret());
        Some(Credentials { id, secret })
    }

    /// The configured servers.
    pub fn servers(&self) -> &McpConfig {
        &self.config
    }

    fn spawn(&self) -> ProcessSpawnPolicy {
        self.spawn
            .clone()
            .unwrap_or_else(|| ProcessSpawnPolicy::new().redacting(&self.redactor))
    }

    /// Lists server `name`'s tools live, in name order.
    pub async fn list(&self, name: &str) -> Result<Vec<CatalogTool>, ClientError> {
        let config = self
            .config
            .servers
            .get(name)
            .ok_or_else(|| ClientError::UnknownServer(name.to_owned()))?;
        config.check().map_err(|source| ClientError::Config {
            name: name.to_owned(),
            source,
        })?;
        let spawn = self.spawn();
        let oauth = match self.host_flow(name, config) {
            Some(flow) => Some(OAuthAccess::User(flow)),
            None => self
                .host_oauth(config)
                .map(|credentials| OAuthAccess::Client {
                    credentials,
                    tokens: TokenCache::default().of(None),
                }),
        };
        let conn = connect(ConnectParams {
            name,
            config,
            spawn: &spawn,
            credentials: &[],
            oauth,
            redactor: &self.redactor,
            changes: None,
        })
        .await
        .map_err(|e| ClientError::Connect {
            name: name.to_owned(),
            message: e.redacted(&self.redactor),
        })?;
        Ok(conn.live.clone())
    }

    /// Lists server `name` and pins its catalog in the lock file; returns
    /// the catalog's hash.
    pub async fn pin(&self, name: &str) -> Result<String, ClientError> {
        let path = self.lock_file.as_ref().ok_or(ClientError::NoLockFile)?;
        let tools = self.list(name).await?;
        Ok(write_pin(path, name, tools)?)
    }

    /// Reads the pins and lists every unpinned server, keeping a shared
    /// server's connection for its calls. Call it on the runtime that will
    /// serve the calls: the kept connections live on it.
    pub async fn start(self) -> McpPlugin {
        let mut plugin = McpPlugin::default();
        let spawn = self.spawn();
        let pins = match &self.lock_file {
            None => Default::default(),
            Some(path) => match read_pins(path) {
                Ok(pins) => pins,
                Err(e) => {
                    plugin.diagnostics.push(format!(
                        "{e}; no MCP server was loaded (re-pin with `oscova mcp pin NAME`)"
                    ));
                    return plugin;
                }
            },
        };
        // Every unpinned server is connected at once, each within its own
        // `timeout_secs`: N silent servers delay start-up by the longest
        // timeout, not the sum. The tasks are joined before `start` returns
        // (dropping `start` aborts them); what is reported keeps the
        // configuration's order.
        let mut connecting = tokio::task::JoinSet::new();
        // Each server's tokens, by user, kept from the listing on.
        let caches: Vec<Arc<TokenCache>> =
            self.config.servers.iter().map(|_| Arc::default()).collect();
        let host_oauth: Vec<Option<Credentials>> = self
            .config
            .servers
            .values()
            .map(|config| self.host_oauth(config))
            .collect();
        let host_flows: Vec<_> = (self.config.servers.iter())
            .map(|(name, config)| self.host_flow(name, config))
            .collect();
        for (index, (name, config)) in self.config.servers.iter().enumerate() {
            if pins.contains_key(name) || config.check().is_err() {
                continue;
            }
            let (name, config) = (name.clone(), config.clone());
            let (spawn, redactor) = (spawn.clone(), self.redactor.clone());
            let oauth = match (
                host_oauth.get(index),
                caches.get(index),
                host_flows.get(index),
            ) {
                (_, _, Some(Some(flow))) => Some(OAuthAccess::User(flow.clone())),
                (Some(Some(credentials)), Some(cache), _) => Some(OAuthAccess::Client {
                    credentials: credentials.clone(),
                    tokens: cache.of(None),
                }),
                _ => None,
            };
            // The connection a shared server keeps records its changes.
            let changes = Some(changes::ChangeRoute {
                log: plugin.changes.clone(),
                server: name.clone(),
                user: None,
            });
            connecting.spawn(async move {
                let made = connect(ConnectParams {
                    name: &name,
                    config: &config,
                    spawn: &spawn,
                    credentials: &[],
                    oauth,
                    redactor: &redactor,
                    changes,
                })
                .await
                .map_err(|e| e.redacted(&redactor));
                (index, made)
            });
        }
        let mut connected: Vec<Option<Result<Connection, String>>> =
            std::iter::repeat_with(|| None)
                .take(self.config.servers.len())
                .collect();
        while let Some(joined) = connecting.join_next().await {
            if let Ok((index, made)) = joined
                && let Some(place) = connected.get_mut(index)
            {
                *place = Some(made);
            }
        }
        for (index, (name, config)) in self.config.servers.iter().enumerate() {
            let fail = |plugin: &mut McpPlugin, why: String| {
                plugin
                    .diagnostics
                    .push(format!("MCP server `{name}` was not loaded: {why}"));
            };
            if let Err(e) = config.check() {
                fail(&mut plugin, e.to_string());
                continue;
            }
            let (catalog, pinned, slot) = match pins.get(name) {
                Some(pin) => {
                    if catalog_hash(&pin.tools) != pin.hash {
                        fail(
                            &mut plugin,
                            "its pinned catalog does not match its hash (was the lock file edited?); re-pin it with `oscova mcp pin`".to_owned(),
                        );
                        continue;
                    }
                    (pin.tools.clone(), Some(pin.hash.clone()), Slot::default())
                }
                None => match connected.get_mut(index).and_then(Option::take) {
                    Some(Ok(conn)) => {
                        let tools = conn.live.clone();
                        let slot = if config.per_user {
                            Slot::default()
                        } else {
                            Slot::with(conn)
                        };
                        (tools, None, slot)
                    }
                    Some(Err(why)) => {
                        fail(&mut plugin, why);
                        continue;
                    }
                    None => {
                        fail(
                            &mut plugin,
                            "its connection task ended without a result".to_owned(),
                        );
                        continue;
                    }
                },
            };
            let status = Arc::new(ServerStatus::new(
                name,
                summary(config, catalog.len(), pinned.as_deref()),
            ));
            plugin.status.servers.push(status.clone());
            plugin.servers.push(Arc::new(Server {
                name: name.clone(),
                config: config.clone(),
                catalog,
                pinned: pinned.is_some(),
                shared: tokio::sync::Mutex::new(slot),
                status,
                spawn: spawn.clone(),
                redactor: self.redactor.clone(),
                tokens: caches.get(index).cloned().unwrap_or_default(),
                host_oauth: host_oauth.get(index).cloned().flatten(),
                token_store: self.token_store.clone(),
                login_redirect: self.login_redirect.clone(),
                host_flow: host_flows.get(index).cloned().flatten(),
                client_secret: self.client_secret(config),
                changes: plugin.changes.clone(),
                scopes: Default::default(),
            }));
        }
        plugin
    }
}

// The README's examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}
