// A plugin cannot register a host service: the Oscova contract has no such
// registration (services are the host's, `PluginHostBuilder::service_with`).
use oscova_core::prelude::*;

struct Index;

#[plugin(id = "acme.index")]
pub struct IndexPlugin;

impl AgentPlugin for IndexPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_service(|_: &oscova_core::context::ServiceContext<'_>| Index);
    }
}

fn main() {}
