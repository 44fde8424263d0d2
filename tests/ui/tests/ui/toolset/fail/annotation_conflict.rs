use oscova_core::prelude::*;

pub struct FilesToolset;

#[toolset]
impl FilesToolset {
    /// Reads and deletes at once?
    #[tool(read_only, destructive)]
    pub fn tidy(path: String) -> String {
        path
    }

    /// Says it is both, through `= true`.
    #[tool(destructive = true, read_only = true)]
    pub fn purge(path: String) -> String {
        path
    }
}

fn main() {}
