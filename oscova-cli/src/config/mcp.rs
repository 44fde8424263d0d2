//! The `[mcp]` section: what `oscova mcp --listen` serves to whom.
//!
//! Rules: every key is optional. `[[mcp.tokens]]` entries (`user`,
//! `sha256`: the lowercase hex SHA-256 of the user's bearer token) are
//! checked when the file is loaded, so a mistyped hash never starts a
//! server that lets nobody in; the file holds hashes only, never tokens.
//! They are used beside `[[auth.tokens]]` (`auth.rs`, where OAuth is
//! configured too), the table shared with the A2A server.
//! `allowed_origins` are browser origins accepted beside loopback ones
//! (`scheme://host[:port]`, `:*` for any port, no port for the scheme's
//! default), on every path of the port: `oscova serve`'s A2A routes meet
//! the same policy as `/mcp`.
//! The limits default to the server library's (`oscova_mcp::http`'s
//! `DEFAULT_*` constants); each has the range the library exports beside
//! it (`*_RANGE`, read by `ranges.rs`), and a value outside it is an error
//! when the file is loaded, naming the key and the range. `[mcp.servers.NAME]`
//! entries are the `oscova.mcp` plugin's (feature `mcp-servers`); in a
//! build without it, any entry is an error when the file is loaded, naming
//! the server and the feature, never silently ignored. `waits` says where
//! the MCP server (`oscova mcp --listen`, `oscova serve`, and `oscova mcp`
//! on stdio) keeps calls waiting between 2026-07-28 rounds: `"sessions"` (the default) in the
//! `[sessions]` store, its SQLite file or its Postgres database, so a
//! retry is answered by any process on that store, or `"memory"`, this
//! process's only. `task_after_ms` is how long a `tools/call` of a
//! client that declared the MCP tasks extension runs as usual before it
//! becomes a task (default 1000; a call that ends sooner is answered with
//! its result, one that asks the person sooner becomes a task as it asks;
//! 0: every such call a task at once), for `oscova mcp` on stdio too.
//!
//! ```toml
//! [mcp]
//! allowed_origins = ["https://app.example.com"]
//! max_in_flight_total = 512
//! max_in_flight_per_user = 128
//! max_sessions_per_user = 32
//! max_sessions = 1024
//! max_parked_per_user = 16
//! max_connections = 512
//! max_connections_per_peer = 256
//! body_timeout_secs = 20
//! idle_timeout_secs = 600
//! waits = "sessions"
//! task_after_ms = 1000
//!
//! [[mcp.tokens]]
//! user = "alice"
//! sha256 = "9c220f200955d76c0a38d308225e0ef10c5f971acaf2f8d1d8f732affa5bd1dc"
//! ```

use std::time::Duration;

use oscova_mcp::http::{McpHttpServer, UserToken};
use serde::Deserialize;

/// `[mcp]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct McpSection {
    #[serde(default)]
    tokens: Vec<super::auth::TokenEntry>,
    #[serde(default)]
    allowed_origins: Vec<String>,
    max_body_bytes: Option<usize>,
    max_in_flight: Option<usize>,
    max_in_flight_total: Option<usize>,
    max_in_flight_per_user: Option<usize>,
    max_parked_per_user: Option<usize>,
    max_sessions_per_user: Option<usize>,
    max_sessions: Option<usize>,
    max_connections: Option<usize>,
    max_connections_per_peer: Option<usize>,
    body_timeout_secs: Option<u64>,
    idle_timeout_secs: Option<u64>,
    shutdown_grace_secs: Option<u64>,
    task_after_ms: Option<u64>,
    scope_cache: Option<usize>,
    /// Where calls waiting between 2026-07-28 rounds are kept.
    #[serde(default)]
    waits: Waits,
    /// `[mcp.servers.NAME]`: MCP servers used as toolsets (the `oscova.mcp`
    /// plugin).
    #[serde(default)]
    servers: std::collections::BTreeMap<String, ServerEntry>,
    /// Parsed from `tokens` by [`McpSection::check`].
    #[serde(skip)]
    parsed: Vec<UserToken>,
}

/// `[mcp] waits`: where the MCP server keeps calls waiting for an answer
/// between 2026-07-28 rounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Waits {
    /// In the `[sessions]` store, for every process on it.
    #[default]
    Sessions,
    /// In this process's memory only.
    Memory,
}

/// One `[mcp.servers.NAME]` entry: the plugin's settings.
#[cfg(feature = "mcp-servers")]
type ServerEntry = oscova_plugin_mcp::ServerConfig;
/// One `[mcp.servers.NAME]` entry: anything, refused by [`McpSection::check`].
#[cfg(not(feature = "mcp-servers"))]
type ServerEntry = toml::Value;

impl McpSection {
    /// The servers, as the `oscova.mcp` plugin takes them, a relative
    /// `ca_file` read relative to the config file (`source`).
    #[cfg(feature = "mcp-servers")]
    pub(crate) fn servers(&self, source: Option<&std::path::Path>) -> oscova_plugin_mcp::McpConfig {
        let mut servers = self.servers.clone();
        let base = source.and_then(std::path::Path::parent);
        for server in servers.values_mut() {
            if let (Some(file), Some(base)) = (&server.ca_file, base)
                && file.is_relative()
            {
                server.ca_file = Some(base.join(file));
            }
        }
        oscova_plugin_mcp::McpConfig { servers }
    }

    /// Checks every number against its range (`ranges.rs`) and parses the
    /// token hashes; the message names the key and its range, or the user
    /// whose entry is wrong. Without the `mcp-servers` feature, refuses any
    /// `[mcp.servers]` entry.
    pub(crate) fn check(&mut self) -> Result<(), String> {
        #[cfg(not(feature = "mcp-servers"))]
        if let Some(name) = self.servers.keys().next() {
            return Err(crate::error::CliError::McpServersOff {
                what: format!("[mcp.servers.{name}]"),
            }
            .to_string());
        }
        use super::ranges::*;
        MCP_MAX_BODY_BYTES.check(self.max_body_bytes)?;
        MCP_MAX_IN_FLIGHT.check(self.max_in_flight)?;
        MCP_MAX_IN_FLIGHT_TOTAL.check(self.max_in_flight_total)?;
        MCP_MAX_IN_FLIGHT_PER_USER.check(self.max_in_flight_per_user)?;
        MCP_MAX_PARKED_PER_USER.check(self.max_parked_per_user)?;
        MCP_MAX_SESSIONS_PER_USER.check(self.max_sessions_per_user)?;
        MCP_MAX_SESSIONS.check(self.max_sessions)?;
        MCP_MAX_CONNECTIONS.check(self.max_connections)?;
        MCP_MAX_CONNECTIONS_PER_PEER.check(self.max_connections_per_peer)?;
        MCP_BODY_TIMEOUT_SECS.check(self.body_timeout_secs)?;
        MCP_IDLE_TIMEOUT_SECS.check(self.idle_timeout_secs)?;
        MCP_SHUTDOWN_GRACE_SECS.check(self.shutdown_grace_secs)?;
        MCP_TASK_AFTER_MS.check(self.task_after_ms)?;
        MCP_SCOPE_CACHE.check(self.scope_cache)?;
        #[cfg(feature = "mcp-servers")]
        for (name, server) in &self.servers {
            MCP_SERVER_TIMEOUT_SECS.check_float(
                &format!("mcp.servers.{name}.timeout_secs"),
                server.timeout_secs,
            )?;
        }
        self.parsed = super::auth::parse_tokens(&self.tokens, "mcp.tokens")?;
        Ok(())
    }

    /// Whether calls waiting between rounds are kept in the `[sessions]`
    /// store (`waits = "sessions"`, the default), rather than in memory.
    pub(crate) fn waits_in_sessions(&self) -> bool {
        self.waits == Waits::Sessions
    }

    /// `task_after_ms`, which `oscova mcp` on stdio applies too.
    pub(crate) fn task_after(&self) -> Option<Duration> {
        self.task_after_ms.map(Duration::from_millis)
    }

    /// `max_body_bytes`, which `oscova serve`'s A2A applies too.
    pub(crate) fn max_body_bytes(&self) -> Option<usize> {
        self.max_body_bytes
    }

    /// The section's settings on `server`, with `[auth]`'s: its tokens
    /// beside these, and OAuth.
    pub(crate) fn apply(
        &self,
        auth: &super::auth::AuthSection,
        mut server: McpHttpServer,
    ) -> McpHttpServer {
        server = auth
            .apply(server)
            .tokens(self.parsed.iter().chain(auth.tokens()).cloned())
            .allowed_origins(self.allowed_origins.iter().cloned());
        if let Some(max) = self.max_body_bytes {
            server = server.max_body_bytes(max);
        }
        if let Some(max) = self.max_in_flight {
            server = server.max_in_flight(max);
        }
        if let Some(max) = self.max_in_flight_total {
            server = server.max_in_flight_total(max);
        }
        if let Some(max) = self.max_in_flight_per_user {
            server = server.max_in_flight_per_user(max);
        }
        if let Some(max) = self.max_parked_per_user {
            server = server.max_parked_per_user(max);
        }
        if let Some(max) = self.max_sessions_per_user {
            server = server.max_sessions_per_user(max);
        }
        if let Some(max) = self.max_sessions {
            server = server.max_sessions(max);
        }
        if let Some(max) = self.max_connections {
            server = server.max_connections(max);
        }
        if let Some(max) = self.max_connections_per_peer {
            server = server.max_connections_per_peer(max);
        }
        if let Some(secs) = self.body_timeout_secs {
            server = server.body_timeout(Duration::from_secs(secs));
        }
        if let Some(secs) = self.idle_timeout_secs {
            server = server.idle_timeout(Duration::from_secs(secs));
        }
        if let Some(secs) = self.shutdown_grace_secs {
            server = server.shutdown_grace(Duration::from_secs(secs));
        }
        if let Some(after) = self.task_after() {
            server = server.task_after(after);
        }
        if let Some(capacity) = self.scope_cache {
            server = server.scope_cache(capacity);
        }
        server
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_entries_are_the_plugins_or_refused_by_name() {
        let mut section: McpSection =
            toml::from_str("[servers.notes]\ncommand = \"notes-server\"\n").unwrap();
        let checked = section.check();
        #[cfg(feature = "mcp-servers")]
        assert_eq!(checked, Ok(()));
        #[cfg(not(feature = "mcp-servers"))]
        {
            let message = checked.unwrap_err();
            assert!(message.contains("[mcp.servers.notes]"), "{message}");
            assert!(message.contains("`mcp-servers` feature"), "{message}");
        }
    }

    #[test]
    fn task_after_ms_is_checked_and_zero_means_at_once() {
        let mut section: McpSection = toml::from_str("task_after_ms = 0\n").unwrap();
        assert_eq!(section.check(), Ok(()));
        assert_eq!(section.task_after(), Some(Duration::ZERO));
        let mut section: McpSection = toml::from_str("task_after_ms = 3600001\n").unwrap();
        let message = section.check().unwrap_err();
        assert_eq!(
            message,
            "mcp.task_after_ms is 3600001; it must be 0 to 3600000"
        );
        assert_eq!(
            McpSection::default().task_after(),
            None,
            "the library's default"
        );
    }

    #[cfg(feature = "mcp-servers")]
    #[test]
    fn a_relative_ca_file_is_read_beside_the_config_file() {
        let section: McpSection = toml::from_str(
            "[servers.a]\nurl = \"https://a.example/mcp\"\nca_file = \"ca.pem\"\n\
             [servers.b]\nurl = \"https://b.example/mcp\"\nca_file = \"/etc/ssl/b.pem\"\n",
        )
        .unwrap();
        let servers = section
            .servers(Some(std::path::Path::new(
                "/home/u/.config/oscova/config.toml",
            )))
            .servers;
        assert_eq!(
            servers["a"].ca_file.as_deref(),
            Some(std::path::Path::new("/home/u/.config/oscova/ca.pem"))
        );
        assert_eq!(
            servers["b"].ca_file.as_deref(),
            Some(std::path::Path::new("/etc/ssl/b.pem"))
        );
    }
}
