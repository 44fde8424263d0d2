// A plugin with fields is created through `Default`.
use oscova_core::prelude::*;

#[derive(Default)]
#[plugin(id = "acme.config")]
pub struct ConfiguredPlugin {
    greeting: String,
}

impl AgentPlugin for ConfiguredPlugin {
    fn configure(&self, _: &mut AgentPluginBuilder) {
        assert!(self.greeting.is_empty());
    }
}

fn main() {
    let registration = oscova_core::linked_plugins![ConfiguredPlugin][0];
    let plugin = registration.create();
    plugin.configure(&mut AgentPluginBuilder::new());
}
