//! Layers: one async shape around every tool call, registered once on
//! the host ([`PluginHostBuilder::layer`](crate::PluginHostBuilder::layer)).
//!
//! A [`ToolLayer`] gets the call ([`ToolCall`]: the tool, the user, the
//! arguments) and the rest of the pipeline ([`Next`]); it may refuse the
//! call with a reason ([`ToolCall::refuse`], and never run [`Next`]),
//! rewrite the arguments, and observe or replace what comes back. This is
//! tower's `Service` around `Service`, in the form axum's `from_fn`
//! middleware gives it: a function of the request and what runs next.
//!
//! Rules:
//! - Every call through [`UserScope::invoke`](crate::UserScope::invoke)
//!   passes every layer, whoever asked: a session's model, an MCP client
//!   (`oscova mcp`, `oscova serve`'s `/mcp`), an A2A task (its session),
//!   `oscova tools call`. A guard written as a layer holds on all of
//!   them. A tool the host does not publish (a session extension's) runs
//!   under the same layers through [`UserScope::layered`](crate::UserScope::layered).
//! - Layers run in registration order: the first registered sees the call
//!   first and the result last (tower's `ServiceBuilder` order). They run
//!   after the name is found and the arguments parsed, before approval,
//!   so a refused call never asks a person, and the approval request shows
//!   the arguments as the layers left them; the call's start hook, the
//!   body and redaction run inside [`Next`]. A layer sees the tool's own
//!   result, error results included, already redacted; host refusals
//!   ([`InvokeError`]) come back as `Err`, for the layer to pass on.
//! - A layer that panics stops the call: before [`Next`] ran, as
//!   [`InvokeError::Blocked`] (nothing of the tool ran); after, as an
//!   error result saying the tool ran and its result was withheld, so
//!   the model does not retry a call whose effects happened. Either is
//!   reported as a `hook_failed` diagnostic. What a layer returns is
//!   redacted again on its way out.
//! - The caller's cancellation ([`ToolCall::cancellation`]) is the
//!   layer's to honour while it waits for something of its own; approval
//!   and the body honour it inside [`Next`].
//! - A host with no layers pays nothing: a synchronous tool with nothing
//!   to ask still runs inside the call's first poll (`invoke/future.rs`).
//!   A host with layers takes the boxed path on every call, one more
//!   allocation for the rest of the pipeline.
//!
//! [`before_tool_call`](crate::PluginHostBuilder::before_tool_call) and
//! [`after_tool_call`](crate::PluginHostBuilder::after_tool_call) are the
//! synchronous thin forms of a layer (`hooks.rs`): each registers one, in
//! the same order as the others.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::invoke::{CatchUnwind, InvokeError};
use crate::context::UserInfo;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Severity, panic_message};
use crate::provider::BoxFuture;
use crate::tool::{ToolInfo, ToolResult};

/// What a call through the layers ends with: the tool's result (an error
/// result included), or the host's refusal or failure.
pub type CallOutcome = Result<ToolResult, InvokeError>;

/// A tool call on its way through the layers (see the module rules).
#[derive(Debug)]
#[non_exhaustive]
pub struct ToolCall<'a> {
    wire_name: &'a str,
    tool: &'a ToolInfo,
    user: &'a UserInfo,
    cancel: Option<&'a CancellationToken>,
    /// The arguments, as an object; a layer may rewrite them before it
    /// passes the call on. The tool's parameters are checked against
    /// them after the layers: a rewrite that breaks them is an argument
    /// error, and the tool does not run.
    pub arguments: Value,
}

impl<'a> ToolCall<'a> {
    /// A call of `tool`, known as `wire_name`, for `user`: what a caller
    /// hands [`UserScope::layered`](crate::UserScope::layered) for a tool
    /// the host does not publish.
    pub fn new(
        wire_name: &'a str,
        tool: &'a ToolInfo,
        user: &'a UserInfo,
        arguments: Value,
    ) -> Self {
        Self {
            wire_name,
            tool,
            user,
            cancel: None,
            arguments,
        }
    }

    /// The same call, cancelled with `token` (see
    /// [`cancellation`](Self::cancellation)).
    pub fn with_cancellation(mut self, token: Option<&'a CancellationToken>) -> Self {
        self.cancel = token;
        self
    }

    /// The name the call was made by: a published tool's wire name
    /// (`acme_files__files__delete`), or an extension tool's own name.
    pub fn wire_name(&self) -> &'a str {
        self.wire_name
    }

    /// The tool's metadata: description, approval mode, network scope,
    /// annotations (`destructive`, `read_only`, …).
    pub fn tool(&self) -> &'a ToolInfo {
        self.tool
    }

    /// The calling user.
    pub fn user(&self) -> &'a UserInfo {
        self.user
    }

    /// The caller's cancellation token, when it gave one: a layer that
    /// waits for something of its own stops when it fires.
    pub fn cancellation(&self) -> Option<&'a CancellationToken> {
        self.cancel
    }

    /// The refusal of this call with `reason`, which the model reads:
    /// return it instead of running [`Next`] (nothing of the tool runs).
    /// It is [`InvokeError::Blocked`], redacted on its way out.
    pub fn refuse(&self, reason: impl Into<String>) -> InvokeError {
        InvokeError::Blocked {
            tool: self.wire_name.to_owned(),
            reason: reason.into(),
        }
    }
}

/// An async layer around every tool call (see the module rules).
///
/// Implement it on a type, or make one from a closure with [`layer_fn`].
///
/// ```
/// use oscova_core::prelude::*;
/// use oscova_core::InvokeError;
/// use oscova_core::host::layer::{CallOutcome, Next, ToolCall, ToolLayer};
/// use oscova_core::provider::BoxFuture;
///
/// /// Refuses any call whose arguments mention `rm -rf`.
/// struct NoRmRf;
///
/// impl ToolLayer for NoRmRf {
///     fn call<'a>(&'a self, call: ToolCall<'a>, next: Next<'a>) -> BoxFuture<'a, CallOutcome> {
///         Box::pin(async move {
///             if call.arguments.to_string().contains("rm -rf") {
///                 return Err(call.refuse("destructive shell commands are not allowed"));
///             }
///             next.run(call).await
///         })
///     }
/// }
///
/// pub struct ShellToolset;
/// #[toolset]
/// impl ShellToolset {
///     /// Runs a command (here: says it would).
///     pub fn run(command: String) -> String { format!("would run {command}") }
/// }
/// #[plugin(id = "demo.shell")]
/// pub struct ShellPlugin;
/// impl AgentPlugin for ShellPlugin {
///     fn configure(&self, b: &mut AgentPluginBuilder) {
///         b.add_toolset(|_: &AgentPluginContext| ShellToolset);
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let host = PluginHost::builder()
///     .plugins(oscova_core::linked_plugins![ShellPlugin])
///     .layer(NoRmRf)
///     .build()?;
/// let scope = host.user_scope(UserInfo::new("alice"));
/// let refused = scope
///     .invoke("demo_shell__shell__run", json!({"command": "rm -rf /"}))
///     .checked()
///     .await;
/// assert_eq!(refused.unwrap_err().kind(), "blocked");
/// let ran = scope.invoke("demo_shell__shell__run", json!({"command": "ls"})).await;
/// assert_eq!(ran.content, "would run ls");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub trait ToolLayer: Send + Sync + 'static {
    /// Handles `call`: refuse it (`Err(call.refuse(reason))`), or pass it
    /// on with `next.run(call)`, changed or not, and return what comes
    /// back, changed or not.
    fn call<'a>(&'a self, call: ToolCall<'a>, next: Next<'a>) -> BoxFuture<'a, CallOutcome>;
}

/// A [`ToolLayer`] made of a closure by [`layer_fn`].
pub struct LayerFn<F>(F);

impl<F> std::fmt::Debug for LayerFn<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LayerFn")
    }
}

/// A layer from a closure that returns a boxed future.
///
/// ```
/// use oscova_core::host::layer::layer_fn;
///
/// // Counts what every call ends with, and changes nothing.
/// let layer = layer_fn(|call, next| {
///     Box::pin(async move {
///         let tool = call.wire_name();
///         let outcome = next.run(call).await;
///         tracing::info!(tool, ok = outcome.is_ok(), "tool call");
///         outcome
///     })
/// });
/// # let _ = oscova_core::PluginHost::builder().no_linked_plugins().layer(layer);
/// ```
pub fn layer_fn<F>(f: F) -> LayerFn<F>
where
    F: for<'a> Fn(ToolCall<'a>, Next<'a>) -> BoxFuture<'a, CallOutcome> + Send + Sync + 'static,
{
    LayerFn(f)
}

impl<F> ToolLayer for LayerFn<F>
where
    F: for<'a> Fn(ToolCall<'a>, Next<'a>) -> BoxFuture<'a, CallOutcome> + Send + Sync + 'static,
{
    fn call<'a>(&'a self, call: ToolCall<'a>, next: Next<'a>) -> BoxFuture<'a, CallOutcome> {
        (self.0)(call, next)
    }
}

/// The innermost step: what runs once every layer passed the call on.
pub(crate) type Innermost<'a> =
    Box<dyn FnOnce(ToolCall<'a>) -> BoxFuture<'a, CallOutcome> + Send + 'a>;

/// The rest of a call, after this layer: the layers registered after it,
/// then approval, the call's start hook, the tool's body and redaction.
/// Running it is the only way the tool runs.
pub struct Next<'a> {
    first: Option<&'a dyn ToolLayer>,
    layers: &'a [Arc<dyn ToolLayer>],
    inner: Innermost<'a>,
    /// Set once the rest of the pipeline starts: a layer's panic after
    /// that must not read as "nothing ran".
    ran: Arc<AtomicBool>,
}

impl std::fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next")
            .field(
                "layers",
                &(self.layers.len() + usize::from(self.first.is_some())),
            )
            .finish_non_exhaustive()
    }
}

impl<'a> Next<'a> {
    /// Runs the rest of the call with `call` (its arguments as this layer
    /// leaves them) and yields its outcome.
    pub fn run(self, call: ToolCall<'a>) -> BoxFuture<'a, CallOutcome> {
        let Self {
            first,
            layers,
            inner,
            ran,
        } = self;
        if let Some(layer) = first {
            let next = Next {
                first: None,
                layers,
                inner,
                ran,
            };
            return layer.call(call, next);
        }
        match layers.split_first() {
            Some((layer, rest)) => layer.call(
                call,
                Next {
                    first: None,
                    layers: rest,
                    inner,
                    ran,
                },
            ),
            None => {
                ran.store(true, Ordering::Release);
                inner(call)
            }
        }
    }
}

/// Runs `call` through `first` (a caller's own layer, outermost), then
/// `layers`, then `inner`; a panic anywhere in a layer stops the call as
/// the module rules say. `inner` catches its own tool's panics.
pub(crate) async fn run<'a>(
    first: Option<&'a dyn ToolLayer>,
    layers: &'a [Arc<dyn ToolLayer>],
    call: ToolCall<'a>,
    inner: Innermost<'a>,
) -> CallOutcome {
    let wire_name = call.wire_name;
    let ran = Arc::new(AtomicBool::new(false));
    let next = Next {
        first,
        layers,
        inner,
        ran: ran.clone(),
    };
    // Building a layer's future runs its code up to the first await.
    let outcome = match catch_unwind(AssertUnwindSafe(|| next.run(call))) {
        Ok(chain) => CatchUnwind(chain).await,
        Err(payload) => Err(payload),
    };
    outcome.unwrap_or_else(|payload| {
        let message = report_panic("a tool-call layer", wire_name, &*payload);
        failed(wire_name, ran.load(Ordering::Acquire), &message)
    })
}

/// A call stopped by a host layer's or hook's failure (`message`): refused
/// before the tool ran; after, an error result that says it ran.
pub(crate) fn failed(wire_name: &str, ran: bool, message: &str) -> CallOutcome {
    if ran {
        // The tool did run, so the model must not read "blocked" and
        // retry a call whose side effects already happened.
        Ok(ToolResult::error(format!(
            "tool `{wire_name}` ran, but its result was withheld: a host hook failed: {message}"
        ))
        .with_details(json!({ "error": "hook_failed" })))
    } else {
        Err(InvokeError::Blocked {
            tool: wire_name.to_owned(),
            reason: format!("a host hook failed: {message}"),
        })
    }
}

/// Reports a hook's or layer's panic as a diagnostic; returns the panic
/// message.
pub(crate) fn report_panic(
    which: &str,
    wire_name: &str,
    payload: &(dyn std::any::Any + Send),
) -> String {
    let message = panic_message(payload);
    Diagnostic::new(
        Severity::Error,
        DiagnosticKind::HookFailed,
        None,
        format!("{which} panicked on `{wire_name}`: {message}"),
    );
    message
}
