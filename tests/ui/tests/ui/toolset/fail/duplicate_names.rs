use oscova_core::prelude::*;

pub struct SearchToolset;

#[toolset]
impl SearchToolset {
    /// Searches records.
    pub fn search_records(query: String) -> String {
        query
    }

    /// Also searches records.
    #[tool(name = "SearchRecords")]
    pub fn search_again(query: String) -> String {
        query
    }
}

fn main() {}
