// What the warnings leave alone: a tool described by its attribute alone,
// a helper with `//` comments, documented helpers in a plain impl block.
// `#![deny(warnings)]` makes any warning fail this build.
#![deny(warnings)]

use oscova_core::prelude::*;

pub struct NotesToolset;

#[toolset]
impl NotesToolset {
    #[tool(description = "Reads a note.")]
    pub fn read(&self, id: u32) -> String {
        self.format(id)
    }

    // Formats a note.
    fn format(&self, id: u32) -> String {
        self.pad(id.to_string())
    }
}

impl NotesToolset {
    /// Pads a note: documented, and outside the #[toolset] block.
    fn pad(&self, text: String) -> String {
        format!(" {text} ")
    }
}

fn main() {
    let tools = NotesToolset::toolset_info().tools();
    assert_eq!(tools[0].description(), "Reads a note.");
}
