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
pub use crate::invocation::{CallId, ProgressSink, ToolInvocation, ToolProgress};
pub use crate::result::ToolResult;
pub use crate::schema::{InputSchemaBuilder, SCHEMA_DIALECT};

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
        }
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
}

impl fmt::Debug for ToolInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolInfo")
            .field("method", &self.method)
            .field("name", &self.name)
            .field("approval", &self.approval)
            .field("network", &self.network)
            .field("is_async", &self.is_async)
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
