//! The tools section of a system prompt, from what tools say of themselves
//! (`#[tool(prompt_snippet = "...", prompt_guidelines = [...])]`).
//!
//! Rules: one line per tool that has a snippet, `- {wire name}: {snippet}`,
//! in the order the tools are given (the order the model is sent them);
//! then the guidelines, one bullet each, in tool order, a bullet given by
//! several tools shown once, where it first appears. Every text is one
//! line ([`one_line`]): what `#[tool]` already checks at compile time holds
//! for text added here at run time too. No snippet and no guideline is an
//! empty section, not an empty heading.
//!
//! [`run_chat`](super::run_chat) sends no system prompt of its own: a host
//! puts this section in the system message it starts the conversation
//! with, and the session agent builds its system prompt with it.

use oscova_core::UserScope;
use oscova_core::provider::model::ToolSpec;
use oscova_core::text::one_line;

/// The heading of the tools' lines.
const TOOLS_HEADING: &str = "Available tools:";
/// The heading of the guidelines' bullets.
const GUIDELINES_HEADING: &str = "Guidelines:";

/// The tools section of `scope`'s tools that go to the model as `tools`
/// (as [`tool_specs`](super::tool_specs) made them, so a tool left out of
/// the chat is left out here too): see [`ToolsPromptSection`] for the
/// layout. A name of `tools` that is no tool of `scope` adds nothing; add
/// such tools with [`ToolsPromptSection::tool`].
///
/// ```
/// use oscova_agent::chat::{tool_specs, tools_prompt_section};
/// use oscova_agent::profile::SchemaProfile;
/// use oscova_core::prelude::*;
///
/// pub struct NotesToolset;
///
/// #[toolset]
/// impl NotesToolset {
///     /// Writes a note.
///     #[tool(prompt_snippet = "Writes one note.", prompt_guidelines = ["Keep notes short."])]
///     pub fn write(text: String) -> String { text }
/// }
///
/// #[plugin(id = "acme.notes")]
/// pub struct NotesPlugin;
///
/// impl AgentPlugin for NotesPlugin {
///     fn configure(&self, builder: &mut AgentPluginBuilder) {
///         builder.add_toolset(|_: &AgentPluginContext| NotesToolset);
///     }
/// }
///
/// let host = PluginHost::builder()
///     .plugins(oscova_core::linked_plugins![NotesPlugin])
///     .build()?;
/// let scope = host.user_scope(UserInfo::new("alice"));
/// let tools = tool_specs(&scope, SchemaProfile::OpenAi);
/// assert_eq!(
///     tools_prompt_section(&scope, &tools),
///     "Available tools:\n- acme_notes__notes__write: Writes one note.\n\nGuidelines:\n- Keep notes short."
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn tools_prompt_section(scope: &UserScope, tools: &[ToolSpec]) -> String {
    ToolsPromptSection::from_scope(scope, tools).render()
}

/// A system prompt's tools section, built tool by tool.
///
/// It renders as the tools' lines under `Available tools:`, a blank line,
/// then the bullets under `Guidelines:`; a part with nothing in it is left
/// out, and so is the blank line.
///
/// ```
/// use oscova_agent::chat::ToolsPromptSection;
///
/// let mut section = ToolsPromptSection::new();
/// section
///     .tool("read", Some("Reads a file."), ["Read before you edit."])
///     .tool("edit", Some("Edits a file,\n  in place."), ["Read before you edit.", "Keep edits small."])
///     .tool("ls", None, []);
/// assert_eq!(
///     section.render(),
///     "Available tools:\n- read: Reads a file.\n- edit: Edits a file, in place.\n\n\
///      Guidelines:\n- Read before you edit.\n- Keep edits small."
/// );
/// assert_eq!(ToolsPromptSection::new().render(), "");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolsPromptSection {
    /// `(name, snippet)`, in order.
    lines: Vec<(String, String)>,
    /// The bullets, in order, each once.
    guidelines: Vec<String>,
}

impl ToolsPromptSection {
    /// An empty section.
    pub fn new() -> Self {
        Self::default()
    }

    /// The section of `scope`'s tools among `tools`, in the order of
    /// `tools` (see [`tools_prompt_section`]).
    pub fn from_scope(scope: &UserScope, tools: &[ToolSpec]) -> Self {
        let mut section = Self::new();
        for spec in tools {
            if let Some(tool) = scope.tool(&spec.name) {
                section.tool(
                    tool.wire_name(),
                    tool.prompt_snippet(),
                    tool.prompt_guidelines().iter().map(AsRef::as_ref),
                );
            }
        }
        section
    }

    /// Adds a tool: its line when it has a snippet, and its bullets not
    /// already there. Each text is put on one line; an empty one adds
    /// nothing.
    pub fn tool<'a>(
        &mut self,
        name: &str,
        snippet: Option<&str>,
        guidelines: impl IntoIterator<Item = &'a str>,
    ) -> &mut Self {
        if let Some(snippet) = snippet.map(one_line).filter(|s| !s.is_empty()) {
            self.lines
                .push((one_line(name).into_owned(), snippet.into_owned()));
        }
        self.guidelines(guidelines)
    }

    /// Adds bullets not already there, such as the host's own.
    pub fn guidelines<'a>(&mut self, guidelines: impl IntoIterator<Item = &'a str>) -> &mut Self {
        for bullet in guidelines {
            let bullet = one_line(bullet);
            if !bullet.is_empty() && !self.guidelines.iter().any(|g| *g == bullet) {
                self.guidelines.push(bullet.into_owned());
            }
        }
        self
    }

    /// Whether the section would render as nothing.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.guidelines.is_empty()
    }

    /// The section's text: no trailing line break; empty when
    /// [`is_empty`](Self::is_empty).
    pub fn render(&self) -> String {
        let mut parts = Vec::with_capacity(2);
        if !self.lines.is_empty() {
            let mut part = String::from(TOOLS_HEADING);
            for (name, snippet) in &self.lines {
                part.push_str(&format!("\n- {name}: {snippet}"));
            }
            parts.push(part);
        }
        if !self.guidelines.is_empty() {
            let mut part = String::from(GUIDELINES_HEADING);
            for bullet in &self.guidelines {
                part.push_str(&format!("\n- {bullet}"));
            }
            parts.push(part);
        }
        parts.join("\n\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bullets_are_shown_once_where_they_first_appear() {
        let mut section = ToolsPromptSection::new();
        section
            .tool("a", None, ["one", "two"])
            .tool("b", None, ["two", "three", "one"])
            .guidelines(["three", "four"]);
        assert_eq!(section.guidelines, ["one", "two", "three", "four"]);
        assert!(section.lines.is_empty());
        assert_eq!(
            section.render(),
            "Guidelines:\n- one\n- two\n- three\n- four"
        );
    }

    #[test]
    fn text_added_at_run_time_stays_on_its_line() {
        let mut section = ToolsPromptSection::new();
        section.tool("a", Some("first\nsecond"), ["x\r\ny", " ", ""]);
        section.tool("b", Some(" \n "), []);
        assert_eq!(
            section.render(),
            "Available tools:\n- a: first second\n\nGuidelines:\n- x y"
        );
    }
}
