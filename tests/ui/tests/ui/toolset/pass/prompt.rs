use oscova_core::prelude::*;

pub struct NotesToolset;

#[toolset]
impl NotesToolset {
    /// Writes a note.
    #[tool(
        sequential,
        prompt_snippet = "Writes one note; calls never overlap.",
        prompt_guidelines = ["Read a note before you change it.", "Keep notes short."]
    )]
    pub fn write(text: String) -> String {
        text
    }

    /// Reads a note.
    #[tool(sequential = false, prompt_guidelines = ["Read a note before you change it."])]
    pub async fn read(id: u32) -> u32 {
        id
    }

    /// Says nothing to the prompt.
    pub fn quiet() {}
}

fn main() {
    let tools = NotesToolset::toolset_info().tools();
    assert!(tools[0].sequential());
    assert_eq!(
        tools[0].prompt_snippet(),
        Some("Writes one note; calls never overlap.")
    );
    assert_eq!(
        tools[0].prompt_guidelines(),
        ["Read a note before you change it.", "Keep notes short."]
    );
    assert!(!tools[1].sequential());
    assert_eq!(tools[1].prompt_snippet(), None);
    assert_eq!(tools[1].prompt_guidelines().len(), 1);
    assert!(!tools[2].sequential());
    assert!(tools[2].prompt_guidelines().is_empty());
}
