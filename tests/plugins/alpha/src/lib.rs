//! A plugin crate for the link-time collection tests: `test.alpha`.

use oscova_core::prelude::*;

/// Greets.
pub struct GreetToolset;

#[toolset]
impl GreetToolset {
    /// Says hello to someone.
    pub fn hello(
        /// Who to greet.
        name: String,
    ) -> String {
        format!("Hello, {name}!")
    }
}

/// The alpha plugin.
#[plugin(id = "test.alpha", framework = ">=0.1")]
pub struct AlphaPlugin;

impl AgentPlugin for AlphaPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_: &AgentPluginContext| GreetToolset);
    }
}
