//! Metadata of tools and toolsets defined at run time (see
//! [`crate::runtime`]): owned text where a `#[toolset]`'s is borrowed.
//!
//! Rules: names are normalised once, when the metadata is built, by the
//! wire-name rule (the given text kept for display); prompt texts are
//! folded onto one line, as `#[tool]` refuses a line break at compile
//! time; the approval mode, network scope and hints start where a
//! `#[toolset]` tool's do.

use std::borrow::Cow;
use std::sync::OnceLock;

use serde_json::Value;

use super::{ToolInfo, ToolList, ToolsetInfo};
use crate::text;
use crate::tool::{NetworkScope, ToolAnnotations, ToolApprovalMode};
use crate::wire::normalize_segment;

impl ToolInfo {
    /// A tool defined at run time. `name` is normalised into the wire
    /// name's tool segment (`Shout-Text` → `shout_text`) and kept as given
    /// in [`display_name`](Self::display_name) and
    /// [`method`](Self::method). `input_schema` is the JSON Schema of the
    /// argument object. The approval mode starts at
    /// [`ToolApprovalMode::Default`] and the network scope at
    /// [`NetworkScope::None`], as for `#[toolset]` tools.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        let given: String = name.into();
        Self {
            name: Cow::Owned(normalize_segment(&given)),
            method: Cow::Owned(given.clone()),
            display_name: Cow::Owned(given),
            description: Cow::Owned(description.into()),
            approval: ToolApprovalMode::Default,
            network: NetworkScope::None,
            is_async: true,
            schema_fn: None,
            schema: OnceLock::from(input_schema),
            title: None,
            annotations: ToolAnnotations::new(),
            output_schema_fn: None,
            output_schema: OnceLock::from(None),
            sequential: false,
            prompt_snippet: None,
            prompt_guidelines: Cow::Borrowed(&[]),
        }
    }

    /// A title for people.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(Cow::Owned(title.into()));
        self
    }

    /// Hints about what the tool does.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// The JSON Schema of the tool's structured result (its `details`).
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = OnceLock::from(Some(schema));
        self
    }

    /// The approval mode.
    pub fn with_approval(mut self, mode: ToolApprovalMode) -> Self {
        self.approval = mode;
        self
    }

    /// What the tool may reach over the network.
    pub fn with_network_scope(mut self, scope: NetworkScope) -> Self {
        self.network = scope;
        self
    }

    /// Makes every batch of calls holding this tool run one call at a
    /// time (see [`sequential`](Self::sequential)).
    pub fn with_sequential(mut self, sequential: bool) -> Self {
        self.sequential = sequential;
        self
    }

    /// The one line this tool puts in a system prompt's tools section
    /// (see [`prompt_snippet`](Self::prompt_snippet)). Line breaks and the
    /// blanks around them become one space and the ends are trimmed; an
    /// empty snippet is none.
    ///
    /// ```
    /// use oscova_core::tool::ToolInfo;
    /// let tool = ToolInfo::new("shout", "Shouts.", serde_json::json!({"type": "object"}))
    ///     .with_prompt_snippet("Shouts the text.\n  Loudly.");
    /// assert_eq!(tool.prompt_snippet(), Some("Shouts the text. Loudly."));
    /// ```
    pub fn with_prompt_snippet(mut self, snippet: impl Into<String>) -> Self {
        self.prompt_snippet = one_line(snippet.into()).map(Cow::Owned);
        self
    }

    /// The bullets this tool adds to a system prompt's guidelines (see
    /// [`prompt_guidelines`](Self::prompt_guidelines)), each made one line
    /// as [`with_prompt_snippet`](Self::with_prompt_snippet) does; empty
    /// ones are left out.
    ///
    /// ```
    /// use oscova_core::tool::ToolInfo;
    /// let tool = ToolInfo::new("shout", "Shouts.", serde_json::json!({"type": "object"}))
    ///     .with_prompt_guidelines(["Shout only when asked.", " "]);
    /// assert_eq!(tool.prompt_guidelines(), ["Shout only when asked."]);
    /// ```
    pub fn with_prompt_guidelines<I>(mut self, guidelines: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let guidelines: Vec<Cow<'static, str>> = guidelines
            .into_iter()
            .filter_map(|g| one_line(g.into()))
            .map(Cow::Owned)
            .collect();
        self.prompt_guidelines = Cow::Owned(guidelines);
        self
    }

    /// Whether this tool was defined at run time.
    pub fn is_runtime(&self) -> bool {
        self.schema_fn.is_none()
    }

    /// The same metadata, owned, for a runtime handler (every runtime tool
    /// is async).
    pub(crate) fn runtime_copy(&self) -> Self {
        Self {
            name: self.name.clone(),
            method: self.method.clone(),
            display_name: self.display_name.clone(),
            description: self.description.clone(),
            approval: self.approval,
            network: self.network,
            is_async: true,
            schema_fn: None,
            schema: OnceLock::from(self.input_schema().clone()),
            title: self.title.clone(),
            annotations: self.annotations,
            output_schema_fn: None,
            output_schema: OnceLock::from(self.output_schema().cloned()),
            sequential: self.sequential,
            prompt_snippet: self.prompt_snippet.clone(),
            prompt_guidelines: self.prompt_guidelines.clone(),
        }
    }
}

impl ToolsetInfo {
    /// A toolset defined at run time: `owner` is normalised into the wire
    /// name's owner segment (as given, no `Toolset` suffix is removed) and
    /// kept as given in [`type_name`](Self::type_name).
    pub fn new(owner: impl Into<String>, tools: impl IntoIterator<Item = ToolInfo>) -> Self {
        let given: String = owner.into();
        Self {
            owner: Cow::Owned(normalize_segment(&given)),
            type_name: Cow::Owned(given),
            tools: ToolList::Runtime(tools.into_iter().collect()),
        }
    }
}

/// `text` on one line ([`text::one_line`]), `None` when nothing is left.
fn one_line(text: String) -> Option<String> {
    let folded = match text::one_line(&text) {
        Cow::Borrowed(same) if same.len() == text.len() => None,
        folded => Some(folded.into_owned()),
    };
    let folded = folded.unwrap_or(text);
    (!folded.is_empty()).then_some(folded)
}
