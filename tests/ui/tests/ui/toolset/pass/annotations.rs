use oscova_core::prelude::*;
use oscova_core::tool::Toolset as _;
use oscova_core::{schemars, serde};

/// A note.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct Note {
    /// Its text.
    pub text: String,
}

/// Serialises, but has no schema: still a fine return type.
#[derive(serde::Serialize)]
pub struct Plain {
    pub n: u8,
}

pub struct NotesToolset;

#[toolset]
impl NotesToolset {
    /// Reads a note.
    #[tool(title = "Read a note", read_only, idempotent, network = Internet)]
    pub fn read(id: u32) -> Note {
        Note { text: id.to_string() }
    }

    /// Deletes a note.
    #[tool(destructive, idempotent = true, open_world = false, network = Internet)]
    pub async fn delete(id: u32) -> Result<Note, String> {
        Ok(Note { text: id.to_string() })
    }

    /// Says what it is not.
    #[tool(read_only = false, destructive = false, open_world)]
    pub fn plain() -> Plain {
        Plain { n: 1 }
    }
}

fn main() {
    let tools = NotesToolset::toolset_info().tools();
    assert_eq!(tools[0].title(), Some("Read a note"));
    let a = tools[0].annotations();
    assert_eq!(a.read_only(), Some(true));
    assert_eq!(a.idempotent(), Some(true));
    assert_eq!(a.open_world(), Some(true));
    assert_eq!(tools[0].output_schema().unwrap()["type"], "object");
    let a = tools[1].annotations();
    assert_eq!((a.destructive(), a.open_world()), (Some(true), Some(false)));
    assert!(tools[1].output_schema().is_some());
    let a = tools[2].annotations();
    assert_eq!((a.read_only(), a.destructive(), a.open_world()), (Some(false), Some(false), Some(true)));
    assert!(tools[2].output_schema().is_none());
}
