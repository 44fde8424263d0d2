use oscova_core::prelude::*;

pub struct Helper;

#[plugin(id = "acme.echo")]
pub struct EchoPlugin;

impl AgentPlugin for EchoPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        // A type without `#[toolset]`.
        builder.add_toolset(|_ctx: &AgentPluginContext| Helper);
    }
}

fn main() {}
