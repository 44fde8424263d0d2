use oscova_core::prelude::*;

pub struct SearchToolset;

#[toolset]
impl SearchToolset {
    /// Searches.
    #[tool(name = "!!!")]
    pub fn search(query: String) -> String {
        query
    }
}

fn main() {}
