// Mistakes in #[plugin(...)] that are not covered by a file of their own,
// all reported at once; code naming the plugins still compiles.
use oscova_core::prelude::*;

#[plugin(id)]
pub struct NoValue;

#[plugin(id = "acme.one", id = "acme.two")]
pub struct Twice;

#[plugin(id = acme_search, description = "fine")]
pub struct NotAString;

impl AgentPlugin for NoValue {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}
impl AgentPlugin for Twice {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}
impl AgentPlugin for NotAString {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}

fn main() {
    let _ = oscova_core::linked_plugins![NoValue, Twice, NotAString];
}
