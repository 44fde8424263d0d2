use oscova_core::prelude::*;

pub struct SearchToolset;

#[toolset]
impl SearchToolset {
    /// Searches.
    #[tool(name = "search", timeout = 30)]
    pub fn search(query: String) -> String {
        query
    }
}

fn main() {}
