//! Runtime toolsets: tools whose names, descriptions, input and output
//! schemas, annotations, approval mode and network scope are known only
//! when the program runs (an MCP
//! server's tools, tools read from configuration).
//!
//! Rules: a runtime toolset is metadata ([`ToolsetInfo::new`] over
//! [`ToolInfo::new`]s) recorded with a per-user factory of a
//! [`ToolHandler`] ([`crate::AgentPluginBuilder::add_runtime_toolset`]). The host
//! treats it exactly like a `#[toolset]` type: its wire names are composed
//! from the same normalised segments and checked by the same publication
//! (64-character limit, duplicates reported, the earlier tool kept), and
//! its calls go through the same pipeline (hooks, approval, network scope,
//! cancellation, panic isolation, redaction). Every runtime tool is async:
//! the handler returns a future. Names are normalised here, once, when the
//! metadata is built; the name as given stays readable as
//! [`ToolInfo::display_name`]. The input schema must be a JSON object,
//! or the tool is not published.
//!
//! ```
//! use oscova_core::prelude::*;
//! use oscova_core::runtime::{RuntimeCall, ToolHandler};
//! use oscova_core::tool::{ToolFuture, ToolInfo, ToolsetInfo};
//! use oscova_core::args::ArgError;
//!
//! /// Answers every tool with its own name and the arguments it got.
//! struct Echo;
//!
//! impl ToolHandler for Echo {
//!     fn call<'a>(&'a self, call: RuntimeCall<'a>) -> Result<ToolFuture<'a>, ArgError> {
//!         let text = format!("{} got {}", call.tool.display_name(), call.args);
//!         Ok(Box::pin(async move { ToolResult::text(text) }))
//!     }
//! }
//!
//! #[plugin(id = "demo.runtime")]
//! pub struct RuntimePlugin;
//!
//! impl AgentPlugin for RuntimePlugin {
//!     fn configure(&self, builder: &mut AgentPluginBuilder) {
//!         let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
//!         let tools = ToolsetInfo::new(
//!             "Notes",
//!             [ToolInfo::new("Shout-Text", "Shouts the text.", schema)
//!                 .with_approval(ToolApprovalMode::NotRequired)],
//!         );
//!         builder.add_runtime_toolset(tools, |_ctx: &AgentPluginContext| Echo);
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let host = PluginHost::builder().plugins(oscova_core::linked_plugins![RuntimePlugin]).build()?;
//! let scope = host.user_scope(UserInfo::new("alice"));
//! let result = scope
//!     .invoke("demo_runtime__notes__shout_text", json!({"text": "hi"}))
//!     .await;
//! assert_eq!(result.content, r#"Shout-Text got {"text":"hi"}"#);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use std::sync::Arc;

use serde_json::Value;

use crate::args::ArgError;
use crate::provider::BoxError;
use crate::tool::{Dispatched, ToolFuture, ToolInfo, ToolInvocation, Toolset, ToolsetInfo};

/// One call of a runtime tool, as its handler gets it.
#[non_exhaustive]
pub struct RuntimeCall<'a> {
    /// The tool's position in its [`ToolsetInfo::tools`].
    pub index: usize,
    /// The tool's metadata.
    pub tool: &'a ToolInfo,
    /// The argument object (after before-hooks).
    pub args: Value,
    /// Progress, cancellation and the user, as for `#[toolset]` methods.
    pub invocation: &'a ToolInvocation<'a>,
}

impl std::fmt::Debug for RuntimeCall<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeCall")
            .field("tool", &self.tool.name())
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

/// Runs the tools of one runtime toolset for one user scope. Shared by
/// every concurrent call of that user, through `&self`.
///
/// Return an [`ArgError`] for arguments the tool cannot take: the call
/// then ends as bad arguments naming the tool and the JSON path, like a
/// `#[toolset]` method's, and nothing runs.
pub trait ToolHandler: Send + Sync + 'static {
    /// Starts one call.
    fn call<'a>(&'a self, call: RuntimeCall<'a>) -> Result<ToolFuture<'a>, ArgError>;
}

impl<H: ToolHandler + ?Sized> ToolHandler for Arc<H> {
    fn call<'a>(&'a self, call: RuntimeCall<'a>) -> Result<ToolFuture<'a>, ArgError> {
        (**self).call(call)
    }
}

/// What a runtime toolset's factory may return: a handler or a `Result`
/// of one.
#[diagnostic::on_unimplemented(
    message = "a runtime toolset factory returned `{Self}`, which is not a tool handler",
    label = "return a type that implements `ToolHandler`, or a `Result` of one"
)]
pub trait IntoToolHandler {
    /// What the factory produces.
    type Output: ToolHandler;
    /// The handler, or the factory's error.
    fn into_handler(self) -> Result<Self::Output, BoxError>;
}

impl<H: ToolHandler> IntoToolHandler for H {
    type Output = H;
    fn into_handler(self) -> Result<H, BoxError> {
        Ok(self)
    }
}

impl<H: ToolHandler, E: Into<BoxError>> IntoToolHandler for Result<H, E> {
    type Output = H;
    fn into_handler(self) -> Result<H, BoxError> {
        self.map_err(Into::into)
    }
}

/// A runtime toolset's handler as the scope holds it: a [`Toolset`] whose
/// metadata the registration carries.
pub(crate) struct RuntimeToolset<H> {
    pub(crate) handler: H,
    pub(crate) tools: Arc<[ToolInfo]>,
}

/// Never read: a runtime toolset's metadata is recorded with its factory.
static NO_STATIC_INFO: ToolsetInfo = ToolsetInfo::__new("runtime", "runtime", &[]);

impl<H: ToolHandler> Toolset for RuntimeToolset<H> {
    fn toolset_info() -> &'static ToolsetInfo {
        &NO_STATIC_INFO
    }

    fn dispatch<'a>(
        &'a self,
        index: usize,
        args: Value,
        invocation: &'a ToolInvocation<'_>,
    ) -> Result<Dispatched<'a>, ArgError> {
        let tool = self
            .tools
            .get(index)
            .ok_or_else(|| ArgError::__unknown_tool(index))?;
        self.handler
            .call(RuntimeCall {
                index,
                tool,
                args,
                invocation,
            })
            .map(Dispatched::Pending)
    }
}
