use oscova_core::prelude::*;

pub struct SearchToolset;

#[toolset]
impl SearchToolset {
    /// Searches.
    #[tool(network = "internet")]
    pub fn search(query: String) -> String {
        query
    }

    /// Fetches.
    #[tool(network = NetworkScope::Everywhere)]
    pub fn fetch(url: String) -> String {
        url
    }
}

fn main() {}
