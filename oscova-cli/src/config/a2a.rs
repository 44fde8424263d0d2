//! The `[a2a]` section: A2A agents called through the `oscova.a2a`
//! plugin's tools (feature `a2a-agents`).
//!
//! Rules: the section is the plugin's own configuration
//! (`oscova_plugin_a2a::A2aConfig`: unknown keys refused, URLs, header
//! names and seconds checked when the file is loaded, exit 2 naming the
//! key). In a build without the feature, any `[a2a]` section is an error
//! when the file is loaded, naming the feature, never silently ignored.
//!
//! ```toml
//! [a2a]
//! max_hops = 4
//! offline = false
//! wait_secs = 30
//!
//! [a2a.agents.research]
//! url = "http://127.0.0.1:8000"
//! credential_header = { Authorization = "research.bearer" }
//! timeout_secs = 60
//! ```

/// `[a2a]` as written: the plugin's configuration.
#[cfg(feature = "a2a-agents")]
pub(crate) type A2aSection = oscova_plugin_a2a::A2aConfig;
/// `[a2a]` as written: anything, refused by [`check`].
#[cfg(not(feature = "a2a-agents"))]
pub(crate) type A2aSection = Option<toml::Value>;

/// Checks the section; the message names the key at fault, or the
/// feature a build without it lacks.
pub(crate) fn check(section: &A2aSection) -> Result<(), String> {
    #[cfg(feature = "a2a-agents")]
    return section.check().map_err(|e| e.to_string());
    #[cfg(not(feature = "a2a-agents"))]
    match section {
        Some(_) => Err(
            "[a2a]: A2A agents need the `a2a-agents` feature, which this build of the CLI lacks"
                .to_owned(),
        ),
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
        let bad: A2aSection =
            toml::from_str("[agents.r]\nurl = \"http://127.0.0.1:1\"\ntimeout_secs = 0\n").unwrap();
        let message = check(&bad).unwrap_err();
        assert!(message.contains("a2a.agents.r.timeout_secs"), "{message}");
        assert!(toml::from_str::<A2aSection>("[agents.r]\nurl = \"x\"\nurll = 1\n").is_err());
    }
}
