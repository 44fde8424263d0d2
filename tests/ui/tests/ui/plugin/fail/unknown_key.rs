use oscova_core::prelude::*;

#[plugin(id = "acme.search", author = "Acme")]
pub struct AcmePlugin;

impl AgentPlugin for AcmePlugin {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}

fn main() {}
