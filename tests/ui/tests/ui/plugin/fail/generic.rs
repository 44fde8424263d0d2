use oscova_core::prelude::*;

#[plugin(id = "acme.search")]
pub struct AcmePlugin<T> {
    inner: T,
}

impl<T: Send + Sync + 'static> AgentPlugin for AcmePlugin<T> {
    fn configure(&self, _: &mut AgentPluginBuilder) {}
}

fn main() {}
