// A doc-commented fn that is not `pub` compiles but is not a tool: a
// warning on its name. trybuild pins only failing builds, so
// `#![deny(deprecated)]` (the lint the warning is made with) turns it into
// an error here; in an author's crate it is a warning.
#![deny(deprecated)]

use oscova_core::prelude::*;

pub struct NotesToolset;

#[toolset]
impl NotesToolset {
    /// Reads a note.
    pub fn read(&self, id: u32) -> String {
        self.format(id)
    }

    /// Deletes a note: meant as a tool, but not `pub`.
    fn delete(&self, id: u32) -> String {
        self.format(id)
    }

    /// Formats a note: a helper, but documented as one.
    pub(crate) fn format(&self, id: u32) -> String {
        id.to_string()
    }
}

fn main() {
    let _ = NotesToolset.delete(1);
}
