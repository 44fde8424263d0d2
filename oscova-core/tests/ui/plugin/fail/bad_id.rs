use oscova_core::prelude::*;

#[plugin(id = "Acme Search")]
pub struct Spaces;

#[plugin(id = "a__b")]
pub struct Separator;

#[plugin(id = "")]
pub struct Empty;

impl AgentPlugin for Spaces {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}
impl AgentPlugin for Separator {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}
impl AgentPlugin for Empty {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}

fn main() {
    // No follow-on error: the types still implement `PluginInfo`.
    let _ = oscova_core::linked_plugins![Spaces, Separator, Empty];
}
