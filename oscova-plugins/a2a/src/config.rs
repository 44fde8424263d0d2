//! The configuration of A2A agents: the `[a2a]` section of the CLI's TOML
//! (`[a2a.agents.NAME]` tables), or the same values through
//! [`AgentConfig`]'s builder methods for an embedding host.
//!
//! Rules: unknown keys are refused (a misspelt `credential_heder` must not
//! quietly send no credential); credentials are named by key, never
//! written here; every number is checked when the configuration is
//! ([`A2aConfig::check`]), so a bad value is an error at start-up naming
//! the key, never a panic later.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

/// The default hop limit ([`A2aConfig::max_hops`]).
pub const DEFAULT_MAX_HOPS: u32 = 4;
/// The default time `send` waits for a task to finish ([`A2aConfig::wait_secs`]).
pub const DEFAULT_WAIT: Duration = Duration::from_secs(30);
/// The default bound on one request to an agent ([`AgentConfig::timeout_secs`]).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// `[a2a]`: the agents and the rules for every call to them.
///
/// ```
/// use oscova_plugin_a2a::{A2aConfig, AgentConfig};
///
/// let mut config = A2aConfig::default();
/// config.agents.insert(
///     "research".into(),
///     AgentConfig::new("http://127.0.0.1:9999")
///         .credential_header("Authorization", "research.bearer"),
/// );
/// assert!(config.check().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct A2aConfig {
    /// The agents, by name (what the tools' `agent` argument names).
    #[serde(default)]
    pub agents: BTreeMap<String, AgentConfig>,
    /// The most hops a message may have made: a call made while handling a
    /// message that arrived with `max_hops` hops or more is refused before
    /// any connection (default [`DEFAULT_MAX_HOPS`]).
    #[serde(default = "default_max_hops")]
    pub max_hops: u32,
    /// Only agents on this machine: an agent whose URL does not name this
    /// machine is refused before any connection, as offline model and
    /// speech endpoints are.
    #[serde(default)]
    pub offline: bool,
    /// How long `send` follows a task that is still running before it
    /// returns the task's id and state (default 30 s; a call's
    /// `wait_secs` may lower it).
    #[serde(default)]
    pub wait_secs: Option<f64>,
    /// Where the tasks still running when a call returned are kept, one
    /// file per user, so `status` without a `task_id` follows them, after
    /// a restart too, and a host's [`Follower`](crate::follow::Follower)
    /// delivers their results to the sessions that sent them. Unset: not kept (the `oscova` CLI's default is
    /// `${XDG_DATA_HOME:-~/.local/share}/oscova/a2a`).
    #[serde(default)]
    pub pending_dir: Option<PathBuf>,
    /// Where push webhooks reach this host (a base URL, such as `oscova
    /// serve`'s `[serve] public_url`): set by a host that serves the
    /// follow-up route (`{push_url}/a2a/followups/{id}`) and runs a
    /// [`Follower`](crate::follow::Follower), never read from `[a2a]`.
    /// With it, `send` asks an agent whose card offers push notifications
    /// to POST a long task's updates there (see the crate's README).
    #[serde(skip)]
    pub push_url: Option<String>,
}

fn default_max_hops() -> u32 {
    DEFAULT_MAX_HOPS
}

impl Default for A2aConfig {
    fn default() -> Self {
        Self {
            agents: BTreeMap::new(),
            max_hops: DEFAULT_MAX_HOPS,
            offline: false,
            wait_secs: None,
            pending_dir: None,
            push_url: None,
        }
    }
}

/// One `[a2a.agents.NAME]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// Where the agent is: its card is fetched from
    /// `URL/.well-known/agent-card.json`, and the card's interface must be
    /// on the same scheme, host and port.
    pub url: String,
    /// Headers set from the calling user's credentials: header → key. An
    /// `Authorization` header gets `Bearer <credential>`.
    #[serde(default)]
    pub credential_header: BTreeMap<String, String>,
    /// Seconds one request to the agent may take (default 60).
    #[serde(default)]
    pub timeout_secs: Option<f64>,
}

impl AgentConfig {
    /// An agent at `url`.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            credential_header: BTreeMap::new(),
            timeout_secs: None,
        }
    }

    /// Sets header `header` from the user's credential `key`.
    pub fn credential_header(mut self, header: impl Into<String>, key: impl Into<String>) -> Self {
        self.credential_header.insert(header.into(), key.into());
        self
    }

    /// Bounds each request to the agent.
    pub fn timeout_secs(mut self, seconds: f64) -> Self {
        self.timeout_secs = Some(seconds);
        self
    }

    /// The bound on one request.
    pub fn timeout(&self) -> Duration {
        self.timeout_secs
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .unwrap_or(DEFAULT_TIMEOUT)
    }
}

/// What is wrong with the configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A URL that is not `http://` or `https://` with a host.
    #[error("`a2a.agents.{agent}.url`: `{url}` is not an http(s) URL with a host")]
    Url {
        /// The agent.
        agent: String,
        /// The URL as written.
        url: String,
    },
    /// A number of seconds that is not positive and finite (at most a day).
    #[error("`{key}` must be a number of seconds above 0 and at most 86400")]
    Seconds {
        /// The key.
        key: String,
    },
    /// A header name that is not a valid HTTP header name.
    #[error("`a2a.agents.{agent}.credential_header`: `{header}` is not a header name")]
    Header {
        /// The agent.
        agent: String,
        /// The header as written.
        header: String,
    },
}

impl A2aConfig {
    /// Checks every agent's URL, header names and numbers.
    pub fn check(&self) -> Result<(), ConfigError> {
        seconds("a2a.wait_secs", self.wait_secs)?;
        for (name, agent) in &self.agents {
            let parsed = reqwest::Url::parse(agent.url.trim()).ok();
            let ok = parsed
                .as_ref()
                .is_some_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host());
            if !ok {
                return Err(ConfigError::Url {
                    agent: name.clone(),
                    url: agent.url.clone(),
                });
            }
            seconds(
                &format!("a2a.agents.{name}.timeout_secs"),
                agent.timeout_secs,
            )?;
            for header in agent.credential_header.keys() {
                if reqwest::header::HeaderName::from_bytes(header.as_bytes()).is_err() {
                    return Err(ConfigError::Header {
                        agent: name.clone(),
                        header: header.clone(),
                    });
                }
            }
        }
        Ok(())
    }

    /// The agent configured as `name`, checked against the offline rule:
    /// an unknown name is an error naming the known ones, and, when
    /// `offline`, an agent whose endpoint is not on this machine is
    /// refused before any connection.
    pub(crate) fn agent(&self, name: &str) -> Result<&AgentConfig, crate::error::ClientError> {
        use crate::error::ClientError;
        let agent = self
            .agents
            .get(name)
            .ok_or_else(|| ClientError::UnknownAgent {
                name: name.to_owned(),
                known: self
                    .agents
                    .keys()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        if self.offline && !oscova_core::locality::is_local_endpoint(agent.url.trim()) {
            return Err(ClientError::Offline {
                agent: name.to_owned(),
                url: agent.url.trim().to_owned(),
            });
        }
        Ok(agent)
    }

    /// How long `send` follows a running task.
    pub fn wait(&self) -> Duration {
        self.wait_secs
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .unwrap_or(DEFAULT_WAIT)
    }
}

fn seconds(key: &str, value: Option<f64>) -> Result<(), ConfigError> {
    match value {
        Some(s) if !(s.is_finite() && s > 0.0 && s <= 86_400.0) => Err(ConfigError::Seconds {
            key: key.to_owned(),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_urls_headers_and_numbers_are_refused_by_key() {
        let mut config = A2aConfig::default();
        config
            .agents
            .insert("x".into(), AgentConfig::new("ftp://127.0.0.1/"));
        assert!(matches!(config.check(), Err(ConfigError::Url { .. })));
        config.agents.insert(
            "x".into(),
            AgentConfig::new("http://127.0.0.1:1").timeout_secs(-1.0),
        );
        let message = config.check().unwrap_err().to_string();
        assert!(message.contains("a2a.agents.x.timeout_secs"), "{message}");
        config.agents.insert(
            "x".into(),
            AgentConfig::new("http://127.0.0.1:1").credential_header("Bad Header", "k"),
        );
        assert!(matches!(config.check(), Err(ConfigError::Header { .. })));
        config
            .agents
            .insert("x".into(), AgentConfig::new("http://127.0.0.1:1"));
        assert_eq!(config.check(), Ok(()));
        config.wait_secs = Some(f64::NAN);
        assert!(matches!(config.check(), Err(ConfigError::Seconds { .. })));
    }
}
