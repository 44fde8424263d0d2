use oscova_core::prelude::*;

pub struct SearchToolset;

#[toolset]
impl SearchToolset {
    /// Searches.
    #[tool(approval = Always)]
    pub fn search(query: String) -> String {
        query
    }
}

fn main() {}
