//! The future of a call and the small futures around the tool itself:
//! panic isolation and the caller's form of the outcome.
//!
//! They are hand-written futures rather than more `async fn` layers,
//! because each layer would copy the call's whole state. The call's future
//! holds no state machine of its own (the slow path is boxed), and the
//! arguments and options stay in their own fields until the call starts,
//! taken from there straight into the tool's dispatch.

use std::any::Any;
use std::future::Future;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::Value;

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::pipeline::Pipeline;
use super::{Arguments, CallOptions, InvokeError, StartHook};
use crate::host::approval::ApprovalHandler;
use crate::host::layer::ToolLayer;
use crate::host::scope::UserScope;
use crate::interaction::InteractionHandler;
use crate::tool::{LogSink, ProgressSink, ToolInvocation, ToolLog, ToolProgress, ToolResult};

mod private {
    pub trait Sealed {}
}

/// What a caller passes besides the arguments: [`CallOptions`], or nothing
/// at all (`()`), so that a call without options has none to check.
pub trait Passed: private::Sealed + Default + Send + Unpin {
    /// The options as the call needs them.
    #[doc(hidden)]
    fn into_options(self) -> Option<CallOptions>;
    /// Whether the options let a call run in place (no start hook to
    /// await, no layer of its own).
    #[doc(hidden)]
    fn allow_in_place(&self) -> bool;
}

impl private::Sealed for CallOptions {}
impl Passed for CallOptions {
    #[inline]
    fn into_options(self) -> Option<CallOptions> {
        Some(self)
    }

    #[inline]
    fn allow_in_place(&self) -> bool {
        self.start.is_none() && self.layer.is_none()
    }
}

impl private::Sealed for () {}
impl Passed for () {
    #[inline]
    fn into_options(self) -> Option<CallOptions> {
        None
    }

    #[inline]
    fn allow_in_place(&self) -> bool {
        true
    }
}

/// How a call reports: [`ToolResult`] turns host refusals and failures into
/// error results; `Result<ToolResult, InvokeError>` keeps them apart.
pub trait Report: private::Sealed + Sized {
    /// The tool's result, as the caller wants it.
    #[doc(hidden)]
    fn ok(result: ToolResult) -> Self;
    /// A failure, already redacted, as the caller wants it.
    #[doc(hidden)]
    fn err(error: InvokeError) -> Self;
}

impl private::Sealed for ToolResult {}
impl Report for ToolResult {
    #[inline]
    fn ok(result: ToolResult) -> Self {
        result
    }

    #[inline]
    fn err(error: InvokeError) -> Self {
        error.into_tool_result()
    }
}

impl private::Sealed for Result<ToolResult, InvokeError> {}
impl Report for Result<ToolResult, InvokeError> {
    #[inline]
    fn ok(result: ToolResult) -> Self {
        Ok(result)
    }

    #[inline]
    fn err(error: InvokeError) -> Self {
        Err(error)
    }
}

/// Polls a future, turning a panic into an error.
pub(in crate::host) struct CatchUnwind<F>(pub(in crate::host) F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let fut = &mut self.0;
        match catch_unwind(AssertUnwindSafe(|| Pin::new(fut).poll(cx))) {
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}

/// A boxed call that could not finish in place.
pub(super) type SlowCall<'a> =
    Pin<Box<dyn Future<Output = Result<ToolResult, InvokeError>> + Send + 'a>>;

/// Where an [`Invoke`] is.
enum Stage<'a> {
    /// Not polled yet.
    Start,
    /// Waiting on hooks, approval or an async tool.
    Slow(SlowCall<'a>),
    /// Finished.
    Done,
}

/// A call of one tool: set options with its methods, then await it.
///
/// `O` is `()` until an option is set, then [`CallOptions`], so a call
/// without options carries none to check; `R` is what awaiting yields,
/// [`ToolResult`] or, after [`checked`](Self::checked),
/// `Result<ToolResult, InvokeError>`. Nothing happens until it is first
/// polled; options set after that are ignored. Errors are redacted before
/// they leave.
///
/// ```
/// use oscova_core::prelude::*;
/// use oscova_core::host::invoke::Arguments;
///
/// pub struct EchoToolset;
/// #[toolset]
/// impl EchoToolset {
///     /// Returns the text.
///     pub fn echo(text: String) -> String { text }
/// }
/// #[plugin(id = "demo.echo")]
/// pub struct EchoPlugin;
/// impl AgentPlugin for EchoPlugin {
///     fn configure(&self, b: &mut AgentPluginBuilder) {
///         b.add_toolset(|_: &AgentPluginContext| EchoToolset);
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let host = PluginHost::builder().plugins(oscova_core::linked_plugins![EchoPlugin]).build()?;
/// let scope = host.user_scope(UserInfo::new("alice"));
/// let cancel = CancellationToken::new();
/// let result = scope
///     .invoke("demo_echo__echo__echo", Arguments::json(r#"{"text": "hi"}"#))
///     .cancellation(cancel)
///     .progress(|p: ToolProgress| eprintln!("{}", p.message))
///     .await;
/// assert_eq!(result.content, "hi");
///
/// let refused = scope.invoke("demo_echo__echo__nope", json!({})).checked().await;
/// assert_eq!(refused.unwrap_err().kind(), "unknown_tool");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[must_use = "an Invoke does nothing until it is awaited"]
pub struct Invoke<'a, O: Passed = (), R: Report = ToolResult> {
    scope: &'a UserScope,
    wire_name: &'a str,
    /// The arguments, taken (leaving `null`) when the call starts.
    args: Value,
    /// Arguments given as JSON text, parsed into `args` when the call starts.
    text: Option<&'a str>,
    /// The caller's options, taken when the call starts.
    options: O,
    /// The handle of a call run in place, kept until the future is dropped.
    handle: Option<ToolInvocation<'a>>,
    stage: Stage<'a>,
    report: PhantomData<fn() -> R>,
}

impl<'a, O: Passed, R: Report> Invoke<'a, O, R> {
    #[inline]
    pub(in crate::host) fn new(
        scope: &'a UserScope,
        wire_name: &'a str,
        args: Arguments<'a>,
        options: O,
    ) -> Self {
        let (args, text) = match args {
            Arguments::Value(value) => (value, None),
            Arguments::Json(text) => (Value::Null, Some(text)),
        };
        Self {
            scope,
            wire_name,
            args,
            text,
            options,
            handle: None,
            stage: Stage::Start,
            report: PhantomData,
        }
    }

    /// The same call with room for options. A call already started keeps
    /// its stage (and so ignores options set now): the stage and the
    /// handle do not depend on `O` or `R`.
    fn with_options(self) -> Invoke<'a, CallOptions, R> {
        Invoke {
            scope: self.scope,
            wire_name: self.wire_name,
            args: self.args,
            text: self.text,
            options: self.options.into_options().unwrap_or_default(),
            handle: self.handle,
            stage: self.stage,
            report: PhantomData,
        }
    }

    /// Cancels the call when `token` is cancelled: the host stops awaiting
    /// it at once (or once the body has had its
    /// [`cancellation_grace`](Self::cancellation_grace)), and the tool sees
    /// the token through its invocation.
    pub fn cancellation(self, token: CancellationToken) -> Invoke<'a, CallOptions, R> {
        let mut call = self.with_options();
        call.options.cancel = Some(token);
        call
    }

    /// Gives a cancelled call's body up to `grace` to clean up: when the
    /// [`cancellation`](Self::cancellation) token fires while an async
    /// body runs, the host keeps polling the body (which sees the token
    /// through [`ToolInvocation::cancellation_token`]) instead of dropping
    /// it at once. A body that returns within `grace` ends the call with its
    /// own result (a partial answer, or its own error saying what it
    /// undid); one still running after `grace` is dropped and the call ends
    /// [`InvokeError::Cancelled`]. Without a grace period (the default) the
    /// host stops awaiting at once. Approval and other waits before the
    /// body starts are cut short either way.
    ///
    /// ```
    /// use std::time::Duration;
    /// use oscova_core::prelude::*;
    ///
    /// pub struct SlowToolset;
    /// #[toolset]
    /// impl SlowToolset {
    ///     /// Waits until cancelled, then says so.
    ///     pub async fn wait(invocation: &ToolInvocation<'_>) -> String {
    ///         invocation.cancellation_token().cancelled().await;
    ///         "stopped cleanly".to_owned()
    ///     }
    /// }
    /// #[plugin(id = "demo.slow")]
    /// pub struct SlowPlugin;
    /// impl AgentPlugin for SlowPlugin {
    ///     fn configure(&self, b: &mut AgentPluginBuilder) {
    ///         b.add_toolset(|_: &AgentPluginContext| SlowToolset);
    ///     }
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let host = PluginHost::builder().plugins(oscova_core::linked_plugins![SlowPlugin]).build()?;
    /// let scope = host.user_scope(UserInfo::new("alice"));
    /// let cancel = CancellationToken::new();
    /// let call = scope
    ///     .invoke("demo_slow__slow__wait", json!({}))
    ///     .cancellation(cancel.clone())
    ///     .cancellation_grace(Duration::from_secs(5));
    /// let (result, ()) = tokio::join!(call, async { cancel.cancel() });
    /// assert_eq!(result.content, "stopped cleanly");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn cancellation_grace(self, grace: Duration) -> Invoke<'a, CallOptions, R> {
        let mut call = self.with_options();
        call.options.grace = Some(grace);
        call
    }

    /// Sends the tool's progress updates (already redacted) to `sink`.
    pub fn progress(
        self,
        sink: impl Fn(ToolProgress) + Send + Sync + 'static,
    ) -> Invoke<'a, CallOptions, R> {
        self.progress_arc(Arc::new(sink) as ProgressSink)
    }

    /// [`progress`](Self::progress) with a sink the caller already holds,
    /// or none (`None`): for callers that report progress only sometimes.
    pub fn progress_arc(self, sink: impl Into<Option<ProgressSink>>) -> Invoke<'a, CallOptions, R> {
        let mut call = self.with_options();
        call.options.progress = sink.into();
        call
    }

    /// Asks `handler` instead of the host's approval handler, for this call
    /// only, when the tool needs approval (for example: a client that
    /// already asked the person). The host's policy still decides whether
    /// the tool needs approval at all.
    pub fn approval_handler(self, handler: impl ApprovalHandler) -> Invoke<'a, CallOptions, R> {
        self.approval_handler_arc(Arc::new(handler) as Arc<dyn ApprovalHandler>)
    }

    /// [`approval_handler`](Self::approval_handler) with a handler the
    /// caller already holds, or none (the host's).
    pub fn approval_handler_arc(
        self,
        handler: impl Into<Option<Arc<dyn ApprovalHandler>>>,
    ) -> Invoke<'a, CallOptions, R> {
        let mut call = self.with_options();
        call.options.approval = handler.into();
        call
    }

    /// Answers the tool's questions ([`ToolInvocation::ask`] and its
    /// forms) with `handler`, for this call only, instead of the host's
    /// [`interaction_handler`](crate::PluginHostBuilder::interaction_handler).
    pub fn interaction_handler(
        self,
        handler: impl InteractionHandler,
    ) -> Invoke<'a, CallOptions, R> {
        self.interaction_handler_arc(Arc::new(handler) as Arc<dyn InteractionHandler>)
    }

    /// [`interaction_handler`](Self::interaction_handler) with a handler
    /// the caller already holds, or none (the host's).
    pub fn interaction_handler_arc(
        self,
        handler: impl Into<Option<Arc<dyn InteractionHandler>>>,
    ) -> Invoke<'a, CallOptions, R> {
        let mut call = self.with_options();
        call.options.interaction = handler.into();
        call
    }

    /// Sends the tool's log messages ([`ToolInvocation::log`], already
    /// redacted) to `sink` as well as to tracing.
    pub fn log(self, sink: impl Fn(ToolLog) + Send + Sync + 'static) -> Invoke<'a, CallOptions, R> {
        self.log_arc(Arc::new(sink) as LogSink)
    }

    /// [`log`](Self::log) with a sink the caller already holds, or none.
    pub fn log_arc(self, sink: impl Into<Option<LogSink>>) -> Invoke<'a, CallOptions, R> {
        let mut call = self.with_options();
        call.options.log = sink.into();
        call
    }

    /// Awaits `hook` once the call passed the layers and approval,
    /// just before the tool's body runs; an error from it stops the call
    /// (nothing of the tool runs) as [`InvokeError::Blocked`] with the
    /// hook's reason. For a caller that must record, durably, that a call
    /// started before it can have any effect.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use oscova_core::prelude::*;
    ///
    /// pub struct EchoToolset;
    /// #[toolset]
    /// impl EchoToolset {
    ///     /// Returns the text.
    ///     pub fn echo(text: String) -> String { text }
    /// }
    /// #[plugin(id = "demo.echo")]
    /// pub struct EchoPlugin;
    /// impl AgentPlugin for EchoPlugin {
    ///     fn configure(&self, b: &mut AgentPluginBuilder) {
    ///         b.add_toolset(|_: &AgentPluginContext| EchoToolset);
    ///     }
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let host = PluginHost::builder().plugins(oscova_core::linked_plugins![EchoPlugin]).build()?;
    /// let scope = host.user_scope(UserInfo::new("alice"));
    /// let started = Arc::new(Mutex::new(Vec::new()));
    /// let marks = started.clone();
    /// let result = scope
    ///     .invoke("demo_echo__echo__echo", json!({"text": "hi"}))
    ///     .start_hook(move |tool: &str| {
    ///         marks.lock().unwrap().push(tool.to_owned());
    ///         async { Ok(()) }
    ///     })
    ///     .await;
    /// assert_eq!(result.content, "hi");
    /// assert_eq!(*started.lock().unwrap(), ["demo_echo__echo__echo"]);
    ///
    /// let stopped = scope
    ///     .invoke("demo_echo__echo__echo", json!({"text": "hi"}))
    ///     .start_hook(|_: &str| async { Err("the store is down".to_owned()) })
    ///     .checked()
    ///     .await;
    /// assert_eq!(stopped.unwrap_err().kind(), "blocked");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn start_hook(self, hook: impl StartHook) -> Invoke<'a, CallOptions, R> {
        self.start_hook_arc(Arc::new(hook) as Arc<dyn StartHook>)
    }

    /// [`start_hook`](Self::start_hook) with a hook the caller already
    /// holds, or none.
    pub fn start_hook_arc(
        self,
        hook: impl Into<Option<Arc<dyn StartHook>>>,
    ) -> Invoke<'a, CallOptions, R> {
        let mut call = self.with_options();
        call.options.start = hook.into();
        call
    }

    /// Runs `layer` around this call, outside the host's hooks and layers
    /// (see [`layer`](crate::host::layer)): for a caller with a step of its
    /// own around each call, as the session agent dispatches its
    /// extensions' `tool_call` and `tool_result` events. A call with a
    /// layer of its own never runs in place.
    pub fn layer(self, layer: impl ToolLayer) -> Invoke<'a, CallOptions, R> {
        self.layer_arc(Arc::new(layer) as Arc<dyn ToolLayer>)
    }

    /// [`layer`](Self::layer) with a layer the caller already holds, or
    /// none.
    pub fn layer_arc(
        self,
        layer: impl Into<Option<Arc<dyn ToolLayer>>>,
    ) -> Invoke<'a, CallOptions, R> {
        let mut call = self.with_options();
        call.options.layer = layer.into();
        call
    }

    /// Yields `Result<ToolResult, InvokeError>` instead: host refusals and
    /// failures (unknown tool, denied, blocked, bad arguments, a panic,
    /// cancellation) as `Err`, the tool's own result (which may itself be an
    /// error result) as `Ok`.
    pub fn checked(self) -> Invoke<'a, O, Result<ToolResult, InvokeError>> {
        Invoke {
            scope: self.scope,
            wire_name: self.wire_name,
            args: self.args,
            text: self.text,
            options: self.options,
            handle: self.handle,
            stage: self.stage,
            report: PhantomData,
        }
    }
}

impl<O: Passed + std::fmt::Debug, R: Report> std::fmt::Debug for Invoke<'_, O, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Invoke")
            .field("wire_name", &self.wire_name)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl<O: Passed, R: Report> Future for Invoke<'_, O, R> {
    type Output = R;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<R> {
        let this = &mut *self;
        let scope = Pipeline(this.scope);
        match &mut this.stage {
            Stage::Start => {
                let found = scope
                    .find(this.wire_name)
                    .and_then(|found| match this.text.take() {
                        None => Ok(found),
                        Some(text) => scope.parse_text(this.wire_name, text).map(|args| {
                            this.args = args;
                            found
                        }),
                    });
                match found {
                    Ok((tool, toolset))
                        if this.options.allow_in_place() && scope.runs_in_place(tool) =>
                    {
                        this.stage = Stage::Done;
                        let options = std::mem::take(&mut this.options).into_options();
                        Poll::Ready(scope.run_in_place::<R>(
                            this.wire_name,
                            tool,
                            toolset,
                            &mut this.args,
                            options,
                            &mut this.handle,
                        ))
                    }
                    Ok((tool, toolset)) => {
                        let args = std::mem::take(&mut this.args);
                        let options = std::mem::take(&mut this.options).into_options();
                        let fut = scope.slow(
                            this.wire_name,
                            tool,
                            toolset,
                            args,
                            options.unwrap_or_default(),
                        );
                        this.stage = Stage::Slow(fut);
                        self.poll(cx)
                    }
                    Err(e) => {
                        this.stage = Stage::Done;
                        Poll::Ready(scope.refuse_unfound::<R>(this.wire_name, e))
                    }
                }
            }
            Stage::Slow(fut) => match fut.as_mut().poll(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(outcome) => {
                    this.stage = Stage::Done;
                    Poll::Ready(match outcome {
                        Ok(result) => R::ok(result),
                        Err(e) => scope.refuse::<R>(e),
                    })
                }
            },
            // The `Future` contract lets this panic, as an `async fn` does.
            #[allow(clippy::panic)]
            Stage::Done => panic!("a tool call's future was polled after it completed"),
        }
    }
}

pub(super) fn panicked(wire_name: &str, payload: &(dyn Any + Send)) -> InvokeError {
    InvokeError::Panicked {
        tool: wire_name.to_owned(),
        message: crate::diagnostic::panic_message(payload),
    }
}
