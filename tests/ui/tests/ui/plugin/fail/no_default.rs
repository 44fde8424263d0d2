use oscova_core::prelude::*;

#[plugin(id = "acme.search")]
pub struct AcmePlugin {
    greeting: String,
}

impl AgentPlugin for AcmePlugin {
    fn configure(&self, _: &mut AgentPluginBuilder) {
        let _ = &self.greeting;
    }
}

fn main() {}
