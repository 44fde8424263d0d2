use oscova_core::prelude::*;

#[plugin(id = "acme.search", version = "1.2")]
pub struct AcmePlugin;

impl AgentPlugin for AcmePlugin {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}

#[plugin(id = "acme.other", version = 1)]
pub struct OtherPlugin;

impl AgentPlugin for OtherPlugin {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}

fn main() {}
