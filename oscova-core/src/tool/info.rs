//! Tool metadata: [`ToolInfo`], [`ToolsetInfo`] and the hints
//! ([`ToolAnnotations`]) a tool carries.
//!
//! Rules: a `#[toolset]` type's metadata is one `static`, borrowed, never
//! copied; its input schema is built on first use and cached in the
//! metadata. Metadata of a tool known only at run time is built here too,
//! with owned text ([`ToolInfo::new`], [`ToolsetInfo::new`]): its names
//! are normalised once, when it is built, by the wire-name rule.
//!
//! What a host's agent reads besides the schema: whether a batch holding
//! the tool runs one call at a time ([`ToolInfo::sequential`]), and what
//! the tool adds to the system prompt ([`ToolInfo::prompt_snippet`], one
//! line; [`ToolInfo::prompt_guidelines`], bullets). Each prompt text is
//! one line: `#[tool]` refuses a line break at compile time, and the
//! runtime builders fold line breaks into spaces.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{NetworkScope, ToolApprovalMode};
use crate::text;
use crate::wire::normalize_segment;

/// Builds a tool's input schema. Generated code supplies one per tool.
pub type SchemaFn = fn() -> Value;

/// Builds a tool's output schema, `None` when its return type has none.
/// Generated code supplies one per tool that returns a value.
pub type OutputSchemaFn = fn() -> Option<Value>;

/// Hints about what a tool does, as MCP's tool annotations carry them.
/// Each is `None` until someone says: a client then applies MCP's
/// defaults (not read-only, destructive, not idempotent, open world),
/// and a wrong hint is worse than none.
///
/// `#[tool(read_only, destructive, idempotent, open_world)]` sets them;
/// `open_world` not written follows the network scope (`Internet` is an
/// open world, anything else is not).
///
/// ```
/// use oscova_core::tool::ToolAnnotations;
/// const HINTS: ToolAnnotations = ToolAnnotations::new().with_read_only(true);
/// assert_eq!(HINTS.read_only(), Some(true));
/// assert_eq!(HINTS.destructive(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct ToolAnnotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    read_only: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    destructive: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    idempotent: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    open_world: Option<bool>,
}

impl ToolAnnotations {
    /// No hints.
    pub const fn new() -> Self {
        Self {
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
        }
    }

    /// Says whether the tool only reads (changes nothing around it).
    pub const fn with_read_only(mut self, read_only: bool) -> Self {
        self.read_only = Some(read_only);
        self
    }

    /// Says whether the tool may destroy or overwrite things.
    pub const fn with_destructive(mut self, destructive: bool) -> Self {
        self.destructive = Some(destructive);
        self
    }

    /// Says whether calling it again with the same arguments changes
    /// nothing more.
    pub const fn with_idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = Some(idempotent);
        self
    }

    /// Says whether it reaches an open world (the Internet, other people)
    /// rather than a closed one it owns.
    pub const fn with_open_world(mut self, open_world: bool) -> Self {
        self.open_world = Some(open_world);
        self
    }

    /// Whether the tool only reads, if said.
    pub const fn read_only(&self) -> Option<bool> {
        self.read_only
    }

    /// Whether the tool may destroy or overwrite things, if said.
    pub const fn destructive(&self) -> Option<bool> {
        self.destructive
    }

    /// Whether repeating a call changes nothing more, if said.
    pub const fn idempotent(&self) -> Option<bool> {
        self.idempotent
    }

    /// Whether the tool reaches an open world, if said.
    pub const fn open_world(&self) -> Option<bool> {
        self.open_world
    }

    /// Whether no hint is set.
    pub const fn is_empty(&self) -> bool {
        self.read_only.is_none()
            && self.destructive.is_none()
            && self.idempotent.is_none()
            && self.open_world.is_none()
    }
}

/// Metadata of one tool: static for `#[toolset]` tools, owned for tools
/// defined at run time ([`ToolInfo::new`], see [`runtime`](crate::runtime)).
pub struct ToolInfo {
    pub(crate) method: Cow<'static, str>,
    pub(crate) name: Cow<'static, str>,
    pub(crate) display_name: Cow<'static, str>,
    pub(crate) description: Cow<'static, str>,
    pub(crate) approval: ToolApprovalMode,
    pub(crate) network: NetworkScope,
    pub(crate) is_async: bool,
    /// Builds the schema on first use; `None` when it was given whole.
    pub(crate) schema_fn: Option<SchemaFn>,
    pub(crate) schema: OnceLock<Value>,
    pub(crate) title: Option<Cow<'static, str>>,
    pub(crate) annotations: ToolAnnotations,
    pub(crate) output_schema_fn: Option<OutputSchemaFn>,
    pub(crate) output_schema: OnceLock<Option<Value>>,
    pub(crate) sequential: bool,
    pub(crate) prompt_snippet: Option<Cow<'static, str>>,
    pub(crate) prompt_guidelines: Cow<'static, [Cow<'static, str>]>,
}

impl ToolInfo {
    /// Built by `#[toolset]` only. `is_async` must say whether
    /// [`Toolset::dispatch`] returns [`Dispatched::Pending`](super::Dispatched::Pending) for this tool:
    /// hosts take a path without any future for tools that never do.
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    pub const fn __new(
        method: &'static str,
        name: &'static str,
        display_name: &'static str,
        description: &'static str,
        approval: ToolApprovalMode,
        network: NetworkScope,
        is_async: bool,
        schema_fn: SchemaFn,
    ) -> Self {
        Self {
            method: Cow::Borrowed(method),
            name: Cow::Borrowed(name),
            display_name: Cow::Borrowed(display_name),
            description: Cow::Borrowed(description),
            approval,
            network,
            is_async,
            schema_fn: Some(schema_fn),
            schema: OnceLock::new(),
            title: None,
            annotations: ToolAnnotations::new(),
            output_schema_fn: None,
            output_schema: OnceLock::new(),
            sequential: false,
            prompt_snippet: None,
            prompt_guidelines: Cow::Borrowed(&[]),
        }
    }

    /// Sets the title. Built by `#[toolset]` only.
    #[doc(hidden)]
    pub const fn __with_title(mut self, title: &'static str) -> Self {
        // The field starts `None`; forgetting it (rather than dropping,
        // which a `const fn` cannot) leaks nothing.
        std::mem::forget(self.title.replace(Cow::Borrowed(title)));
        self
    }

    /// Sets the annotations. Built by `#[toolset]` only.
    #[doc(hidden)]
    pub const fn __with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Sets the output schema function. Built by `#[toolset]` only.
    #[doc(hidden)]
    pub const fn __with_output_schema(mut self, schema_fn: OutputSchemaFn) -> Self {
        self.output_schema_fn = Some(schema_fn);
        self
    }

    /// Marks the tool sequential. Built by `#[toolset]` only.
    #[doc(hidden)]
    pub const fn __with_sequential(mut self, sequential: bool) -> Self {
        self.sequential = sequential;
        self
    }

    /// Sets the prompt snippet (one line, checked by the macro). Built by
    /// `#[toolset]` only.
    #[doc(hidden)]
    pub const fn __with_prompt_snippet(mut self, snippet: &'static str) -> Self {
        // Starts `None`; see `__with_title`.
        std::mem::forget(self.prompt_snippet.replace(Cow::Borrowed(snippet)));
        self
    }

    /// Sets the prompt guidelines (each one line, checked by the macro).
    /// Built by `#[toolset]` only.
    #[doc(hidden)]
    pub const fn __with_prompt_guidelines(
        mut self,
        guidelines: &'static [Cow<'static, str>],
    ) -> Self {
        // Starts borrowed and empty; forgetting it leaks nothing.
        std::mem::forget(std::mem::replace(
            &mut self.prompt_guidelines,
            Cow::Borrowed(guidelines),
        ));
        self
    }

    /// The Rust method name (a runtime tool's name as it was given).
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The normalised tool segment of the wire name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name as the author wrote it (`#[tool(name = ...)]` or the method).
    pub fn display_name(&self) -> &str {
        &self.display_name
    }

    /// The description for the model.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The approval mode.
    pub fn approval(&self) -> ToolApprovalMode {
        self.approval
    }

    /// The network scope.
    pub fn network_scope(&self) -> NetworkScope {
        self.network
    }

    /// Whether the method is `async`: its calls return
    /// [`Dispatched::Pending`](super::Dispatched::Pending); a synchronous method's calls are always
    /// [`Dispatched::Ready`](super::Dispatched::Ready).
    pub fn is_async(&self) -> bool {
        self.is_async
    }

    /// The JSON Schema of the argument object, built once and cached.
    pub fn input_schema(&self) -> &Value {
        self.schema
            .get_or_init(|| self.schema_fn.map_or(Value::Null, |build| build()))
    }

    /// A title for people (`#[tool(title = "...")]`), when given.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// Hints about what the tool does.
    pub fn annotations(&self) -> ToolAnnotations {
        self.annotations
    }

    /// The JSON Schema of the tool's structured result (its `details`),
    /// built once and cached: present when the tool returns a
    /// `T: Serialize + JsonSchema` (also inside `Result<T, E>`) other than
    /// `String`, `()` and `ToolResult`.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema
            .get_or_init(|| self.output_schema_fn.and_then(|f| f()))
            .as_ref()
    }

    /// Whether a batch of calls holding this tool runs one call at a time
    /// (`#[tool(sequential)]`, [`with_sequential`](Self::with_sequential)).
    ///
    /// A batch is the tool calls of one model answer. A host's agent loop
    /// (`oscova-agent`'s chat loop) starts every call of a batch together
    /// and answers them in the model's order; when any tool of the batch is
    /// sequential, the whole batch runs one call after another, in order.
    /// Mark a tool sequential when it must not overlap other calls (it
    /// edits files the others read, it drives one device).
    pub fn sequential(&self) -> bool {
        self.sequential
    }

    /// The one line this tool puts in the tools section of a host's system
    /// prompt (`#[tool(prompt_snippet = "...")]`,
    /// [`with_prompt_snippet`](Self::with_prompt_snippet)), when it has
    /// one: `oscova_agent::chat::tools_prompt_section` renders it as
    /// `- {wire name}: {snippet}`. Never empty, never more than one line.
    pub fn prompt_snippet(&self) -> Option<&str> {
        self.prompt_snippet.as_deref()
    }

    /// The bullets this tool adds to the guidelines of a host's system
    /// prompt (`#[tool(prompt_guidelines = ["...", "..."])]`,
    /// [`with_prompt_guidelines`](Self::with_prompt_guidelines)), in the
    /// order given; empty when it adds none. Each is one line, never empty.
    /// Several tools giving the same bullet show it once.
    ///
    /// A slice of `Cow`s, so static metadata is borrowed and runtime
    /// metadata owned: iterate it and take each as `&str` with `as_ref()`.
    pub fn prompt_guidelines(&self) -> &[Cow<'static, str>] {
        &self.prompt_guidelines
    }
}

impl fmt::Debug for ToolInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolInfo")
            .field("method", &self.method)
            .field("name", &self.name)
            .field("approval", &self.approval)
            .field("network", &self.network)
            .field("is_async", &self.is_async)
            .field("title", &self.title)
            .field("annotations", &self.annotations)
            .field("sequential", &self.sequential)
            .field("prompt_snippet", &self.prompt_snippet)
            .field("prompt_guidelines", &self.prompt_guidelines)
            .finish_non_exhaustive()
    }
}

/// Metadata of a toolset: a static one per `#[toolset]` type, or one
/// built at run time ([`ToolsetInfo::new`], see [`runtime`](crate::runtime)).
#[derive(Debug)]
pub struct ToolsetInfo {
    pub(crate) type_name: Cow<'static, str>,
    pub(crate) owner: Cow<'static, str>,
    pub(crate) tools: ToolList,
}

/// A toolset's tools: a static slice, or shared ones built at run time.
#[derive(Debug, Clone)]
pub(crate) enum ToolList {
    Static(&'static [ToolInfo]),
    Runtime(Arc<[ToolInfo]>),
}

impl ToolsetInfo {
    #[doc(hidden)]
    pub const fn __new(
        type_name: &'static str,
        owner: &'static str,
        tools: &'static [ToolInfo],
    ) -> Self {
        Self {
            type_name: Cow::Borrowed(type_name),
            owner: Cow::Borrowed(owner),
            tools: ToolList::Static(tools),
        }
    }

    /// The Rust type name as written (a runtime toolset's owner as given).
    pub fn type_name(&self) -> &str {
        &self.type_name
    }

    /// The normalised owner segment (type name less a trailing `Toolset`).
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The tools, in declaration order.
    pub fn tools(&self) -> &[ToolInfo] {
        match &self.tools {
            ToolList::Static(tools) => tools,
            ToolList::Runtime(tools) => tools,
        }
    }

    /// Whether the toolset was defined at run time.
    pub fn is_runtime(&self) -> bool {
        matches!(self.tools, ToolList::Runtime(_))
    }
}

// Metadata built at run time (see [`crate::runtime`]).
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
