// A tool with no doc comment and no `description` publishes an empty
// description: a warning on its name (or on the empty `description`).
// trybuild pins only failing builds, so `#![deny(deprecated)]` (the lint the
// warning is made with) turns it into an error here; in an author's crate
// it is a warning.
#![deny(deprecated)]

use oscova_core::prelude::*;

pub struct NotesToolset;

#[toolset]
impl NotesToolset {
    pub fn read(id: u32) -> String {
        id.to_string()
    }

    /// Written, then emptied by the attribute.
    #[tool(description = "  ")]
    pub fn list() -> String {
        String::new()
    }
}

fn main() {}
