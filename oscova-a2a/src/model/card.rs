//! The agent card (`/.well-known/agent-card.json`) as the protocol spells
//! it: what the server publishes and the client reads.
//!
//! Rules: every field a peer may leave out reads as its empty value; a
//! skill's `tags` and `examples` are always written (the specification
//! requires `tags`); the security entries are kept as the JSON they are,
//! since this crate names one scheme (bearer) and reads none.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An agent card.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentCard {
    /// The agent's name.
    #[serde(default)]
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// Its version.
    #[serde(default)]
    pub version: String,
    /// Where and how it is reached, the preferred first.
    #[serde(default)]
    pub supported_interfaces: Vec<AgentInterface>,
    /// What it can do beyond a request and its answer.
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// The media types it reads.
    #[serde(default)]
    pub default_input_modes: Vec<String>,
    /// The media types it writes.
    #[serde(default)]
    pub default_output_modes: Vec<String>,
    /// Its skills.
    #[serde(default)]
    pub skills: Vec<AgentSkill>,
    /// The security schemes it accepts, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_schemes: Option<Value>,
    /// Which schemes a request needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_requirements: Option<Value>,
}

/// One `supportedInterfaces` entry: a URL, its binding and version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentInterface {
    /// Where requests go.
    pub url: String,
    /// `JSONRPC`, `HTTP+JSON` or another binding.
    #[serde(default)]
    pub protocol_binding: String,
    /// The protocol version (`1.0`).
    #[serde(default)]
    pub protocol_version: String,
}

impl AgentInterface {
    /// An interface at `url` over `binding`, version `version`.
    pub fn new(url: impl Into<String>, binding: &str, version: &str) -> Self {
        Self {
            url: url.into(),
            protocol_binding: binding.to_owned(),
            protocol_version: version.to_owned(),
        }
    }
}

/// What an agent can do beyond a request and its answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentCapabilities {
    /// It answers `SendStreamingMessage` and `SubscribeToTask`.
    #[serde(default)]
    pub streaming: bool,
    /// It POSTs a task's updates to the client's webhooks.
    #[serde(default)]
    pub push_notifications: bool,
    /// It answers `GetExtendedAgentCard` to callers with a token.
    #[serde(default)]
    pub extended_agent_card: bool,
}

/// One skill an agent advertises.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentSkill {
    /// Its id.
    #[serde(default)]
    pub id: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// Tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Example prompts.
    #[serde(default)]
    pub examples: Vec<String>,
}

impl AgentSkill {
    /// A skill with an id, a name and a description.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            description: description.into(),
            ..Self::default()
        }
    }
}
