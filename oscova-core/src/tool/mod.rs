//! Tool metadata and the toolset contract that `#[toolset]` implements.
//!
//! Metadata is static: the macro emits one `static` [`ToolsetInfo`] per
//! toolset type, so publication reads it without creating an instance and
//! every user scope shares it. Input schemas are built on first use and
//! cached in the metadata itself. Tools known only at run time (an MCP
//! server's, say) use the same types, built with owned text by
//! [`runtime`](crate::runtime); static metadata stays borrowed, never copied.

mod annotations;
mod content;
mod info;
mod invocation;
mod log;
pub mod origin;
mod progress;
mod result;
mod schema;
pub(crate) mod span;

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::args::ArgError;
pub use annotations::ToolAnnotations;
pub use content::{
    ContentBlock, EmbeddedResource, InvalidBase64, ResourceContents, decode_base64, encode_base64,
};
pub(crate) use info::ToolList;
pub use info::{OutputSchemaFn, SchemaFn, ToolInfo, ToolsetInfo};
pub(crate) use invocation::CallBase;
pub use invocation::{CallId, ToolInvocation};
pub use log::{LogLevel, LogSink, ToolLog};
pub use origin::{CallOrigin, call_origin, with_call_origin};
pub use progress::{ProgressSink, ToolProgress};
pub use result::{MISSING_CREDENTIAL, ToolResult};
pub use schema::{InputSchemaBuilder, SCHEMA_DIALECT, output_schema_for};

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
