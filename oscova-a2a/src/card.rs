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

/// One skill the card advertises.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Skill {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Tags.
    pub tags: Vec<String>,
    /// Example prompts.
    pub examples: Vec<String>,
}

impl Skill {
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
    pub skills: Vec<Skill>,
    /// Skills only the extended card lists (`GetExtendedAgentCard`, for
    /// callers with a token); empty: no extended card.
    pub extended_skills: Vec<Skill>,
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
    let mut card = card_json(config, base, bearer);
    if let Some(skills) = card["skills"].as_array_mut() {
        skills.extend(config.extended_skills.iter().map(skill_json));
    }
    Some(card)
}

fn skill_json(s: &Skill) -> Value {
    json!({
        "id": s.id, "name": s.name, "description": s.description,
        "tags": s.tags, "examples": s.examples,
    })
}

/// The card as JSON, for a server reached at `base` (no trailing slash).
pub(crate) fn card_json(config: &CardConfig, base: &str, bearer: bool) -> Value {
    let skills: Vec<Value> = config.skills.iter().map(skill_json).collect();
    let mut card = json!({
        "name": config.name,
        "description": config.description,
        "version": config.version,
        "supportedInterfaces": [
            {"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": base, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ],
        "capabilities": {
            "streaming": true,
            "pushNotifications": true,
            "extendedAgentCard": !config.extended_skills.is_empty(),
        },
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": skills,
    });
    if bearer {
        card["securitySchemes"] = json!({
            "bearer": {"httpAuthSecurityScheme": {
                "scheme": "Bearer",
                "description": "Authorization: Bearer <token>, a token the operator gave you",
            }}
        });
        card["securityRequirements"] = json!([{"schemes": {"bearer": {"list": []}}}]);
    }
    card
}
