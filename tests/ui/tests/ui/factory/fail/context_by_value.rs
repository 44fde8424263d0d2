use oscova_core::prelude::*;

pub struct EchoToolset;

#[toolset]
impl EchoToolset {
    /// Returns the text.
    pub fn echo(text: String) -> String {
        text
    }
}

#[plugin(id = "acme.echo")]
pub struct EchoPlugin;

impl AgentPlugin for EchoPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_ctx: AgentPluginContext| EchoToolset);
    }
}

fn main() {}
