use oscova_core::prelude::*;

pub struct SearchToolset;

pub trait Search {
    fn search(&self, query: String) -> String;
}

#[toolset]
impl Search for SearchToolset {
    fn search(&self, query: String) -> String {
        query
    }
}

fn main() {}
