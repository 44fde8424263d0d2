//! The invoke pipeline: what [`UserScope::invoke`] runs, in order.
//!
//! Rules: the name is looked up first (an unknown name is cut to a few
//! hundred bytes in the error), then JSON text is parsed strictly, then
//! the layers (`layers.rs`: the call's own, the host's hooks, the host's
//! layers) around the rest: approval (the call's own handler, else the
//! host's), the call's start hook (its error stops the call), dispatch
//! under the tool's network scope with panics caught, redaction of every
//! text the call returns. A cancelled call stops
//! waiting at once, whether for a person's answer or for the tool, unless
//! the caller gave the tool's body a grace period to clean up in. Errors
//! are redacted like results: they carry text from tools (panic messages,
//! echoed argument values).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::future::{CatchUnwind, Report, SlowCall, panicked};
use super::{CallOptions, InvokeError, StartHook};
use crate::args::ArgError;
use crate::host::approval::{ApprovalDecision, ApprovalRequest};
use crate::host::layer::{Innermost, ToolCall};
use crate::host::publish::PublishedTool;
use crate::host::scope::UserScope;
use crate::http;
use crate::tool::span;
use crate::tool::{
    Dispatched, NetworkScope, ProgressSink, ToolInvocation, ToolProgress, ToolResult, Toolset,
};

/// `#[toolset]` marks every async method, so a synchronous tool returning a
/// future has a hand-made `ToolInfo` that does not match its dispatch.
#[cold]
fn not_synchronous(wire_name: &str) -> InvokeError {
    InvokeError::Panicked {
        tool: wire_name.to_owned(),
        message: "the toolset declared this tool synchronous, but calling it returned a future"
            .to_owned(),
    }
}

/// Whether the caller cancelled the call before it started.
fn is_cancelled(options: &CallOptions) -> bool {
    options
        .cancel
        .as_ref()
        .is_some_and(CancellationToken::is_cancelled)
}

#[cold]
fn invalid_arguments(wire_name: &str, error: ArgError) -> InvokeError {
    InvokeError::InvalidArguments {
        tool: wire_name.to_owned(),
        error,
    }
}

/// Whether this task runs on a multi-threaded tokio runtime, the only kind
/// `block_in_place` can hand a worker's other tasks away from.
fn off_worker_possible() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
}

/// The pipeline over one user scope: what an [`Invoke`](super::Invoke)
/// runs. A copy of a reference, so its steps take it by value and what
/// they return borrows the scope, not the pipeline.
#[derive(Clone, Copy)]
pub(super) struct Pipeline<'s>(pub(super) &'s UserScope);

impl<'s> Pipeline<'s> {
    /// Parses arguments given as JSON text, strictly and within the host's
    /// size cap.
    pub(super) fn parse_text(self, wire_name: &str, text: &str) -> Result<Value, InvokeError> {
        crate::args::parse_arguments(text, self.0.inner.host.policy.max_argument_bytes)
            .map_err(|error| invalid_arguments(wire_name, error))
    }

    /// Whether a call of `tool` can run to completion in place: a
    /// synchronous method with no layer or hook and no approval to ask,
    /// whose body is not to run off the runtime's workers (`pace.rs`).
    #[inline]
    pub(super) fn runs_in_place(self, tool: &PublishedTool) -> bool {
        let host = &*self.0.inner.host;
        let info = tool.info();
        !info.is_async()
            && host.policy.layers.is_empty()
            && (host.policy.blocking.is_none() || !tool.pace.is_slow())
            && !host.policy.approval.needs_approval(info)
    }

    /// Runs a call that [`runs_in_place`](Self::runs_in_place), taking the
    /// arguments and options out of the call's future. The call's handle is
    /// left in `handle`, the future's own slot, and dropped with the future:
    /// dropping it here, between the tool's return and this function's,
    /// made the result take one more copy.
    #[inline]
    pub(super) fn run_in_place<R: Report>(
        self,
        wire_name: &str,
        tool: &'s PublishedTool,
        toolset: &dyn Toolset,
        args: &mut Value,
        options: Option<CallOptions>,
        handle: &mut Option<ToolInvocation<'s>>,
    ) -> R {
        // The slot is empty (a call starts once): filling it this way, not
        // with `insert`, leaves no drop of its old value to call (10
        // instructions a call in the small-tool bench).
        let invocation = handle.get_or_insert_with(|| {
            ToolInvocation::borrowing(&self.0.inner.calls, tool.wire_name())
        });
        invocation.start_span(tool.plugin_id());
        if let Some(options) = options {
            if is_cancelled(&options) {
                let span = invocation.span();
                let _span = span.enter();
                return self.fail::<R>(span, InvokeError::Cancelled(wire_name.to_owned()));
            }
            self.attach(invocation, options);
        }
        let invocation = &*invocation;
        let span = invocation.span();
        let _entered = span.enter();
        // A host that decides where synchronous bodies run times them
        // (`pace.rs`). The result is finished and recorded where the
        // dispatch left it, then moved once, straight into the caller's
        // form: every move of it in between (into a local, into a `Result`)
        // showed up as a copy in the small-tool bench, and recording it
        // after taking it out cost two more (about 30 instructions).
        let mut outcome = if self.0.inner.host.policy.blocking.is_some() {
            self.dispatch_timed(tool, toolset, args, invocation)
        } else {
            self.dispatch(tool, toolset, args, invocation)
        };
        if let Ok(Ok(Dispatched::Ready(result))) = &mut outcome {
            self.redact_result(result);
            span::record_result(span, result);
        }
        match outcome {
            Ok(Ok(Dispatched::Ready(result))) => R::ok(result),
            failed => self.failed_dispatch::<R>(span, wire_name, failed),
        }
    }

    /// A dispatch that gave no result: a synchronous tool that returned a
    /// future, arguments refused, or a panic.
    #[cold]
    #[inline(never)]
    fn failed_dispatch<R: Report>(
        self,
        span: &tracing::Span,
        wire_name: &str,
        outcome: std::thread::Result<Result<Dispatched<'_>, ArgError>>,
    ) -> R {
        let error = match outcome {
            Ok(Ok(Dispatched::Pending(_))) => not_synchronous(wire_name),
            Ok(Err(error)) => invalid_arguments(wire_name, error),
            Err(payload) => panicked(wire_name, &*payload),
            // Finished above; never reaches here.
            Ok(Ok(Dispatched::Ready(result))) => return R::ok(result),
        };
        self.fail::<R>(span, error)
    }

    /// A call's failure, recorded in its span, redacted, in the caller's form.
    #[cold]
    fn fail<R: Report>(self, span: &tracing::Span, error: InvokeError) -> R {
        span::record_error(span, error.kind());
        self.refuse(error)
    }

    /// A call refused before it found its tool (an unknown name, arguments
    /// that are not JSON): a span of its own records it, named with the
    /// name cut short, since it is whatever the model sent.
    #[cold]
    pub(super) fn refuse_unfound<R: Report>(self, wire_name: &str, error: InvokeError) -> R {
        if tracing::enabled!(target: span::TARGET, tracing::Level::INFO) {
            let span =
                span::call_span(&crate::args::shorten(wire_name), "", self.0.inner.user.id());
            span::record_error(&span, error.kind());
        }
        self.refuse(error)
    }

    /// A call's failure, redacted, in the caller's form.
    #[cold]
    pub(super) fn refuse<R: Report>(self, error: InvokeError) -> R {
        R::err(self.redact_error(error))
    }

    /// Boxes the slow path, out of line so that the in-place path's frame
    /// does not carry the whole state machine.
    #[inline(never)]
    pub(super) fn slow<'a>(
        self,
        wire_name: &'a str,
        tool: &'a PublishedTool,
        toolset: &'a dyn Toolset,
        args: Value,
        options: CallOptions,
    ) -> SlowCall<'a>
    where
        's: 'a,
    {
        use tracing::Instrument as _;
        let span = span::call_span(wire_name, tool.plugin_id(), self.0.inner.user.id());
        let call = self.call_slow(wire_name, tool, toolset, args, options, span.clone());
        let recorded = span.clone();
        Box::pin(
            async move {
                let outcome = call.await;
                match &outcome {
                    Ok(result) => span::record_result(&recorded, result),
                    Err(error) => span::record_error(&recorded, error.kind()),
                }
                outcome
            }
            .instrument(span),
        )
    }

    /// The published tool and this user's instance of its toolset.
    #[inline]
    pub(super) fn find(
        self,
        wire_name: &str,
    ) -> Result<(&'s PublishedTool, &'s dyn Toolset), InvokeError> {
        let host = &*self.0.inner.host;
        let tool = host
            .catalog
            .tool(wire_name)
            .ok_or_else(|| InvokeError::UnknownTool(wire_name.to_owned()))?;
        match self.0.inner.toolsets.get(tool.slot) {
            Some(Some(toolset)) => Ok((tool, &**toolset)),
            _ => Err(InvokeError::Unavailable(wire_name.to_owned())),
        }
    }

    /// The rest of a call that can wait: the layers around the rest.
    async fn call_slow(
        self,
        wire_name: &str,
        tool: &PublishedTool,
        toolset: &dyn Toolset,
        args: Value,
        mut options: CallOptions,
        span: tracing::Span,
    ) -> Result<ToolResult, InvokeError> {
        let own = options.layer.take();
        if !super::layers::has_layers(self.0, own.as_deref()) {
            return self
                .call_rest(wire_name, tool, toolset, args, options, span)
                .await;
        }
        let cancel = options.cancel.clone();
        let call = ToolCall::new(tool.wire_name(), tool.info(), &self.0.inner.user, args)
            .with_cancellation(cancel.as_ref());
        let rest: Innermost<'_> = Box::new(move |call: ToolCall<'_>| {
            Box::pin(self.call_rest(wire_name, tool, toolset, call.arguments, options, span))
        });
        super::layers::through(self.0, own.as_deref(), call, rest).await
    }

    /// The rest of a call after the layers: approval, the start hook, the
    /// tool (sync bodies in place or off the workers, async ones awaited
    /// under the tool's network scope, with panics caught and cancellation
    /// honoured even when the body ignores it), redaction.
    async fn call_rest(
        self,
        wire_name: &str,
        tool: &PublishedTool,
        toolset: &dyn Toolset,
        mut args: Value,
        options: CallOptions,
        span: tracing::Span,
    ) -> Result<ToolResult, InvokeError> {
        let scope = &*self.0.inner;
        let host = &*scope.host;
        let info = tool.info();
        if host.policy.approval.needs_approval(info) {
            let handler = options
                .approval
                .as_deref()
                .or(host.policy.approval.handler.as_deref());
            let decision = match handler {
                None => ApprovalDecision::Deny(Some(
                    "this host has no approval handler, and the tool requires approval".to_owned(),
                )),
                Some(handler) => {
                    let request = ApprovalRequest {
                        wire_name: tool.wire_name(),
                        description: info.description(),
                        mode: info.approval(),
                        user: &scope.user,
                        arguments: &args,
                    };
                    // A cancelled call stops waiting for a person's answer.
                    match &options.cancel {
                        None => handler.approve(&request).await,
                        Some(token) => tokio::select! {
                            biased;
                            () = token.cancelled() => {
                                return Err(InvokeError::Cancelled(wire_name.to_owned()));
                            }
                            decision = handler.approve(&request) => decision,
                        },
                    }
                }
            };
            if let ApprovalDecision::Deny(reason) = decision {
                return Err(InvokeError::Denied {
                    tool: wire_name.to_owned(),
                    reason,
                });
            }
        }

        if is_cancelled(&options) {
            return Err(InvokeError::Cancelled(wire_name.to_owned()));
        }
        if let Some(hook) = &options.start {
            self.start(wire_name, tool, &**hook, options.cancel.as_ref())
                .await?;
        }
        let (cancel, grace) = (options.cancel.clone(), options.grace);
        // A host that serves many calls at once runs slow synchronous
        // bodies off the runtime's workers, a bounded number at a time, so
        // one stalls no other call; quick ones run in place (`pace.rs`).
        let permit = match &host.policy.blocking {
            Some(limit) if !info.is_async() && tool.pace.is_slow() && off_worker_possible() => {
                let permit = match &cancel {
                    None => limit.clone().acquire_owned().await,
                    Some(token) => tokio::select! {
                        biased;
                        () = token.cancelled() => {
                            return Err(InvokeError::Cancelled(wire_name.to_owned()));
                        }
                        permit = limit.clone().acquire_owned() => permit,
                    },
                };
                Some(permit)
            }
            _ => None,
        };
        let mut invocation = ToolInvocation::borrowing(&scope.calls, tool.wire_name());
        invocation.set_span(span);
        if options.interaction.is_none()
            && let Some(handler) = &host.policy.interaction
        {
            invocation.set_interaction(handler.clone());
        }
        self.attach(&mut invocation, options);
        let dispatched = if permit.as_ref().is_some_and(Result::is_ok) {
            tokio::task::block_in_place(|| {
                self.dispatch_timed(tool, toolset, &mut args, &invocation)
            })
        } else if host.policy.blocking.is_some() && !info.is_async() {
            self.dispatch_timed(tool, toolset, &mut args, &invocation)
        } else {
            self.dispatch(tool, toolset, &mut args, &invocation)
        };
        let mut result = match dispatched {
            Ok(Ok(Dispatched::Ready(result))) => result,
            Ok(Err(error)) => return Err(invalid_arguments(wire_name, error)),
            Err(payload) => return Err(panicked(wire_name, &*payload)),
            Ok(Ok(Dispatched::Pending(fut))) => {
                let running = http::scoped(info.network_scope(), CatchUnwind(fut));
                let outcome = match &cancel {
                    None => running.await,
                    Some(token) => {
                        let mut running = std::pin::pin!(running);
                        tokio::select! {
                            biased;
                            () = token.cancelled() => {
                                // The body sees the token too; with a grace
                                // period it may finish its cleanup and answer.
                                let finished = match grace {
                                    Some(grace) => tokio::time::timeout(grace, running).await.ok(),
                                    None => None,
                                };
                                finished.ok_or_else(|| InvokeError::Cancelled(wire_name.to_owned()))?
                            }
                            outcome = &mut running => outcome,
                        }
                    }
                };
                outcome.map_err(|payload| panicked(wire_name, &*payload))?
            }
        };
        self.redact_result(&mut result);
        Ok(result)
    }

    /// Awaits the call's start hook (`start_hook.rs`); its failure stops
    /// the call before the body, and so does a cancellation meanwhile.
    async fn start(
        self,
        wire_name: &str,
        tool: &PublishedTool,
        hook: &dyn StartHook,
        cancel: Option<&CancellationToken>,
    ) -> Result<(), InvokeError> {
        let started = match cancel {
            None => hook.starting(tool.wire_name()).await,
            Some(token) => tokio::select! {
                biased;
                () = token.cancelled() => {
                    return Err(InvokeError::Cancelled(wire_name.to_owned()));
                }
                started = hook.starting(tool.wire_name()) => started,
            },
        };
        started.map_err(|reason| InvokeError::Blocked {
            tool: wire_name.to_owned(),
            reason,
        })
    }

    /// Hands the caller's cancellation and progress to the call's handle.
    #[inline]
    fn attach(self, invocation: &mut ToolInvocation<'_>, options: CallOptions) {
        if let Some(token) = options.cancel {
            invocation.set_cancellation(token);
        }
        if let Some(sink) = options.progress {
            invocation.set_progress(self.redacting_sink(sink));
        }
        if let Some(handler) = options.interaction {
            invocation.set_interaction(handler);
        }
        // Log messages are redacted by the invocation itself, before
        // tracing sees them too.
        if let Some(sink) = options.log {
            invocation.set_log(sink);
        }
    }

    /// Parses the arguments and starts the method under the tool's network
    /// scope, catching a panic. The arguments are taken from where they lie
    /// only as the method is called, and the outcome is handed back as it
    /// is: each extra move of either was a copy in the small-tool bench.
    #[inline]
    fn dispatch<'a>(
        self,
        tool: &PublishedTool,
        toolset: &'a dyn Toolset,
        args: &mut Value,
        invocation: &'a ToolInvocation<'_>,
    ) -> std::thread::Result<Result<Dispatched<'a>, ArgError>> {
        let network = tool.info().network_scope();
        // A toolset's client already refuses everything outside a tool call,
        // so a `None` tool needs no task-local unless it runs inside another
        // tool's call.
        let needs_scope = network != NetworkScope::None || http::current_network_scope().is_some();
        catch_unwind(AssertUnwindSafe(|| {
            if needs_scope {
                http::scoped_sync(network, || {
                    toolset.dispatch(tool.index, std::mem::take(args), invocation)
                })
            } else {
                toolset.dispatch(tool.index, std::mem::take(args), invocation)
            }
        }))
    }

    /// [`dispatch`](Self::dispatch) of a synchronous body, timed into the
    /// tool's pace, on a host that decides by it where such bodies run.
    #[inline(never)]
    fn dispatch_timed<'a>(
        self,
        tool: &PublishedTool,
        toolset: &'a dyn Toolset,
        args: &mut Value,
        invocation: &'a ToolInvocation<'_>,
    ) -> std::thread::Result<Result<Dispatched<'a>, ArgError>> {
        let started = std::time::Instant::now();
        let outcome = self.dispatch(tool, toolset, args, invocation);
        tool.pace.record(started.elapsed());
        outcome
    }

    /// Errors carry text from tools too (panic messages, echoed argument
    /// values), so they are redacted like results. An unknown tool's name is
    /// then cut to a few hundred bytes: it is whatever the model sent, and a
    /// 10 MB name must not make a 10 MB error. Redaction comes first, since a
    /// cut could split a secret and let its first half through.
    pub(super) fn redact_error(self, error: InvokeError) -> InvokeError {
        match self.redact_error_fields(error) {
            InvokeError::UnknownTool(name) => InvokeError::UnknownTool(crate::args::shorten(&name)),
            other => other,
        }
    }

    fn redact_error_fields(self, error: InvokeError) -> InvokeError {
        let redactors = [&self.0.inner.redactor, &self.0.inner.host.policy.redactor];
        if redactors.iter().all(|r| r.is_empty()) {
            return error;
        }
        let clean = |text: String| {
            redactors
                .iter()
                .fold(text, |text, r| r.redact(&text).into_owned())
        };
        // Every field, the tool name included: an unknown tool's "name" is
        // whatever text the model sent.
        match error {
            InvokeError::UnknownTool(tool) => InvokeError::UnknownTool(clean(tool)),
            InvokeError::Unavailable(tool) => InvokeError::Unavailable(clean(tool)),
            InvokeError::Cancelled(tool) => InvokeError::Cancelled(clean(tool)),
            InvokeError::Denied { tool, reason } => InvokeError::Denied {
                tool: clean(tool),
                reason: reason.map(clean),
            },
            InvokeError::Blocked { tool, reason } => InvokeError::Blocked {
                tool: clean(tool),
                reason: clean(reason),
            },
            InvokeError::Panicked { tool, message } => InvokeError::Panicked {
                tool: clean(tool),
                message: clean(message),
            },
            InvokeError::InvalidArguments { tool, error } => InvokeError::InvalidArguments {
                tool: clean(tool),
                error: error.map_messages(clean),
            },
        }
    }

    /// Redacts a result; the check that there is nothing to redact, the
    /// common case, is inlined into the call path.
    #[inline]
    pub(super) fn redact_result(self, result: &mut ToolResult) {
        if !(self.0.inner.redactor.is_empty() && self.0.inner.host.policy.redactor.is_empty()) {
            self.redact_known(result);
        }
    }

    #[inline(never)]
    fn redact_known(self, result: &mut ToolResult) {
        for redactor in [&self.0.inner.redactor, &self.0.inner.host.policy.redactor] {
            if redactor.is_empty() {
                continue;
            }
            // Every text field: the content and each block's text, URI
            // included (bytes cannot be matched as text).
            result.for_each_text_mut(|text| {
                if let std::borrow::Cow::Owned(clean) = redactor.redact(text) {
                    *text = clean;
                }
            });
            redactor.redact_json(&mut result.details);
        }
    }

    fn redacting_sink(self, sink: ProgressSink) -> ProgressSink {
        let scope = self.0.inner.redactor.clone();
        let host = self.0.inner.host.policy.redactor.clone();
        Arc::new(move |mut progress: ToolProgress| {
            for redactor in [&scope, &host] {
                if let std::borrow::Cow::Owned(clean) = redactor.redact(&progress.message) {
                    progress.message = clean;
                }
            }
            sink(progress);
        })
    }
}
