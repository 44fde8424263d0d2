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
        // Some users get no toolset: that is `Result`, not `Option`.
        builder.add_toolset(|ctx: &AgentPluginContext| {
            ctx.time_zone().map(|_| EchoToolset)
        });
    }
}

fn main() {}
