use oscova_core::prelude::*;

#[plugin(id = "acme.search", framework = "not a range")]
pub struct AcmePlugin;

impl AgentPlugin for AcmePlugin {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}

fn main() {}
