//! What a call takes and returns around the tool itself: per-call
//! options, the host's own failures (`InvokeError`), and the small futures
//! wrapped around a call — panic isolation, error redaction, errors as
//! results. They are hand-written, pin-projected futures rather than more
//! `async fn` layers, because each layer would copy the call's whole state.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::diagnostic::panic_message;
use super::scope::UserScope;
use crate::args::ArgError;
use crate::invocation::{ProgressSink, ToolInvocation};
use crate::result::ToolResult;

/// Per-call options for [`UserScope::call`].
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Cancels the call; the host stops awaiting it at once.
    pub cancel: Option<CancellationToken>,
    /// Receives progress updates (already redacted).
    pub progress: Option<ProgressSink>,
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("cancel", &self.cancel.is_some())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// Why a call did not produce the tool's own result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvokeError {
    /// No published tool has this name.
    #[error("unknown tool `{0}`")]
    UnknownTool(String),
    /// The tool exists but its toolset failed to build for this user.
    #[error("tool `{0}` is not available for this user: its toolset failed to start")]
    Unavailable(String),
    /// Approval was denied (or nobody could be asked).
    #[error("tool `{tool}` was not approved{}", reason_suffix(.reason))]
    Denied {
        /// The tool.
        tool: String,
        /// Why, when given.
        reason: Option<String>,
    },
    /// A host hook blocked the call.
    #[error("tool `{tool}` was blocked: {reason}")]
    Blocked {
        /// The tool.
        tool: String,
        /// The hook's reason.
        reason: String,
    },
    /// The arguments did not fit the tool's parameters.
    #[error("invalid arguments for tool `{tool}`: {error}")]
    InvalidArguments {
        /// The tool.
        tool: String,
        /// Every problem, with JSON paths.
        error: ArgError,
    },
    /// The tool's body panicked.
    #[error("tool `{tool}` failed unexpectedly: {message}")]
    Panicked {
        /// The tool.
        tool: String,
        /// The panic message.
        message: String,
    },
    /// The call was cancelled.
    #[error("tool `{0}` was cancelled")]
    Cancelled(String),
}

fn reason_suffix(reason: &Option<String>) -> String {
    reason
        .as_ref()
        .map(|r| format!(": {r}"))
        .unwrap_or_default()
}

impl InvokeError {
    /// A short machine-readable kind: `unknown_tool`, `denied`, ...
    pub fn kind(&self) -> &'static str {
        match self {
            Self::UnknownTool(_) => "unknown_tool",
            Self::Unavailable(_) => "unavailable",
            Self::Denied { .. } => "denied",
            Self::Blocked { .. } => "blocked",
            Self::InvalidArguments { .. } => "invalid_arguments",
            Self::Panicked { .. } => "panicked",
            Self::Cancelled(_) => "cancelled",
        }
    }

    /// Whether the host refused the call (approval or a hook) rather than
    /// the tool failing.
    pub fn is_refusal(&self) -> bool {
        matches!(self, Self::Denied { .. } | Self::Blocked { .. })
    }

    /// The error as a result the model can act on.
    pub fn into_tool_result(self) -> ToolResult {
        let details = json!({ "error": self.kind() });
        ToolResult::error(self.to_string()).with_details(details)
    }
}

/// Polls a future, turning a panic into an error.
pub(super) struct CatchUnwind<F>(pub(super) F);

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

/// Where a [`Call`] is.
pub(super) enum Stage<'a> {
    /// Not polled yet.
    Start,
    /// Waiting on hooks, approval or an async tool.
    Slow(SlowCall<'a>),
    /// Finished.
    Done,
}

/// What a caller passes besides the arguments: [`CallOptions`], or nothing
/// at all (`()`), so that a call without options has none to check.
pub(super) trait Passed: Default + Send + Unpin {
    /// The options as the call needs them.
    fn into_options(self) -> Option<CallOptions>;
}

impl Passed for CallOptions {
    #[inline]
    fn into_options(self) -> Option<CallOptions> {
        Some(self)
    }
}

impl Passed for () {
    #[inline]
    fn into_options(self) -> Option<CallOptions> {
        None
    }
}

/// What a kind of call takes and how it reports: [`UserScope::call`] tells
/// refusals apart, [`UserScope::invoke`] turns them into error results.
pub(super) trait Mode {
    /// What the caller passes besides the arguments.
    type Options: Passed;
    /// What the future yields.
    type Output;
    /// The tool's result, as the caller wants it.
    fn ok(result: ToolResult) -> Self::Output;
    /// A failure, already redacted, as the caller wants it.
    fn err(error: InvokeError) -> Self::Output;
}

/// [`UserScope::call`]: options, errors kept apart.
pub(super) struct Checked;

impl Mode for Checked {
    type Options = CallOptions;
    type Output = Result<ToolResult, InvokeError>;

    #[inline]
    fn ok(result: ToolResult) -> Self::Output {
        Ok(result)
    }

    #[inline]
    fn err(error: InvokeError) -> Self::Output {
        Err(error)
    }
}

/// [`UserScope::invoke`] (`O = ()`) and [`UserScope::invoke_with`]
/// (`O = CallOptions`): errors as error results.
pub(super) struct Results<O>(PhantomData<O>);

impl<O: Passed> Mode for Results<O> {
    type Options = O;
    type Output = ToolResult;

    #[inline]
    fn ok(result: ToolResult) -> ToolResult {
        result
    }

    #[inline]
    fn err(error: InvokeError) -> ToolResult {
        error.into_tool_result()
    }
}

/// The future of a call; its errors are redacted before they leave. It
/// holds no state machine of its own (the slow path is boxed), and the
/// arguments and options stay in their own fields until the call starts,
/// taken from there straight into the tool's dispatch.
pub(super) struct Call<'a, M: Mode> {
    pub(super) scope: &'a UserScope,
    pub(super) wire_name: &'a str,
    /// The arguments, taken (leaving `null`) when the call starts.
    pub(super) args: Value,
    /// The caller's options, taken when the call starts.
    pub(super) options: M::Options,
    /// The handle of a call run in place, kept until the future is dropped.
    pub(super) handle: Option<ToolInvocation<'a>>,
    pub(super) stage: Stage<'a>,
}

impl<'a, M: Mode> Call<'a, M> {
    pub(super) fn new(
        scope: &'a UserScope,
        wire_name: &'a str,
        args: Value,
        options: M::Options,
    ) -> Self {
        Self {
            scope,
            wire_name,
            args,
            options,
            handle: None,
            stage: Stage::Start,
        }
    }
}

impl<M: Mode> Future for Call<'_, M> {
    type Output = M::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<M::Output> {
        let this = &mut *self;
        let scope = this.scope;
        match &mut this.stage {
            Stage::Start => match scope.find(this.wire_name) {
                Ok((tool, toolset)) if scope.runs_in_place(tool) => {
                    this.stage = Stage::Done;
                    let options = std::mem::take(&mut this.options).into_options();
                    Poll::Ready(scope.run_in_place::<M>(
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
                    Poll::Ready(scope.refuse::<M>(e))
                }
            },
            Stage::Slow(fut) => match fut.as_mut().poll(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(outcome) => {
                    this.stage = Stage::Done;
                    Poll::Ready(match outcome {
                        Ok(result) => M::ok(result),
                        Err(e) => scope.refuse::<M>(e),
                    })
                }
            },
            // The `Future` contract lets this panic, as an `async fn` does.
            #[allow(clippy::panic)]
            Stage::Done => panic!("a tool call's future was polled after it completed"),
        }
    }
}

pin_project_lite::pin_project! {
    /// Turns a call's error into an error result.
    pub(super) struct AsResult<F> {
        #[pin]
        pub(super) inner: F,
    }
}

impl<F: Future<Output = Result<ToolResult, InvokeError>>> Future for AsResult<F> {
    type Output = ToolResult;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<ToolResult> {
        match self.project().inner.poll(cx) {
            Poll::Ready(Ok(result)) => Poll::Ready(result),
            Poll::Ready(Err(e)) => Poll::Ready(e.into_tool_result()),
            Poll::Pending => Poll::Pending,
        }
    }
}

pub(super) fn panicked(wire_name: &str, payload: &(dyn Any + Send)) -> InvokeError {
    InvokeError::Panicked {
        tool: wire_name.to_owned(),
        message: panic_message(payload),
    }
}
