// A variant written in another case, or one typo away, is refused with the
// one it most likely meant.
use oscova_core::prelude::*;

pub struct SearchToolset;

#[toolset]
impl SearchToolset {
    /// Searches.
    #[tool(approval = required, network = internet)]
    pub fn search(query: String) -> String {
        query
    }

    /// Searches harder.
    #[tool(approval = NotRequried, descripton = "Searches harder.")]
    pub fn deep_search(query: String) -> String {
        query
    }
}

fn main() {}
