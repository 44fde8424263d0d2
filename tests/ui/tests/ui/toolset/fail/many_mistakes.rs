// Several mistakes in one toolset: each is reported once, on its own
// token, and the type still implements `Toolset`, so the plugin that
// registers it raises no follow-on error.
use oscova_core::prelude::*;

pub struct SearchToolset;

#[toolset]
impl SearchToolset {
    /// Searches.
    #[tool(name = "search", retries = 3)]
    pub fn search(&mut self, query: &str) -> String {
        query.to_owned()
    }

    /// Also searches.
    #[tool(name = "search", approval = Sometimes)]
    pub fn search_again<T>(query: String) -> String {
        query
    }

    /// Fine on its own.
    #[tool(name = "Search")]
    pub fn find(query: String) -> String {
        query
    }
}

pub struct SearchPlugin;

impl AgentPlugin for SearchPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_: &AgentPluginContext| SearchToolset);
    }
}

fn main() {}
