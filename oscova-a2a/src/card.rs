//! The agent card: what `/.well-known/agent-card.json` says.
//!
//! Rules: the card is built from the operator's [`CardConfig`] and the
//! address clients reach the server at ([`CardConfig::url`]); it lists the
//! JSON-RPC binding first (at `{url}/`), then HTTP+JSON (at `{url}`), says protocol version 1.0, and,
//! when the server has tokens, a bearer `securitySchemes` entry required
//! for every call. The card itself is public (no token needed), as the
//! specification has it. With [`CardConfig::extended_skills`], the card
//! says `capabilities.extendedAgentCard`, and `GetExtendedAgentCard`
//! (behind the users' tokens, like every method) answers the same card
//! with those skills after the public ones; without them it is the
//! specification's `ExtendedAgentCardNotConfiguredError` (-32007).

use serde_json::{Value, json};

use crate::model::{AgentCapabilities, AgentCard, AgentInterface, AgentSkill, PROTOCOL_VERSION};

/// What the operator says about the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CardConfig {
    /// The agent's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its version.
    pub version: String,
    /// The base URL clients reach the server at (`http://host:port`);
    /// `None`: `http://` and the bound address.
    pub url: Option<String>,
    /// Its skills.
    pub skills: Vec<AgentSkill>,
    /// Skills only the extended card lists (`GetExtendedAgentCard`, for
    /// callers with a token); empty: no extended card.
    pub extended_skills: Vec<AgentSkill>,
}

impl Default for CardConfig {
    fn default() -> Self {
        Self {
            name: "oscova".into(),
            description: "An Oscova agent: each context is a session, each task a run of its model with the user's tools.".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            url: None,
            skills: Vec::new(),
            extended_skills: Vec::new(),
        }
    }
}

/// The extended card as JSON (the public card with the extended skills
/// after its own), or `None` when there are no extended skills.
pub(crate) fn extended_card_json(config: &CardConfig, base: &str, bearer: bool) -> Option<Value> {
    if config.extended_skills.is_empty() {
        return None;
    }
    let mut card = card(config, base, bearer);
    card.skills.extend(config.extended_skills.iter().cloned());
    Some(to_json(&card))
}

/// The card as JSON, for a server reached at `base` (no trailing slash).
pub(crate) fn card_json(config: &CardConfig, base: &str, bearer: bool) -> Value {
    to_json(&card(config, base, bearer))
}

fn to_json(card: &AgentCard) -> Value {
    // A card of strings, lists and booleans always serializes.
    serde_json::to_value(card).unwrap_or(Value::Null)
}

fn card(config: &CardConfig, base: &str, bearer: bool) -> AgentCard {
    let mut card = AgentCard {
        name: config.name.clone(),
        description: config.description.clone(),
        version: config.version.clone(),
        supported_interfaces: vec![
            AgentInterface::new(format!("{base}/"), "JSONRPC", PROTOCOL_VERSION),
            AgentInterface::new(base, "HTTP+JSON", PROTOCOL_VERSION),
        ],
        capabilities: AgentCapabilities {
            streaming: true,
            push_notifications: true,
            extended_agent_card: !config.extended_skills.is_empty(),
        },
        default_input_modes: vec!["text/plain".to_owned()],
        default_output_modes: vec!["text/plain".to_owned()],
        skills: config.skills.clone(),
        security_schemes: None,
        security_requirements: None,
    };
    if bearer {
        card.security_schemes = Some(json!({
            "bearer": {"httpAuthSecurityScheme": {
                "scheme": "Bearer",
                "description": "Authorization: Bearer <token>, a token the operator gave you",
            }}
        }));
        card.security_requirements = Some(json!([{"schemes": {"bearer": {"list": []}}}]));
    }
    card
}
