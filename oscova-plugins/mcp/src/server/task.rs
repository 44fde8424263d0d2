//! Following an upstream server's task (the MCP Tasks extension,
//! SEP-2663): a `tools/call` the server answered with a task.
//!
//! Rules: the client declares the extension (`connect.rs`), so a server
//! that advertises it may answer a call with a task; one that does not
//! answers as before. The task is polled with `tasks/get` at the interval
//! the server suggests (`pollIntervalMs`, kept between [`MIN_POLL`] and
//! [`MAX_POLL`]) until it ends: `completed` is the call's result, as a
//! plain result would be; `failed` is an error result with the server's
//! error message; `cancelled` (by the server) an error result saying so.
//! A new `statusMessage` is reported as the call's progress. An
//! `input_required` task's form questions are asked of the person (each
//! once, attributed to the server, as elicitation is) when the server's
//! `elicitation` is `forward`, else declined, and the answers go back
//! with `tasks/update`. Our call's cancellation, or its timeout (the
//! server's `timeout`, counted from the task's creation), sends
//! `tasks/cancel` and ends the call at once.

use std::collections::HashSet;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use oscova_core::interaction::Answer;
use oscova_core::{ToolInvocation, ToolProgress, ToolResult};
use rmcp::model::{
    CallToolResult, CancelTaskParams, CreateTaskResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, GetTaskParams, InputRequest, InputRequests, InputResponses, ServerResult,
    TaskPayload, UpdateTaskParams,
};
use rmcp::service::RequestHandle;
use rmcp::{Peer, RoleClient, ServiceError};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::result::call_result;

/// The shortest interval between two polls, whatever the server says.
pub(crate) const MIN_POLL: Duration = Duration::from_millis(100);

/// The longest interval between two polls, whatever the server says.
pub(crate) const MAX_POLL: Duration = Duration::from_secs(5);

/// The call being followed.
pub(super) struct Followed<'a> {
    pub(super) peer: &'a Peer<RoleClient>,
    pub(super) server: &'a str,
    pub(super) tool: &'a str,
    /// Whether questions are forwarded to the person.
    pub(super) forward: bool,
    /// The call's time limit, from now.
    pub(super) limit: Duration,
}

fn interval(hint: Option<u64>) -> Duration {
    hint.map_or(Duration::from_secs(1), Duration::from_millis)
        .clamp(MIN_POLL, MAX_POLL)
}

impl Followed<'_> {
    /// Follows task `created` to its end; the call's result.
    pub(super) async fn follow(
        &self,
        created: CreateTaskResult,
        inv: &ToolInvocation<'_>,
    ) -> ToolResult {
        let id = created.task.task_id;
        let mut wait = interval(created.task.poll_interval_ms);
        let mut message = created.task.status_message;
        let mut answered = HashSet::new();
        // The host drops a cancelled call at once (unless its caller gave
        // it a grace period): the task is cancelled then too.
        let mut guard = CancelOnDrop {
            peer: self.peer.clone(),
            id: Some(id.clone()),
        };
        let result = self
            .poll(&id, (&mut wait, &mut message), &mut answered, inv)
            .await;
        guard.id = None;
        result
    }

    /// [`follow`](Self::follow)'s loop.
    async fn poll(
        &self,
        id: &str,
        (wait, message): (&mut Duration, &mut Option<String>),
        answered: &mut HashSet<String>,
        inv: &ToolInvocation<'_>,
    ) -> ToolResult {
        let deadline = tokio::time::Instant::now() + self.limit;
        let cancel = inv.cancellation_token().clone();
        loop {
            tokio::select! {
                biased;
                () = cancel.cancelled() => {
                    self.cancel(id).await;
                    return ToolResult::error(format!("the call of `{}` was cancelled", self.tool));
                }
                () = tokio::time::sleep_until(deadline) => {
                    self.cancel(id).await;
                    return ToolResult::error(format!(
                        "the call of `{}` on MCP server `{}` timed out after {:.1} s and its task was cancelled",
                        self.tool,
                        self.server,
                        self.limit.as_secs_f64()
                    ));
                }
                () = tokio::time::sleep(*wait) => {}
            }
            let state = match self.peer.get_task(GetTaskParams::new(id)).await {
                Ok(state) => state,
                Err(e) => {
                    return ToolResult::error(format!(
                        "MCP server `{}` could not say how the task of `{}` stands: {e}",
                        self.server, self.tool
                    ));
                }
            };
            let task = state.task;
            *wait = interval(task.task.poll_interval_ms);
            if task.task.status_message.is_some() && task.task.status_message != *message {
                message.clone_from(&task.task.status_message);
                inv.report(ToolProgress::message(message.clone().unwrap_or_default()));
            }
            match task.payload {
                TaskPayload::Completed { result } => {
                    return match serde_json::from_value::<CallToolResult>(Value::Object(result)) {
                        Ok(result) => call_result(result),
                        Err(e) => ToolResult::error(format!(
                            "MCP server `{}` ended the task of `{}` with something other than a tool result: {e}",
                            self.server, self.tool
                        )),
                    };
                }
                TaskPayload::Failed { error } => {
                    let said = error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("no message");
                    return ToolResult::error(format!(
                        "the task of `{}` on MCP server `{}` failed: {said}",
                        self.tool, self.server
                    ));
                }
                TaskPayload::Cancelled => {
                    return ToolResult::error(format!(
                        "MCP server `{}` cancelled the task of `{}`",
                        self.server, self.tool
                    ));
                }
                TaskPayload::InputRequired { input_requests } => {
                    let answers = self.ask(input_requests, answered, inv).await;
                    if !answers.is_empty() {
                        let update = UpdateTaskParams::new(id, answers);
                        if let Err(e) = self.peer.update_task(update).await {
                            return ToolResult::error(format!(
                                "MCP server `{}` did not take the answer for the task of `{}`: {e}",
                                self.server, self.tool
                            ));
                        }
                        // The answer may let it go on at once.
                        *wait = MIN_POLL;
                    }
                }
                _ => {}
            }
        }
    }

    /// Asks the person each question not answered yet; the answers by key.
    async fn ask(
        &self,
        requests: InputRequests,
        answered: &mut HashSet<String>,
        inv: &ToolInvocation<'_>,
    ) -> InputResponses {
        let mut answers = InputResponses::new();
        for (key, request) in requests {
            if !answered.insert(key.clone()) {
                continue;
            }
            let result = match request {
                InputRequest::Elicitation(elicit) if self.forward => {
                    self.elicit(elicit.params, inv).await
                }
                // Not forwarded, or not a question for a person.
                _ => ElicitResult::new(ElicitationAction::Decline),
            };
            answers.insert(key, serde_json::to_value(result).unwrap_or_default());
        }
        answers
    }

    /// One form question asked of the person, as elicitation is.
    async fn elicit(&self, params: ElicitRequestParams, inv: &ToolInvocation<'_>) -> ElicitResult {
        let decline = ElicitResult::new(ElicitationAction::Decline);
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = params
        else {
            return decline;
        };
        let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
        let Some(question) = crate::elicit::question(self.server, &message, &schema) else {
            return decline;
        };
        match inv.ask(question).await {
            Ok(Answer::Accept(values)) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(values.into())
            }
            Ok(Answer::Cancel) => ElicitResult::new(ElicitationAction::Cancel),
            _ => decline,
        }
    }

    /// `tasks/cancel`, its answer not awaited past a short while.
    async fn cancel(&self, id: &str) {
        cancel_abandoned(self.peer, id.to_owned()).await;
    }
}

/// Cancels the task when the call following it is dropped before it ended.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    /// The task, until it ended or was cancelled already.
    id: Option<String>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let (Some(id), Ok(runtime)) = (self.id.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move { cancel_abandoned(&peer, id).await });
    }
}

/// Cancels task `id`, which no call follows any more (its call was
/// dropped before or while following it); the answer is not awaited past
/// a short while.
pub(super) async fn cancel_abandoned(peer: &Peer<RoleClient>, id: String) {
    let cancel = peer.cancel_task(CancelTaskParams::new(id));
    let _ = tokio::time::timeout(MAX_POLL, cancel).await;
}

/// The answer to a `tools/call`, awaited beside the call: a task the
/// server answers with is cancelled when the call is dropped before it
/// took the answer (cancelled by the host) or while it follows it
/// ([`CancelOnDrop`]).
pub(super) struct CallAnswer {
    answered: oneshot::Receiver<Result<ServerResult, ServiceError>>,
    peer: Peer<RoleClient>,
}

impl CallAnswer {
    /// Awaits `handle`'s answer in a task of its own.
    pub(super) fn of(handle: RequestHandle<RoleClient>, peer: Peer<RoleClient>) -> Self {
        let (answer, answered) = oneshot::channel();
        let cancelling = peer.clone();
        tokio::spawn(async move {
            let outcome = handle.await_response().await;
            // Nobody took it: the call was dropped before the answer came.
            if let Err(Ok(ServerResult::CreateTaskResult(created))) = answer.send(outcome) {
                cancel_abandoned(&cancelling, created.task.task_id).await;
            }
        });
        Self { answered, peer }
    }
}

impl Future for CallAnswer {
    type Output = Result<ServerResult, ServiceError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.answered)
            .poll(cx)
            .map(|answer| answer.unwrap_or(Err(ServiceError::TransportClosed)))
    }
}

impl Drop for CallAnswer {
    fn drop(&mut self) {
        // The answer came but the call was dropped before it took it.
        if let Ok(Ok(ServerResult::CreateTaskResult(created))) = self.answered.try_recv()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let peer = self.peer.clone();
            let id = created.task.task_id;
            runtime.spawn(async move { cancel_abandoned(&peer, id).await });
        }
    }
}
