use oscova_core::prelude::*;

pub struct Row {
    pub id: u32,
}

pub struct LookupToolset;

#[toolset]
impl LookupToolset {
    /// Looks up.
    pub fn lookup(id: u32) -> Vec<Row> {
        vec![Row { id }]
    }

    /// Looks up, fallibly.
    pub fn try_lookup(id: u32) -> Result<Row, String> {
        Ok(Row { id })
    }
}

fn main() {}
