use oscova_core::prelude::*;

#[derive(Debug)]
pub struct LookupError;

pub struct LookupToolset;

#[toolset]
impl LookupToolset {
    /// Looks up.
    pub fn lookup(id: u32) -> Result<String, LookupError> {
        if id == 0 { Err(LookupError) } else { Ok(id.to_string()) }
    }
}

fn main() {}
