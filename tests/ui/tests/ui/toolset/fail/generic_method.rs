use oscova_core::prelude::*;

pub struct SearchToolset;

#[toolset]
impl SearchToolset {
    /// Searches.
    pub fn search<T: ToString>(query: String, extra: T) -> String {
        query + &extra.to_string()
    }
}

fn main() {}
