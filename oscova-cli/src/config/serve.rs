//! The `[serve]` section: what `oscova serve` adds to MCP (`[mcp]`, its
//! users and limits, applies as for `oscova mcp --listen`).
//!
//! Rules: every key is optional. `[serve] public_url` is the base URL
//! agents elsewhere reach this server at (an `http(s)://` URL with a
//! host, checked when the file is loaded): with it and `[a2a]` agents,
//! `oscova serve` asks an agent that pushes to POST a long task's updates
//! to `{public_url}/a2a/followups/{id}`, which wakes the follower (without
//! it, tasks are polled). `[serve.a2a]` says which model provider
//! and model run the A2A tasks (`provider`, `model`: the command's
//! `--provider` and `--model` win), what the agent card says (`name`,
//! `description`, `url` the base URL clients reach the server at,
//! `[[serve.a2a.skills]]` with `id`, `name`, `description`, `tags`,
//! `examples`) and the limits `max_tasks_per_user` (tasks running at once
//! per user), `max_streams_per_user` and `stream_idle_timeout_secs`, each
//! in its `oscova_a2a::*_RANGE` (a value outside it is an error when the
//! file is loaded, naming the key). The body cap is `[mcp]
//! max_body_bytes`, for both protocols. A skill without an id
//! or a name is an error when the file is loaded.
//!
//! ```toml
//! [serve]
//! public_url = "https://agents.example.com"
//!
//! [serve.a2a]
//! provider = "openai"
//! model = "gpt-4o-mini"
//! name = "Trip planner"
//! description = "Plans trips with the user's calendar and the web"
//! url = "https://agents.example.com"
//! max_tasks_per_user = 8
//! max_streams_per_user = 16
//! stream_idle_timeout_secs = 600
//!
//! [[serve.a2a.skills]]
//! id = "plan"
//! name = "Plan a trip"
//! description = "Finds dates and places"
//! tags = ["travel"]
//! examples = ["A weekend in Lisbon in May"]
//! ```

use oscova_a2a::{
    A2aServer, CardConfig, MAX_STREAMS_PER_USER_RANGE, MAX_TASKS_PER_USER_RANGE,
    STREAM_IDLE_TIMEOUT_RANGE, Skill,
};
use serde::Deserialize;

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
    #[serde(default)]
    skills: Vec<SkillEntry>,
}

/// One `[[serve.a2a.skills]]` entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SkillEntry {
    id: String,
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    examples: Vec<String>,
}

impl ServeSection {
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
            && !MAX_TASKS_PER_USER_RANGE.contains(&max)
        {
            return Err(format!(
                "serve.a2a.max_tasks_per_user = {max} is outside {} to {}",
                MAX_TASKS_PER_USER_RANGE.start(),
                MAX_TASKS_PER_USER_RANGE.end()
            ));
        }
        if let Some(max) = a2a.max_streams_per_user
            && !MAX_STREAMS_PER_USER_RANGE.contains(&max)
        {
            return Err(format!(
                "serve.a2a.max_streams_per_user = {max} is outside {} to {}",
                MAX_STREAMS_PER_USER_RANGE.start(),
                MAX_STREAMS_PER_USER_RANGE.end()
            ));
        }
        if let Some(secs) = a2a.stream_idle_timeout_secs
            && !STREAM_IDLE_TIMEOUT_RANGE.contains(&std::time::Duration::from_secs(secs))
        {
            return Err(format!(
                "serve.a2a.stream_idle_timeout_secs = {secs} is outside 1 to {}",
                STREAM_IDLE_TIMEOUT_RANGE.end().as_secs()
            ));
        }
        for skill in &a2a.skills {
            if skill.id.trim().is_empty() || skill.name.trim().is_empty() {
                return Err("a [[serve.a2a.skills]] entry needs an id and a name".to_owned());
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

    /// The section's limits on `server`.
    pub(crate) fn apply(&self, mut server: A2aServer) -> A2aServer {
        if let Some(max) = self.a2a.max_tasks_per_user {
            server = server.max_tasks_per_user(max);
        }
        if let Some(max) = self.a2a.max_streams_per_user {
            server = server.max_streams_per_user(max);
        }
        if let Some(secs) = self.a2a.stream_idle_timeout_secs {
            server = server.stream_idle_timeout(std::time::Duration::from_secs(secs));
        }
        server
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
        card.skills = a2a
            .skills
            .iter()
            .map(|s| {
                let mut skill = Skill::new(&s.id, &s.name, &s.description);
                skill.tags = s.tags.clone();
                skill.examples = s.examples.clone();
                skill
            })
            .collect();
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
}
