//! Tools in a session: the user scope's and the extensions', and how one
//! call runs with its events.
//!
//! Rules: an extension registers `#[toolset]` values; each tool is known
//! by its own normalised name (`hello`), which never collides with a
//! plugin tool's wire name (those hold `__`), and the first registration
//! of a name wins. Every call, whoever's tool it is, goes the same way,
//! through the host's one shape around a call
//! ([`oscova_core::host::layer`]): the session's tool events are the
//! call's own layer (`ToolEvents`), outside the host's hooks and layers.
//! In order: `ToolCallEvent` (patch the input, or block: the reason goes
//! to the model and nothing runs), the active-tools check,
//! `ToolExecutionStart`, the host's hooks and layers (they see the input
//! as the handlers left it, so a guard the host registered once refuses
//! the call whatever an extension did), then the run (a scope tool through
//! [`UserScope::invoke`](oscova_core::UserScope::invoke): approval,
//! argument checks, redaction; an extension tool through
//! [`UserScope::layered`](oscova_core::UserScope::layered), then its
//! toolset's dispatch: the same argument check, a `Required` tool
//! confirmed by the person or refused, panics caught, the result redacted
//! with the scope's and the host's secrets), progress as
//! `ToolExecutionUpdate`, the outcome as the model reads it (a refusal
//! says the call did not run), `ToolResultEvent` (edit the result), and
//! `ToolExecutionEnd` (not for a call the session's own events stopped).
//! A name that is no tool at all is refused before the session's events
//! (only `ToolExecutionEnd` comes, with the refusal). The run is
//! inside the session's [`CallOrigin`] (its id), so a tool knows which
//! session asked; nothing in a call's arguments sets it. Once a call is
//! approved, and just before its tool's body runs, its started mark
//! ([`CALL_STARTED`](crate::session::CALL_STARTED)) is appended to the
//! session and committed (a scope tool's through the call's
//! [`StartHook`](oscova_core::host::invoke::StartHook), after the
//! pipeline's approval; an extension tool's after the person confirmed
//! it); a mark that cannot be stored stops the call, so no tool runs
//! without one. Its tool message follows when it ends (`batch.rs`).

use std::sync::{Arc, Mutex};

use oscova_core::host::layer::{CallOutcome, Next, ToolCall, ToolLayer};
use oscova_core::provider::BoxFuture;
use oscova_core::provider::model::{ChatMessage, ToolCallRequest, ToolSpec};
use oscova_core::tool::{CallOrigin, ProgressSink, ToolInfo, ToolsetInfo, with_call_origin};
use oscova_core::{
    InvokeError, ToolApprovalMode, ToolInvocation, ToolProgress, ToolResult, Toolset, UserScope,
};
use serde_json::{Value, json};

use super::context::ExtensionContext;
use super::dispatch::{CatchUnwind, dispatch};
use super::events::{
    ToolCallEvent, ToolExecutionEndEvent, ToolExecutionStartEvent, ToolExecutionUpdateEvent,
    ToolResultEvent,
};
use super::state::Shared;
use super::wait::{KeptApproval, WaitEnd, ask_kept};
use crate::chat::{ToolsPromptSection, prepare_arguments, tool_message};
use crate::profile::{SchemaProfile, export_schema};
use crate::session::EntryKind;

struct ExtensionTool {
    name: String,
    extension: usize,
    toolset: Arc<dyn Toolset>,
    info: &'static ToolsetInfo,
    index: usize,
}

/// The tools the session's extensions registered.
#[derive(Default)]
pub(crate) struct ExtensionTools {
    tools: Vec<ExtensionTool>,
}

impl ExtensionTools {
    /// Adds every tool of `info`; returns (added, already taken).
    pub(crate) fn add(
        &mut self,
        extension: usize,
        toolset: Arc<dyn Toolset>,
        info: &'static ToolsetInfo,
    ) -> (Vec<String>, Vec<String>) {
        let (mut added, mut taken) = (Vec::new(), Vec::new());
        for (index, tool) in info.tools().iter().enumerate() {
            let name = tool.name().to_owned();
            if self.tools.iter().any(|t| t.name == name) {
                taken.push(name);
                continue;
            }
            added.push(name.clone());
            self.tools.push(ExtensionTool {
                name,
                extension,
                toolset: toolset.clone(),
                info,
                index,
            });
        }
        (added, taken)
    }

    pub(crate) fn remove_extension(&mut self, extension: usize) {
        self.tools.retain(|t| t.extension != extension);
    }

    /// Whether `name` is an extension tool that runs alone.
    pub(crate) fn is_sequential(&self, name: &str) -> bool {
        self.find(name)
            .is_some_and(|(_, info, _)| info.sequential())
    }

    /// What `name`, an extension tool, says of repeating a call.
    fn idempotent(&self, name: &str) -> Option<bool> {
        self.find(name)
            .and_then(|(_, info, _)| info.annotations().idempotent())
    }

    /// Adds the prompt snippet and guidelines of the tools among `active`.
    pub(crate) fn prompt(&self, active: &[ToolSpec], section: &mut ToolsPromptSection) {
        for spec in active {
            if let Some((_, info, _)) = self.find(&spec.name) {
                let guidelines = info.prompt_guidelines().iter().map(|g| g.as_ref());
                section.tool(&spec.name, info.prompt_snippet(), guidelines);
            }
        }
    }

    pub(crate) fn names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.name.clone()).collect()
    }

    fn find(&self, name: &str) -> Option<(Arc<dyn Toolset>, &'static ToolInfo, usize)> {
        let tool = self.tools.iter().find(|t| t.name == name)?;
        let info = tool.info.tools().get(tool.index)?;
        Some((tool.toolset.clone(), info, tool.index))
    }

    /// The tools as the model sees them (a schema the profile cannot
    /// express leaves its tool out, with a warning).
    pub(crate) fn specs(&self, profile: SchemaProfile) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .filter_map(|t| {
                let info = t.info.tools().get(t.index)?;
                match export_schema(info.input_schema(), profile) {
                    Ok(parameters) => Some(ToolSpec {
                        name: t.name.clone(),
                        description: info.description().to_owned(),
                        parameters,
                    }),
                    Err(error) => {
                        tracing::warn!(tool = %t.name, %error, "extension tool left out: its schema cannot be exported");
                        None
                    }
                }
            })
            .collect()
    }
}

/// Whether `name` says that a repeated call changes nothing more: a
/// scope tool's `#[tool(idempotent)]` or runtime hint (an MCP server's
/// `idempotentHint`), or an extension tool's. The one kind of started call
/// the agent runs again after a crash (`recover.rs`).
pub(crate) fn is_idempotent(shared: &Shared, name: &str) -> bool {
    let hint = match shared.scope.tool(name) {
        Some(tool) => tool.annotations().idempotent(),
        None => shared.state().tools.idempotent(name),
    };
    hint == Some(true)
}

/// Appends and commits the mark that the call `call_id` of `tool` is
/// about to run (see the module rules); when it cannot, the reason the
/// call does not run.
async fn mark_started(shared: &Shared, call_id: &str, tool: &str) -> Result<(), String> {
    let mark = EntryKind::call_started(call_id, tool);
    match shared.session.lock().await.append(mark).await {
        Ok(_) => Ok(()),
        Err(error) => Err(format!(
            "its start could not be recorded in the session ({error})"
        )),
    }
}

/// Whether `name` may be called now.
fn is_active(shared: &Shared, name: &str) -> bool {
    match &shared.state().active_tools {
        None => true,
        Some(active) => active.iter().any(|a| a == name),
    }
}

/// Runs one call with its events; the tool message answering it, and the
/// result. `None`: the run was cancelled while it ran.
pub(crate) async fn run_call(
    shared: &Arc<Shared>,
    call: &ToolCallRequest,
    profile: SchemaProfile,
) -> Option<(ChatMessage, ToolResult)> {
    let input = prepare_arguments(&shared.scope, call, profile);
    let events = Arc::new(ToolEvents {
        shared: shared.clone(),
        call_id: call.id.clone(),
        name: call.name.clone(),
        ended: Arc::default(),
        stopped: Mutex::default(),
        progress: Mutex::default(),
    });
    let result = run_with_progress(shared, call, input, &events).await;
    // Stopped by the session itself (a handler blocked it, an inactive
    // tool): answered with no further event.
    if let Some(result) = lock(&events.stopped).take() {
        return Some((tool_message(&call.id, &result), result));
    }
    let result = result?;
    let end = ToolExecutionEndEvent {
        call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: result.clone(),
    };
    let _ = dispatch(shared, end).await;
    Some((tool_message(&call.id, &result), result))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The session's tool events around one call: the call's own layer
/// ([`Invoke::layer`](oscova_core::host::invoke::Invoke::layer),
/// [`UserScope::layered`]), outside the host's hooks and layers, which see
/// the input as the handlers left it. In order: `ToolCallEvent` (patch the
/// input, or block: nothing else runs), the active-tools check,
/// `ToolExecutionStart`, the rest of the call (the host's layers,
/// approval, the tool), its outcome as the model reads it, and
/// `ToolResultEvent` (edit it).
struct ToolEvents {
    shared: Arc<Shared>,
    call_id: String,
    name: String,
    /// How a scope tool's kept wait for approval ended without an answer
    /// (`KeptApproval` leaves it), read when the rest is refused.
    ended: Arc<Mutex<Option<WaitEnd>>>,
    /// What the model reads when the session itself stopped the call.
    stopped: Mutex<Option<ToolResult>>,
    /// The tool's progress reports, until the tool runs.
    progress: Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<ToolProgress>>>,
}

impl ToolEvents {
    /// Awaits the rest of the call while the tool's progress reports
    /// become `ToolExecutionUpdateEvent`s, every one before the call's
    /// `ToolResultEvent`.
    async fn run_with_updates(&self, mut running: BoxFuture<'_, CallOutcome>) -> CallOutcome {
        let Some(mut rx) = lock(&self.progress).take() else {
            return running.await;
        };
        let update = |progress: ToolProgress| ToolExecutionUpdateEvent {
            call_id: self.call_id.clone(),
            tool_name: self.name.clone(),
            progress,
        };
        let outcome = loop {
            tokio::select! {
                biased;
                outcome = &mut running => break outcome,
                Some(progress) = rx.recv() => {
                    let _ = dispatch(&self.shared, update(progress)).await;
                }
            }
        };
        while let Ok(progress) = rx.try_recv() {
            let _ = dispatch(&self.shared, update(progress)).await;
        }
        outcome
    }

    /// Stops the call with `result`, the answer the model reads; the
    /// refusal only ends the pipeline (`run_call` answers with `result`).
    fn stop(&self, call: &ToolCall<'_>, result: ToolResult) -> InvokeError {
        *lock(&self.stopped) = Some(result);
        call.refuse("stopped by the session")
    }

    /// What the model reads of a call the host refused or failed: a kept
    /// wait's end, else the refusal.
    fn settle(&self, error: &InvokeError) -> ToolResult {
        match lock(&self.ended).take() {
            Some(end) => end.result(&self.name),
            None => refused(&self.shared.scope, error),
        }
    }
}

impl ToolLayer for ToolEvents {
    fn call<'a>(&'a self, mut call: ToolCall<'a>, next: Next<'a>) -> BoxFuture<'a, CallOutcome> {
        Box::pin(async move {
            let shared = &self.shared;
            let cancelled = || InvokeError::Cancelled(self.name.clone());
            let event = ToolCallEvent {
                call_id: self.call_id.clone(),
                tool_name: self.name.clone(),
                input: std::mem::take(&mut call.arguments),
                blocked: None,
            };
            // A tool call's failed handler blocks; dispatch never fails it.
            let event = dispatch(shared, event).await.map_err(|_| cancelled())?;
            if let Some(reason) = event.blocked {
                let text = format!("blocked: {reason}. The call did not run.");
                let result = ToolResult::error(shared.scope.redact(&text).into_owned())
                    .with_details(json!({ "error": "blocked" }));
                return Err(self.stop(&call, result));
            }
            if !is_active(shared, &self.name) {
                let result = ToolResult::error(format!(
                    "tool `{}` is not active in this session; do not call it",
                    self.name
                ))
                .with_details(json!({ "error": "inactive_tool" }));
                return Err(self.stop(&call, result));
            }
            call.arguments = event.input;
            let input = call.arguments.clone();
            let start = ToolExecutionStartEvent {
                call_id: self.call_id.clone(),
                tool_name: self.name.clone(),
                input: input.clone(),
            };
            let _ = dispatch(shared, start).await;
            let result = match self.run_with_updates(next.run(call)).await {
                Ok(result) => result,
                Err(error @ InvokeError::Cancelled(_)) => return Err(error),
                Err(error) => self.settle(&error),
            };
            let event = ToolResultEvent {
                call_id: self.call_id.clone(),
                tool_name: self.name.clone(),
                input,
                result,
            };
            match dispatch(shared, event).await {
                Ok(event) => Ok(event.result),
                Err(_) => Err(cancelled()),
            }
        })
    }
}

/// Runs the call inside the session's origin, its tool's progress
/// reports sent to its events (`ToolEvents`, which dispatch them as
/// `ToolExecutionUpdateEvent`s while the tool runs).
async fn run_with_progress(
    shared: &Arc<Shared>,
    call: &ToolCallRequest,
    input: Value,
    events: &Arc<ToolEvents>,
) -> Option<ToolResult> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<ToolProgress>();
    *lock(&events.progress) = Some(rx);
    let sink: ProgressSink = Arc::new(move |progress| {
        let _ = tx.send(progress);
    });
    // The session is the call's origin (a tool that answers later, an
    // A2A task followed by the host, delivers to it); set here, never
    // from the call's arguments.
    let origin = CallOrigin::session(shared.session_id.as_str());
    with_call_origin(origin, invoke(shared, call, input, sink, events)).await
}

/// Runs the call through its events, the host's layers and the tool: a
/// scope tool through the pipeline, an extension's through
/// [`UserScope::layered`].
async fn invoke(
    shared: &Arc<Shared>,
    call: &ToolCallRequest,
    input: Value,
    progress: ProgressSink,
    events: &Arc<ToolEvents>,
) -> Option<ToolResult> {
    let cancel = shared.cancellation();
    let found = shared.state().tools.find(&call.name);
    let Some((toolset, info, index)) = found else {
        return invoke_scope(shared, call, input, progress, cancel, events).await;
    };
    // The host's hooks and layers hold for an extension's tool as for the
    // scope's (`UserScope::layered`), before it is confirmed: a guard
    // written once on the host refuses it here too.
    let scope = &shared.scope;
    let guarded =
        ToolCall::new(&call.name, info, scope.user(), input).with_cancellation(Some(&cancel));
    let tool = ExtensionCall {
        toolset,
        info,
        index,
    };
    let outcome = scope
        .layered(Some(&**events), guarded, |guarded| async {
            let ran = run_extension_tool(shared, call, guarded.arguments, progress, tool, &cancel);
            ran.await
                .ok_or_else(|| InvokeError::Cancelled(call.name.clone()))
        })
        .await;
    match outcome {
        Ok(result) => Some(result),
        Err(InvokeError::Cancelled(_)) => None,
        Err(error) => Some(events.settle(&error)),
    }
}

/// An extension's tool, as the session found it.
struct ExtensionCall {
    toolset: Arc<dyn Toolset>,
    info: &'static ToolInfo,
    index: usize,
}

/// Runs an extension's tool once the host's layers passed it: confirmed
/// when it requires approval, marked started, dispatched, redacted.
/// `None`: cancelled while it ran.
async fn run_extension_tool(
    shared: &Arc<Shared>,
    call: &ToolCallRequest,
    input: Value,
    progress: ProgressSink,
    tool: ExtensionCall,
    cancel: &oscova_core::CancellationToken,
) -> Option<ToolResult> {
    let ExtensionCall {
        toolset,
        info,
        index,
    } = tool;
    if info.approval() == ToolApprovalMode::Required {
        let ctx = ExtensionContext::new(shared.clone(), 0);
        let asked = format!("Allow the tool `{}` to run?", call.name);
        let answer = ctx.confirm(asked.clone());
        // Kept first when someone can be asked (`wait.rs`); without a UI
        // the answer is an immediate no, and there is no wait.
        let answer = if shared.interaction.is_some() {
            match ask_kept(shared, &call.id, &call.name, &asked, &input, answer).await {
                Ok(answer) => answer,
                Err(end) => return Some(end.result(&call.name)),
            }
        } else {
            answer.await
        };
        if !matches!(answer, Ok(true)) {
            let text = format!(
                "tool `{}` requires approval and was not approved. The call did not run; do not \
                 retry it unless the user asks.",
                call.name
            );
            return Some(ToolResult::error(text).with_details(json!({ "error": "not_approved" })));
        }
    }
    if let Err(reason) = mark_started(shared, &call.id, &call.name).await {
        let text = format!("tool `{}` was not run: {reason}", call.name);
        let text = shared.scope.redact(&text).into_owned();
        return Some(ToolResult::error(text).with_details(json!({ "error": "blocked" })));
    }
    let mut invocation = ToolInvocation::new(Arc::new(shared.scope.user().clone()))
        .with_spawn_policy(shared.host.plugins.spawn_policy().clone())
        .with_cancellation(cancel.clone())
        .with_progress_arc(redacting(shared, progress));
    if let Some(handler) = &shared.interaction {
        invocation = invocation.with_interaction_handler_arc(handler.clone());
    }
    let mut result = match toolset.dispatch(index, input, &invocation) {
        Err(error) => ToolResult::error(format!("invalid arguments for `{}`: {error}", call.name))
            .with_details(json!({ "error": "invalid_arguments" })),
        Ok(dispatched) => {
            let running = CatchUnwind(Box::pin(dispatched.finish()));
            tokio::select! {
                biased;
                () = cancel.cancelled() => return None,
                outcome = running => match outcome {
                    Ok(result) => result,
                    Err(panic) => ToolResult::error(format!("tool `{}` failed: it panicked: {panic}", call.name))
                        .with_details(json!({ "error": "panicked" })),
                },
            }
        }
    };
    redact_result(shared, &mut result);
    Some(result)
}

fn redacting(shared: &Arc<Shared>, sink: ProgressSink) -> ProgressSink {
    let scope = shared.scope.clone();
    Arc::new(move |mut progress: ToolProgress| {
        progress.message = scope.redact(&progress.message).into_owned();
        sink(progress);
    })
}

fn redact_result(shared: &Shared, result: &mut ToolResult) {
    let scope = &shared.scope;
    result.for_each_text_mut(|text| {
        if let std::borrow::Cow::Owned(clean) = scope.redact(text) {
            *text = clean;
        }
    });
    scope.redact_json(&mut result.details);
}

async fn invoke_scope(
    shared: &Arc<Shared>,
    call: &ToolCallRequest,
    input: Value,
    progress: ProgressSink,
    cancel: oscova_core::CancellationToken,
    events: &Arc<ToolEvents>,
) -> Option<ToolResult> {
    let scope = &shared.scope;
    let marking = shared.clone();
    let (id, tool) = (call.id.clone(), call.name.clone());
    // The approval, if the call needs one, is asked with its wait kept in
    // the session first (`wait.rs`).
    let approval = KeptApproval {
        shared: shared.clone(),
        call_id: call.id.clone(),
        tool: call.name.clone(),
        ended: events.ended.clone(),
    };
    let mut invoke = scope
        .invoke(&call.name, input)
        .layer_arc(Some(events.clone() as Arc<dyn ToolLayer>))
        .cancellation(cancel)
        .progress_arc(progress)
        .approval_handler(approval)
        .start_hook(move |_: &str| {
            let (shared, id, tool) = (marking.clone(), id.clone(), tool.clone());
            async move { mark_started(&shared, &id, &tool).await }
        });
    if let Some(handler) = &shared.interaction {
        invoke = invoke.interaction_handler_arc(Some(handler.clone()));
    }
    match invoke.checked().await {
        Ok(result) => Some(result),
        Err(InvokeError::Cancelled(_)) => None,
        // Refused before the events (an unknown or unavailable tool).
        Err(error) => Some(events.settle(&error)),
    }
}

/// The result the model reads for a call the host refused or failed.
fn refused(scope: &UserScope, error: &InvokeError) -> ToolResult {
    let text = if error.is_refusal() {
        format!("{error}. The call did not run; do not retry it unless the user asks.")
    } else {
        error.to_string()
    };
    let text = scope.redact(&text).into_owned();
    ToolResult::error(text).with_details(json!({ "error": error.kind() }))
}
