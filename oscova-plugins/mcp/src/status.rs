//! What `oscova plugins` and an embedding host can see about each server:
//! how it is reached, whether its catalog is pinned, what its `network`
//! means on this platform, and what happened to it since start-up.
//!
//! Rules: events are kept in order, at most [`MAX_EVENTS`] (the oldest
//! dropped); every event is logged through `tracing` when it happens.
//! Event text is redacted by whoever records it.

use std::sync::Mutex;

use oscova_core::NetworkScope;

use crate::config::ServerConfig;
use crate::connect::network_isolation_available;

/// How many events a server keeps.
pub const MAX_EVENTS: usize = 64;

/// One server's status.
#[derive(Debug)]
pub struct ServerStatus {
    name: String,
    summary: String,
    events: Mutex<Vec<String>>,
}

impl ServerStatus {
    pub(crate) fn new(name: &str, summary: String) -> Self {
        Self {
            name: name.to_owned(),
            summary,
            events: Mutex::new(Vec::new()),
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// One line: transport, sharing, tools, pin, network enforcement.
    pub fn summary(&self) -> &str {
        &self.summary
    }

    /// What happened since start-up (failures, restarts, refused tools).
    pub fn events(&self) -> Vec<String> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }

    pub(crate) fn event(&self, message: &str) {
        tracing::warn!(server = %self.name, "{message}");
        if let Ok(mut events) = self.events.lock() {
            if events.len() == MAX_EVENTS {
                events.remove(0);
            }
            events.push(message.to_owned());
        }
    }
}

/// Every configured server's status ([`McpPlugin::status`](crate::McpPlugin::status)).
/// A clone sees the same servers; a host that wants it among its services
/// adds one (`PluginHost::builder().service(plugin.status().clone())`, as
/// the `oscova` command does).
#[derive(Debug, Default, Clone)]
pub struct McpStatus {
    pub(crate) servers: Vec<std::sync::Arc<ServerStatus>>,
}

impl McpStatus {
    /// The servers, in configuration order.
    pub fn servers(&self) -> impl Iterator<Item = &ServerStatus> {
        self.servers.iter().map(|s| &**s)
    }
}

/// The status line `oscova plugins` shows for a server.
pub(crate) fn summary(config: &ServerConfig, tools: usize, pin: Option<&str>) -> String {
    let transport = match (&config.command, &config.url) {
        (Some(command), _) => format!("stdio `{command}`"),
        (None, Some(url)) => format!("url {url}"),
        (None, None) => "unconfigured".to_owned(),
    };
    let sharing = if config.per_user {
        "one process per user"
    } else {
        "shared"
    };
    let pin = match pin {
        Some(hash) => format!("pinned {hash}"),
        None => "listed at start (not pinned)".to_owned(),
    };
    let network = match config.network {
        NetworkScope::None if config.is_stdio() && network_isolation_available() => {
            "network none: enforced (empty network namespace; seccomp: no unix sockets)"
        }
        NetworkScope::None => "network none: declared only (this platform cannot isolate it)",
        NetworkScope::Local => "network local: declared",
        NetworkScope::Internet => "network internet: declared",
    };
    let oauth = match &config.oauth {
        Some(client) => format!(
            ", OAuth {} from {}",
            if client.is_user_grant() {
                "authorization code (each user's login)"
            } else {
                "client credentials"
            },
            client.issuer.as_deref().map_or(
                "an authorization server on its own origin".to_owned(),
                |i| { format!("`{i}`") }
            )
        ),
        None => String::new(),
    };
    format!("{transport}, {sharing}, {tools} tools, {pin}, {network}{oauth}")
}
