//! The `[serve]` section: what `oscova serve` adds to MCP (`[mcp]`, its
//! users and limits, applies as for `oscova mcp --listen`).
//!
//! Rules: every key is optional. `[serve] public_url` is the base URL
//! agents elsewhere reach this server at (an `http(s)://` URL with a
//! host, checked when the file is loaded): with it and `[a2a]` agents,
//! `oscova serve` asks an agent that pushes to POST a long task's updates
//! to `{public_url}/a2a/followups/{id}`, which wakes the follower (without
//! it, tasks are polled); and `[mcp.servers]` with `grant =
//! "authorization_code"` get logins by link: a call of a user with no
//! grant starts a login whose redirect URI is
//! `{public_url}/oauth/mcp/callback` and carries the link to it,
//! `{public_url}/oauth/mcp/login?id=…`, where the person's token binds the
//! login to their browser (both served by `oscova serve`), to the person (MCP's `-32042`
//! URL-elicitation-required error for a client that declared URL-mode
//! elicitation). The served agent's model provider,
//! model and skills (`provider`, `model`, `[[skills]]` with `id`,
//! `name`, `description`, `tags`, `examples`; the command's `--provider`
//! and `--model` win) are named in `[a2a]` (see `a2a.rs`) or, as before,
//! in `[serve.a2a]`: one of the two places; naming any of them in both is
//! an error when the file is loaded, naming the keys. `[serve.a2a]` says
//! what the agent card says (`name`, `description`, `url` the base URL
//! clients reach the server at, `[[extended_skills]]`: skills only the
//! extended card lists, which `GetExtendedAgentCard` answers to callers
//! with a token; with none, the card says no extended card) and the limits `max_tasks_per_user`
//! (tasks running at once per user), `max_streams_per_user`,
//! `stream_idle_timeout_secs`, `max_push_configs_per_task` (webhooks on
//! one task, default 8) and `max_push_configs_per_user` (one user's
//! webhooks on tasks that have not ended, default 128; past either,
//! `UnsupportedOperationError`), each in its `oscova_a2a::Limits::*_RANGE` (a
//! value outside it is an error when the file is loaded, naming the
//! key), and `input_wait_secs`: how long an A2A task's question (a tool's,
//! or a call's approval) waits in `INPUT_REQUIRED` for the client's answer
//! before the task ends `FAILED`, expired (default a day,
//! `oscova_a2a::A2aServer::DEFAULT_INPUT_WAIT`; 1 to 2592000, thirty days,
//! `A2aServer::INPUT_WAIT_RANGE`, checked when the file is loaded). The body cap is `[mcp] max_body_bytes`, for both protocols. A
//! skill without an id or a name is an error when the file is loaded.
//!
//! ```toml
//! [serve]
//! public_url = "https://agents.example.com"
//!
//! [a2a]
//! provider = "openai"
//! model = "gpt-4o-mini"
//!
//! [[a2a.skills]]
//! id = "plan"
//! name = "Plan a trip"
//! description = "Finds dates and places"
//! tags = ["travel"]
//! examples = ["A weekend in Lisbon in May"]
//!
//! [serve.a2a]
//! name = "Trip planner"
//! description = "Plans trips with the user's calendar and the web"
//! url = "https://agents.example.com"
//! max_tasks_per_user = 8
//! max_streams_per_user = 16
//! stream_idle_timeout_secs = 600
//! max_push_configs_per_task = 4
//! max_push_configs_per_user = 64
//! input_wait_secs = 86400
//!
//! [[serve.a2a.extended_skills]]
//! id = "expenses"
//! name = "File expenses"
//! description = "Files the trip's receipts (callers with a token)"
//! ```

use oscova_a2a::model::AgentSkill;
use oscova_a2a::{A2aServer, CardConfig, Limits};
use serde::Deserialize;

use super::a2a::ServedAgent;

/// `[serve]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServeSection {
    public_url: Option<String>,
    #[serde(default)]
    a2a: A2aServeSection,
}

/// `[serve.a2a]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct A2aServeSection {
    provider: Option<String>,
    model: Option<String>,
    name: Option<String>,
    description: Option<String>,
    url: Option<String>,
    max_tasks_per_user: Option<usize>,
    max_streams_per_user: Option<usize>,
    stream_idle_timeout_secs: Option<u64>,
    max_push_configs_per_task: Option<usize>,
    max_push_configs_per_user: Option<usize>,
    input_wait_secs: Option<u64>,
    #[serde(default)]
    skills: Vec<SkillEntry>,
    #[serde(default)]
    extended_skills: Vec<SkillEntry>,
}

/// One `[[a2a.skills]]` (or `[[serve.a2a.skills]]`) entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SkillEntry {
    pub(crate) id: String,
    pub(crate) name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    examples: Vec<String>,
}

impl SkillEntry {
    /// The skill the card lists.
    fn skill(&self) -> AgentSkill {
        let mut skill = AgentSkill::new(&self.id, &self.name, &self.description);
        skill.tags = self.tags.clone();
        skill.examples = self.examples.clone();
        skill
    }
}

impl ServeSection {
    /// Takes the served agent `[a2a]` names; an error naming the keys when
    /// `[serve.a2a]` names any of them too.
    pub(crate) fn take_agent(&mut self, agent: ServedAgent) -> Result<(), String> {
        let here = ServedAgent {
            provider: self.a2a.provider.clone(),
            model: self.a2a.model.clone(),
            skills: self.a2a.skills.clone(),
        };
        let (there, here) = (agent.keys(), here.keys());
        if there.is_empty() {
            return Ok(());
        }
        if !here.is_empty() {
            let name = |section: &str, keys: &[&str]| {
                keys.iter()
                    .map(|k| format!("{section}.{k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(format!(
                "the served agent is named in both [a2a] ({}) and [serve.a2a] ({}): \
                 write provider, model and skills in one of the two, [a2a] preferred",
                name("a2a", &there),
                name("serve.a2a", &here)
            ));
        }
        self.a2a.provider = agent.provider;
        self.a2a.model = agent.model;
        self.a2a.skills = agent.skills;
        Ok(())
    }

    /// Checks what the file says, naming the key that is wrong.
    pub(crate) fn check(&self) -> Result<(), String> {
        if let Some(url) = &self.public_url {
            let parsed = reqwest::Url::parse(url.trim()).ok();
            if !parsed.is_some_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host()) {
                return Err(format!(
                    "serve.public_url = \"{url}\" is not an http(s) URL with a host"
                ));
            }
        }
        let a2a = &self.a2a;
        if let Some(max) = a2a.max_tasks_per_user
            && !Limits::MAX_TASKS_PER_USER_RANGE.contains(&max)
        {
            return Err(format!(
                "serve.a2a.max_tasks_per_user = {max} is outside {} to {}",
                Limits::MAX_TASKS_PER_USER_RANGE.start(),
                Limits::MAX_TASKS_PER_USER_RANGE.end()
            ));
        }
        if let Some(max) = a2a.max_streams_per_user
            && !Limits::MAX_STREAMS_PER_USER_RANGE.contains(&max)
        {
            return Err(format!(
                "serve.a2a.max_streams_per_user = {max} is outside {} to {}",
                Limits::MAX_STREAMS_PER_USER_RANGE.start(),
                Limits::MAX_STREAMS_PER_USER_RANGE.end()
            ));
        }
        for (key, max) in [
            ("max_push_configs_per_task", a2a.max_push_configs_per_task),
            ("max_push_configs_per_user", a2a.max_push_configs_per_user),
        ] {
            if let Some(max) = max
                && !Limits::MAX_PUSH_CONFIGS_RANGE.contains(&max)
            {
                return Err(format!(
                    "serve.a2a.{key} = {max} is outside {} to {}",
                    Limits::MAX_PUSH_CONFIGS_RANGE.start(),
                    Limits::MAX_PUSH_CONFIGS_RANGE.end()
                ));
            }
        }
        if let Some(secs) = a2a.stream_idle_timeout_secs
            && !Limits::STREAM_IDLE_TIMEOUT_RANGE.contains(&std::time::Duration::from_secs(secs))
        {
            return Err(format!(
                "serve.a2a.stream_idle_timeout_secs = {secs} is outside 1 to {}",
                Limits::STREAM_IDLE_TIMEOUT_RANGE.end().as_secs()
            ));
        }
        if let Some(secs) = a2a.input_wait_secs
            && !A2aServer::INPUT_WAIT_RANGE.contains(&std::time::Duration::from_secs(secs))
        {
            return Err(format!(
                "serve.a2a.input_wait_secs = {secs} is outside 1 to {}",
                A2aServer::INPUT_WAIT_RANGE.end().as_secs()
            ));
        }
        for skill in a2a.skills.iter().chain(&a2a.extended_skills) {
            if skill.id.trim().is_empty() || skill.name.trim().is_empty() {
                return Err("a skill ([[a2a.skills]], [[serve.a2a.skills]] or \
                     [[serve.a2a.extended_skills]]) needs an id and a name"
                    .to_owned());
            }
        }
        Ok(())
    }

    /// `[serve] public_url`, without a trailing `/`.
    pub(crate) fn public_url(&self) -> Option<&str> {
        self.public_url
            .as_deref()
            .map(|u| u.trim().trim_end_matches('/'))
    }

    /// `[serve.a2a] provider`.
    pub(crate) fn a2a_provider(&self) -> Option<&str> {
        self.a2a.provider.as_deref()
    }

    /// `[serve.a2a] model`.
    pub(crate) fn a2a_model(&self) -> Option<&str> {
        self.a2a.model.as_deref()
    }

    /// `[serve.a2a] input_wait_secs`: how long an A2A task's question
    /// waits for its answer (`A2aServer::DEFAULT_INPUT_WAIT` unless set).
    pub(crate) fn a2a_input_wait(&self) -> std::time::Duration {
        self.a2a.input_wait_secs.map_or(
            A2aServer::DEFAULT_INPUT_WAIT,
            std::time::Duration::from_secs,
        )
    }

    /// The A2A server's limits: the section's, the body cap
    /// `max_body_bytes` (`[mcp]`'s, for both protocols) when set, the
    /// defaults for the rest.
    pub(crate) fn limits(&self, max_body_bytes: Option<usize>) -> Limits {
        let mut limits = Limits::default();
        let a2a = &self.a2a;
        if let Some(max) = max_body_bytes {
            limits.max_body_bytes = max;
        }
        if let Some(max) = a2a.max_tasks_per_user {
            limits.max_tasks_per_user = max;
        }
        if let Some(max) = a2a.max_streams_per_user {
            limits.max_streams_per_user = max;
        }
        if let Some(secs) = a2a.stream_idle_timeout_secs {
            limits.stream_idle_timeout = std::time::Duration::from_secs(secs);
        }
        if let Some(max) = a2a.max_push_configs_per_task {
            limits.max_push_configs_per_task = max;
        }
        if let Some(max) = a2a.max_push_configs_per_user {
            limits.max_push_configs_per_user = max;
        }
        limits
    }

    /// The agent card's settings, `name` and `version` the launcher's
    /// unless the section says otherwise.
    pub(crate) fn card(&self, name: &str, version: &str) -> CardConfig {
        let a2a = &self.a2a;
        let mut card = CardConfig::default();
        card.name = a2a.name.clone().unwrap_or_else(|| name.to_owned());
        card.version = version.to_owned();
        if let Some(description) = &a2a.description {
            card.description = description.clone();
        }
        card.url = a2a.url.clone();
        card.skills = a2a.skills.iter().map(SkillEntry::skill).collect();
        card.extended_skills = a2a.extended_skills.iter().map(SkillEntry::skill).collect();
        card
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_is_checked_when_loaded() {
        let section: ServeSection = toml::from_str("[a2a]\nmax_tasks_per_user = 0\n").unwrap();
        assert!(
            section
                .check()
                .unwrap_err()
                .contains("serve.a2a.max_tasks_per_user")
        );
        for (key, value) in [
            ("max_streams_per_user", "0"),
            ("stream_idle_timeout_secs", "0"),
            ("max_push_configs_per_task", "0"),
            ("max_push_configs_per_user", "0"),
            ("input_wait_secs", "0"),
            ("input_wait_secs", "2592001"),
        ] {
            let section: ServeSection =
                toml::from_str(&format!("[a2a]\n{key} = {value}\n")).unwrap();
            assert!(section.check().unwrap_err().contains(key), "{key}");
        }
        let section: ServeSection =
            toml::from_str("[[a2a.skills]]\nid = \"\"\nname = \"x\"\n").unwrap();
        assert!(section.check().is_err());
        let section: ServeSection = toml::from_str(
            "[a2a]\nprovider = \"openai\"\n[[a2a.skills]]\nid = \"plan\"\nname = \"Plan\"\n",
        )
        .unwrap();
        assert_eq!(section.check(), Ok(()));
        assert_eq!(section.a2a_provider(), Some("openai"));
        assert_eq!(section.card("oscova", "1").skills[0].id, "plan");
        assert!(toml::from_str::<ServeSection>("[a2a]\nbogus = 1\n").is_err());
    }

    #[test]
    fn the_served_agent_is_named_in_one_place_only() {
        let from_a2a = |text: &str| toml::from_str::<super::super::a2a::A2aSection>(text).unwrap();
        // From [a2a], into an empty [serve.a2a].
        let mut section: ServeSection = toml::from_str("[a2a]\nname = \"Agent\"\n").unwrap();
        let agent = from_a2a("provider = \"openai\"\n[[skills]]\nid = \"plan\"\nname = \"Plan\"\n");
        section.take_agent(agent.served).unwrap();
        assert_eq!(section.a2a_provider(), Some("openai"));
        assert_eq!(section.card("oscova", "1").skills[0].id, "plan");
        assert_eq!(section.card("oscova", "1").name, "Agent");
        // Nothing in [a2a]: [serve.a2a]'s stay.
        let mut section: ServeSection = toml::from_str("[a2a]\nmodel = \"m\"\n").unwrap();
        section.take_agent(from_a2a("").served).unwrap();
        assert_eq!(section.a2a_model(), Some("m"));
        // Both: an error naming the keys of each.
        let mut section: ServeSection = toml::from_str("[a2a]\nmodel = \"m\"\n").unwrap();
        let message = section
            .take_agent(from_a2a("provider = \"openai\"\n").served)
            .unwrap_err();
        assert!(
            message.contains("a2a.provider") && message.contains("serve.a2a.model"),
            "{message}"
        );
    }
}
