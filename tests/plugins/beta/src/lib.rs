//! A plugin crate for the link-time collection tests: `test.beta`.

use oscova_core::prelude::*;

/// Arithmetic.
pub struct MathToolset;

#[toolset]
impl MathToolset {
    /// Adds two integers.
    pub fn add(a: i64, b: i64) -> i64 {
        a + b
    }
}

/// The beta plugin.
#[plugin(id = "test.beta")]
#[derive(Default)]
pub struct BetaPlugin {
    _private: (),
}

impl AgentPlugin for BetaPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_: &AgentPluginContext| MathToolset);
    }
}
