use oscova_core::prelude::*;

/// This doc comment is replaced by the description.
#[plugin(
    id = "acme.search",
    name = "Acme Search",
    version = "1.2.3-beta.1",
    description = "Searches Acme's records.",
    framework = ">=0.1, <2",
)]
pub struct AcmePlugin;

impl AgentPlugin for AcmePlugin {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}

/// Searches Acme's archive.
#[plugin(id = "acme.archive")]
pub enum ArchivePlugin {
    /// The only variant.
    Only,
}

impl Default for ArchivePlugin {
    fn default() -> Self {
        Self::Only
    }
}

impl AgentPlugin for ArchivePlugin {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}

fn main() {
    let m = <AcmePlugin as oscova_core::plugin::RegisteredPlugin>::manifest();
    assert_eq!(m.id, "acme.search");
    assert_eq!(m.name, "Acme Search");
    assert_eq!(m.version, "1.2.3-beta.1");
    assert_eq!(m.description, "Searches Acme's records.");
    assert_eq!(m.framework, ">=0.1, <2");

    let m = <ArchivePlugin as oscova_core::plugin::RegisteredPlugin>::manifest();
    assert_eq!(m.name, "acme.archive");
    assert_eq!(m.description, "Searches Acme's archive.");
    assert_eq!(m.version, env!("CARGO_PKG_VERSION"));

    let ids: Vec<_> = oscova_core::plugin::PluginRegistration::linked()
        .map(|r| r.manifest().id)
        .collect();
    assert!(ids.contains(&"acme.search") && ids.contains(&"acme.archive"), "{ids:?}");
}
