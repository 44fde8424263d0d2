use oscova_core::prelude::*;

pub struct NotesToolset;

#[toolset]
impl NotesToolset {
    /// A snippet that is no string.
    #[tool(prompt_snippet = 3)]
    pub fn one() {}

    /// A snippet of two lines.
    #[tool(prompt_snippet = "Writes a note.
Never deletes one.")]
    pub fn two() {}

    /// An empty snippet.
    #[tool(prompt_snippet = " ")]
    pub fn three() {}

    /// A flag with a string.
    #[tool(sequential = "yes")]
    pub fn four() {}

    /// Guidelines as one string.
    #[tool(prompt_guidelines = "Keep it short.")]
    pub fn five() {}

    /// Guidelines with a number and a line break.
    #[tool(prompt_guidelines = ["Fine.", 7, "Two\nlines.", ""])]
    pub fn six() {}

    /// No guidelines at all.
    #[tool(prompt_guidelines = [])]
    pub fn seven() {}

    /// Guidelines that are no list.
    #[tool(prompt_guidelines = Keep)]
    pub fn eight() {}

    /// A snippet twice, and one without a value.
    #[tool(prompt_snippet = "a", prompt_snippet = "b", prompt_guidelines)]
    pub fn nine() {}
}

fn main() {}
