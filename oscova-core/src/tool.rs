//! Tool metadata and the toolset contract that `#[toolset]` implements.
//!
//! Metadata is static: the macro emits one `static` [`ToolsetInfo`] per
//! toolset type, so publication reads it without creating an instance and
//! every user scope shares it. Input schemas are built on first use and
//! cached in the metadata itself. Tools known only at run time (an MCP
//! server's, say) use the same types, built with owned text by
//! [`runtime`](crate::runtime); static metadata stays borrowed, never copied.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::args::ArgError;
pub use crate::content::{
    ContentBlock, EmbeddedResource, InvalidBase64, ResourceContents, decode_base64, encode_base64,
};
pub use crate::invocation::{
    CallId, LogLevel, LogSink, ProgressSink, ToolInvocation, ToolLog, ToolProgress,
};
pub use crate::result::ToolResult;
pub use crate::schema::{InputSchemaBuilder, SCHEMA_DIALECT, output_schema_for};

/// Whether a host must ask before running a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolApprovalMode {
    /// Defer to the host's policy.
    #[default]
    Default,
    /// The host must get approval before running the tool.
    Required,
    /// The host may run the tool unasked.
    NotRequired,
}

/// What a tool may reach over the network. The host enforces it on the
/// HTTP client a toolset gets from its context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkScope {
    /// No network access.
    #[default]
    None,
    /// This machine only (loopback and `localhost`).
    Local,
    /// Anything.
    Internet,
}

impl fmt::Display for ToolApprovalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Default => "default",
            Self::Required => "required",
            Self::NotRequired => "not_required",
        })
    }
}

impl fmt::Display for NetworkScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::None => "none",
            Self::Local => "local",
            Self::Internet => "internet",
        })
    }
}

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
/// defined at run time ([`ToolInfo::new`](crate::runtime)).
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
}

impl ToolInfo {
    /// Built by `#[toolset]` only. `is_async` must say whether
    /// [`Toolset::dispatch`] returns [`Dispatched::Pending`] for this tool:
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
    /// [`Dispatched::Pending`]; a synchronous method's calls are always
    /// [`Dispatched::Ready`].
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
            .finish_non_exhaustive()
    }
}

/// Metadata of a toolset: a static one per `#[toolset]` type, or one
/// built at run time ([`ToolsetInfo::new`](crate::runtime)).
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
    Shared(Arc<[ToolInfo]>),
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
            ToolList::Shared(tools) => tools,
        }
    }

    /// Whether the toolset was defined at run time.
    pub fn is_runtime(&self) -> bool {
        matches!(self.tools, ToolList::Shared(_))
    }
}

/// A boxed future of a tool call.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = ToolResult> + Send + 'a>>;

/// What dispatching a tool produced: a finished result (sync methods run
/// inline, with no allocation for a future) or a future to await.
pub enum Dispatched<'a> {
    /// The method already ran.
    Ready(ToolResult),
    /// The method is async; await this.
    Pending(ToolFuture<'a>),
}

impl fmt::Debug for Dispatched<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ready(r) => f.debug_tuple("Ready").field(r).finish(),
            Self::Pending(_) => f.write_str("Pending(..)"),
        }
    }
}

impl<'a> Dispatched<'a> {
    /// Runs the call to completion.
    pub async fn finish(self) -> ToolResult {
        match self {
            Self::Ready(r) => r,
            Self::Pending(fut) => fut.await,
        }
    }
}

/// The contract `#[toolset]` implements for a type.
///
/// `#[toolset]` is the supported way to implement it: the metadata
/// constructors it needs are not public API (they live in `__private`), so
/// a hand-written implementation may break with any release. Tools known
/// only at run time go through [`runtime`](crate::runtime) instead.
///
/// Toolsets serve many concurrent calls through `&self`; keep per-call
/// state inside the call.
///
/// ```
/// use oscova_core::prelude::*;
///
/// pub struct MathToolset;
///
/// #[toolset]
/// impl MathToolset {
///     /// Adds two numbers.
///     pub fn add(a: i64, b: i64) -> i64 { a + b }
/// }
///
/// let info = MathToolset::toolset_info();
/// assert_eq!(info.owner(), "math");
/// assert_eq!(info.tools()[0].name(), "add");
/// ```
pub trait Toolset: Send + Sync + 'static {
    /// The static metadata of this toolset type.
    fn toolset_info() -> &'static ToolsetInfo
    where
        Self: Sized;

    /// Parses `args` for tool number `index` (into [`ToolsetInfo::tools`])
    /// and starts the call. Bad arguments are an [`ArgError`] and the method
    /// is not called.
    fn dispatch<'a>(
        &'a self,
        index: usize,
        args: Value,
        invocation: &'a ToolInvocation<'_>,
    ) -> Result<Dispatched<'a>, ArgError>;
}
