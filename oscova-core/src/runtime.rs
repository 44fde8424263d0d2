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
//! use oscova_core::runtime::{RuntimeCall, ToolHandler, ToolInfo, ToolsetInfo};
//! use oscova_core::tool::ToolFuture;
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

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::args::ArgError;
use crate::invocation::ToolInvocation;
use crate::provider::kind::BoxError;
use crate::tool::{
    Dispatched, NetworkScope, ToolAnnotations, ToolApprovalMode, ToolFuture, ToolList, Toolset,
};
pub use crate::tool::{ToolInfo, ToolsetInfo};
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
            tools: ToolList::Shared(tools.into_iter().collect()),
        }
    }
}

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
