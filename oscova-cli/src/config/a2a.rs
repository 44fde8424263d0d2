//! The `[a2a]` section: the agent `oscova serve` serves over A2A (its
//! model provider, model and skills), and the A2A agents called through
//! the `oscova.a2a` plugin's tools (feature `a2a-agents`).
//!
//! Rules: the section is split when the file is loaded. `provider`,
//! `model` and `[[a2a.skills]]` (`id`, `name`, `description`, `tags`,
//! `examples`) name the served agent and are read by the CLI in every
//! build, whatever its features; they may instead be written in
//! `[serve.a2a]` (as before), but not in both: a file that names any of
//! them in both sections is an error naming the keys. Every other key is
//! the plugin's own configuration (`oscova_plugin_a2a::A2aConfig`:
//! unknown keys refused, URLs, header names and seconds checked when the
//! file is loaded, exit 2 naming the key). In a build without the
//! feature, any of those other keys is an error when the file is loaded,
//! naming the feature, never silently ignored.
//!
//! ```toml
//! [a2a]
//! provider = "openai"          # the served agent: `oscova serve`'s tasks
//! model = "gpt-4o-mini"
//! max_hops = 4                 # the rest: the oscova.a2a plugin's
//! offline = false
//! wait_secs = 30
//! pending_dir = "a2a"   # relative to this file; default: the data dir's oscova/a2a
//!
//! [[a2a.skills]]
//! id = "plan"
//! name = "Plan a trip"
//! description = "Finds dates and places"
//!
//! [a2a.agents.research]
//! url = "http://127.0.0.1:8000"
//! credential_header = { Authorization = "research.bearer" }
//! timeout_secs = 60
//! ```

use serde::Deserialize;

use super::serve::SkillEntry;

/// The keys of `[a2a]` that name the served agent.
pub(crate) const SERVED_KEYS: [&str; 3] = ["provider", "model", "skills"];

/// The served agent as `[a2a]` (or `[serve.a2a]`) names it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServedAgent {
    pub(crate) provider: Option<String>,
    pub(crate) model: Option<String>,
    #[serde(default)]
    pub(crate) skills: Vec<SkillEntry>,
}

impl ServedAgent {
    /// The keys it sets.
    pub(crate) fn keys(&self) -> Vec<&'static str> {
        let set = [
            self.provider.is_some(),
            self.model.is_some(),
            !self.skills.is_empty(),
        ];
        SERVED_KEYS
            .into_iter()
            .zip(set)
            .filter_map(|(key, set)| set.then_some(key))
            .collect()
    }
}

/// The plugin's part of `[a2a]`: its configuration.
#[cfg(feature = "a2a-agents")]
pub(crate) type AgentsPart = oscova_plugin_a2a::A2aConfig;
/// The plugin's part of `[a2a]`: any key, refused by [`check`].
#[cfg(not(feature = "a2a-agents"))]
pub(crate) type AgentsPart = Option<toml::Table>;

/// `[a2a]` as written, split: the served agent, the plugin's part.
#[derive(Debug, Default)]
pub(crate) struct A2aSection {
    pub(crate) served: ServedAgent,
    pub(crate) agents: AgentsPart,
}

impl<'de> Deserialize<'de> for A2aSection {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let mut table = toml::Table::deserialize(deserializer)?;
        let mut served = toml::Table::new();
        for key in SERVED_KEYS {
            if let Some(value) = table.remove(key) {
                served.insert(key.to_owned(), value);
            }
        }
        let served: ServedAgent = toml::Value::Table(served)
            .try_into()
            .map_err(|e| D::Error::custom(format!("[a2a]: {e}")))?;
        #[cfg(feature = "a2a-agents")]
        let agents: AgentsPart = toml::Value::Table(table)
            .try_into()
            .map_err(|e| D::Error::custom(format!("[a2a]: {e}")))?;
        #[cfg(not(feature = "a2a-agents"))]
        let agents: AgentsPart = (!table.is_empty()).then_some(table);
        Ok(Self { served, agents })
    }
}

/// Where tasks still running are kept when the file does not say: the
/// platform data directory's `oscova/a2a`; a relative `pending_dir` is
/// relative to the config file's directory.
#[cfg(feature = "a2a-agents")]
pub(crate) fn resolve_pending_dir(section: &mut AgentsPart, source: Option<&std::path::Path>) {
    section.pending_dir = match section.pending_dir.take() {
        Some(dir) if dir.is_relative() => Some(
            source
                .and_then(std::path::Path::parent)
                .map_or_else(|| dir.clone(), |base| base.join(&dir)),
        ),
        Some(dir) => Some(dir),
        None => {
            directories::ProjectDirs::from("", "", "oscova").map(|dirs| dirs.data_dir().join("a2a"))
        }
    };
}

/// Checks the plugin's part; the message names the key at fault, or the
/// feature a build without it lacks (naming the keys it would ignore).
pub(crate) fn check(section: &A2aSection) -> Result<(), String> {
    #[cfg(feature = "a2a-agents")]
    return section.agents.check().map_err(|e| e.to_string());
    #[cfg(not(feature = "a2a-agents"))]
    match &section.agents {
        Some(keys) => Err(format!(
            "[a2a] {}: A2A agents need the `a2a-agents` feature, which this build of the CLI \
             lacks (only {} are read without it)",
            keys.keys().cloned().collect::<Vec<_>>().join(", "),
            SERVED_KEYS.join(", ")
        )),
        None => Ok(()),
    }
}

#[cfg(all(test, feature = "a2a-agents"))]
mod tests {
    use super::*;

    #[test]
    fn the_section_is_the_plugins_and_checked_by_key() {
        let section: A2aSection = toml::from_str(
            "[agents.research]\nurl = \"http://127.0.0.1:8000\"\ncredential_header = { Authorization = \"research.bearer\" }\n",
        )
        .unwrap();
        assert_eq!(check(&section), Ok(()));
        assert!(section.agents.agents.contains_key("research"));
        let bad: A2aSection =
            toml::from_str("[agents.r]\nurl = \"http://127.0.0.1:1\"\ntimeout_secs = 0\n").unwrap();
        let message = check(&bad).unwrap_err();
        assert!(message.contains("a2a.agents.r.timeout_secs"), "{message}");
        assert!(toml::from_str::<A2aSection>("[agents.r]\nurl = \"x\"\nurll = 1\n").is_err());
    }

    #[test]
    fn pending_dir_is_relative_to_the_file_and_defaults_to_the_data_dir() {
        let mut section: AgentsPart = toml::from_str("pending_dir = \"tasks\"\n").unwrap();
        resolve_pending_dir(
            &mut section,
            Some(std::path::Path::new("/etc/oscova/config.toml")),
        );
        assert_eq!(
            section.pending_dir.as_deref(),
            Some(std::path::Path::new("/etc/oscova/tasks"))
        );
        let mut section = AgentsPart::default();
        resolve_pending_dir(&mut section, None);
        let dir = section.pending_dir.unwrap();
        assert!(dir.ends_with("oscova/a2a"), "{}", dir.display());
    }
}

#[cfg(test)]
mod split_tests {
    use super::*;

    #[test]
    fn the_served_agents_keys_are_read_apart_from_the_plugins() {
        let section: A2aSection = toml::from_str(
            "provider = \"openai\"\nmodel = \"m\"\n[[skills]]\nid = \"plan\"\nname = \"Plan\"\n",
        )
        .unwrap();
        assert_eq!(section.served.provider.as_deref(), Some("openai"));
        assert_eq!(section.served.keys(), SERVED_KEYS);
        assert_eq!(section.served.skills[0].id, "plan");
        // Nothing else: the plugin's part is empty, so any build takes it.
        assert_eq!(check(&section), Ok(()));
        let error =
            toml::from_str::<A2aSection>("[[skills]]\nid = \"x\"\nname = \"x\"\nbogus = 1\n")
                .unwrap_err();
        assert!(error.to_string().contains("bogus"), "{error}");
    }

    #[cfg(not(feature = "a2a-agents"))]
    #[test]
    fn without_the_feature_the_plugins_keys_are_refused_naming_it() {
        let section: A2aSection =
            toml::from_str("provider = \"openai\"\n[agents.r]\nurl = \"http://127.0.0.1:1\"\n")
                .unwrap();
        let message = check(&section).unwrap_err();
        assert!(
            message.contains("a2a-agents") && message.contains("agents"),
            "{message}"
        );
    }
}
