use oscova_core::prelude::*;

#[plugin(name = "Acme Search")]
pub struct AcmePlugin;

impl AgentPlugin for AcmePlugin {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}

#[plugin]
pub struct BarePlugin;

impl AgentPlugin for BarePlugin {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}

fn main() {
    // No follow-on error: the types still implement `RegisteredPlugin`.
    let _ = oscova_core::linked_plugins![AcmePlugin, BarePlugin];
}
