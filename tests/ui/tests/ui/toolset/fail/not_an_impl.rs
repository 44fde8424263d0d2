use oscova_core::prelude::*;

/// A toolset.
#[toolset]
pub struct SearchToolset;

/// A tool.
#[toolset]
pub fn search(query: String) -> String {
    query
}

fn main() {}
