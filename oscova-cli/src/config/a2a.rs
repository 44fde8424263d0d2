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
//! pending_dir = "a2a"   # relative to this file; default: the data dir's oscova/a2a
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

/// Where tasks still running are kept when the file does not say: the
/// platform data directory's `oscova/a2a`; a relative `pending_dir` is
/// relative to the config file's directory.
#[cfg(feature = "a2a-agents")]
pub(crate) fn resolve_pending_dir(section: &mut A2aSection, source: Option<&std::path::Path>) {
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

    #[test]
    fn pending_dir_is_relative_to_the_file_and_defaults_to_the_data_dir() {
        let mut section: A2aSection = toml::from_str("pending_dir = \"tasks\"\n").unwrap();
        resolve_pending_dir(
            &mut section,
            Some(std::path::Path::new("/etc/oscova/config.toml")),
        );
        assert_eq!(
            section.pending_dir.as_deref(),
            Some(std::path::Path::new("/etc/oscova/tasks"))
        );
        let mut section = A2aSection::default();
        resolve_pending_dir(&mut section, None);
        let dir = section.pending_dir.unwrap();
        assert!(dir.ends_with("oscova/a2a"), "{}", dir.display());
    }
}
