use oscova_core::prelude::*;

// Any id is normalised like every other wire-name segment; only one that
// normalises to nothing cannot prefix a wire name.

#[plugin(id = "")]
pub struct Empty;

#[plugin(id = "...")]
pub struct Dots;

#[plugin(id = "__")]
pub struct Separator;

#[plugin(id = " - ")]
pub struct Punctuation;

impl AgentPlugin for Empty {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}
impl AgentPlugin for Dots {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}
impl AgentPlugin for Separator {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}
impl AgentPlugin for Punctuation {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}

fn main() {
    // No follow-on error: the types still implement `RegisteredPlugin`.
    let _ = oscova_core::linked_plugins![Empty, Dots, Separator, Punctuation];
}
