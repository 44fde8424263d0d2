use oscova_core::prelude::*;

pub struct SearchToolset<T>(T);

#[toolset]
impl<T: Send + Sync + 'static> SearchToolset<T> {
    /// Searches.
    pub fn search(query: String) -> String {
        query
    }
}

fn main() {}
