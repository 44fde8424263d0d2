//! Tool metadata: [`ToolInfo`] and [`ToolsetInfo`]; the hints a tool
//! carries are in `annotations.rs`, the builders of run-time metadata in
//! `info/runtime.rs`.
//!
//! Rules: a `#[toolset]` type's metadata is one `static`, borrowed, never
//! copied; its input schema is built on first use and cached in the
//! metadata. Metadata of a tool known only at run time is built in
//! `info/runtime.rs`, with owned text ([`ToolInfo::new`],
//! [`ToolsetInfo::new`]): its names are normalised once, when it is built,
//! by the wire-name rule.
//!
//! What a host's agent reads besides the schema: whether a batch holding
//! the tool runs one call at a time ([`ToolInfo::sequential`]), and what
//! the tool adds to the system prompt ([`ToolInfo::prompt_snippet`], one
//! line; [`ToolInfo::prompt_guidelines`], bullets). Each prompt text is
//! one line: `#[tool]` refuses a line break at compile time, and the
//! runtime builders fold line breaks into spaces.

mod runtime;

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::{NetworkScope, ToolAnnotations, ToolApprovalMode};

/// Builds a tool's input schema. Generated code supplies one per tool.
pub type SchemaFn = fn() -> Value;

/// Builds a tool's output schema, `None` when its return type has none.
/// Generated code supplies one per tool that returns a value.
pub type OutputSchemaFn = fn() -> Option<Value>;

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
