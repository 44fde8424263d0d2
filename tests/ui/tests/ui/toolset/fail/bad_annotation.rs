use oscova_core::prelude::*;

pub struct NotesToolset;

#[toolset]
impl NotesToolset {
    /// A flag with a string.
    #[tool(read_only = "yes")]
    pub fn read(id: u32) -> u32 {
        id
    }

    /// A title that is no string.
    #[tool(title = 3)]
    pub fn write(id: u32) -> u32 {
        id
    }

    /// An empty title.
    #[tool(title = "  ")]
    pub fn list() -> u32 {
        0
    }

    /// A flag twice.
    #[tool(idempotent, open_world = false, idempotent)]
    pub fn touch(id: u32) -> u32 {
        id
    }
}

fn main() {}
