//! Tool calls served as MCP tasks (SEP-2663): the call run as usual for
//! the server's task threshold, made a task when it outlasts it or asks a
//! question first, run on beside it on this instance, and `tasks/get`,
//! `tasks/update` and `tasks/cancel` answered from the store on any
//! instance. The rules are [`crate::task`]'s.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use oscova_core::ToolResult;
use oscova_core::interaction::AskError;
use rmcp::model::{
    CallToolResponse, CreateTaskResult, ElicitRequest, GetTaskResult, InputRequest, InputRequests,
    JsonObject, TaskStatus,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::json;
use tokio::sync::{Notify, OwnedSemaphorePermit};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::retry::answer_in;
use super::{LogRelay, McpHandler, ProgressRelay, report};
use crate::ask::{self, Asker, RoundAsk, RoundReply};
use crate::convert::mcp_result;
use crate::rounds::{self, CallEvent, RunningCall};
use crate::task::{
    DEFAULT_TASK_AFTER, MemoryTaskStore, StoredTask, TASK_CHECK, TASK_HEARTBEAT, TaskStore,
    TaskUpdate, object,
};
use crate::wait::{WaitStoreError, now_millis};

/// The tasks a server runs in this process, its store of tasks when it
/// has no wait store, and how long a call runs before it becomes one.
/// Shared by every handler the server makes.
#[derive(Debug)]
pub(crate) struct Tasks {
    running: Mutex<HashMap<String, Local>>,
    memory: Arc<MemoryTaskStore>,
    /// How long a call of a client that declared the extension runs as
    /// usual before it is made a task (zero: a task at once).
    after: Duration,
}

impl Default for Tasks {
    fn default() -> Self {
        Self::new(DEFAULT_TASK_AFTER)
    }
}

/// A task running here: its call's cancellation, and the wake-up for a
/// change made through this instance.
#[derive(Debug, Clone)]
struct Local {
    cancel: CancellationToken,
    wake: Arc<Notify>,
}

impl Tasks {
    /// No tasks yet; calls made tasks once they run `after`.
    pub(crate) fn new(after: Duration) -> Self {
        Self {
            running: Mutex::default(),
            memory: Arc::default(),
            after,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Local>> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn local(&self, id: &str) -> Option<Local> {
        self.lock().get(id).cloned()
    }
}

/// Whether the request's client declared the tasks extension (in its
/// `_meta` on 2026-07-28, else at `initialize`).
pub(super) fn wanted(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|caps| caps.supports_tasks())
}

/// The bounds a call holds while it runs.
pub(super) type Permits = (
    OwnedSemaphorePermit,
    Option<OwnedSemaphorePermit>,
    Option<OwnedSemaphorePermit>,
);

fn store_failed(error: &WaitStoreError) -> ErrorData {
    ErrorData::internal_error(format!("the tasks' store failed: {error}"), None)
}

/// How a call's time before it could become a task ended.
enum Window {
    /// It finished: its result is the answer, and no task is made.
    Done(ToolResult),
    /// It asked the person first: the task starts `input_required`.
    Asked(RoundAsk),
    /// It outlasted the threshold: the task starts `working`.
    Late,
}

impl McpHandler {
    /// Where this server keeps its tasks: its wait store, else memory.
    fn task_store(&self) -> Arc<dyn TaskStore> {
        match &self.waits {
            Some(waits) => waits.clone(),
            None => self.tasks.memory.clone(),
        }
    }

    /// -32602 for a task id that names no task of this user's.
    fn unknown_task(&self, id: &str) -> ErrorData {
        // The id is the client's text: redacted, as every echo of it.
        let message = format!("unknown task `{id}` (never given out, another user's, or expired)");
        ErrorData::invalid_params(self.scope.redact(&message).into_owned(), None)
    }

    /// `tools/call` of `name` from a client that declared the tasks
    /// extension: run as usual for the server's threshold, its progress
    /// and log messages sent as for any call, and answered with its
    /// result if it finishes by then (no task made). Else, once the
    /// threshold passes or the call asks a question, it is made a task,
    /// kept as `working` (or `input_required`, asking), the call run on
    /// beside it holding `permits`, and the task answered.
    pub(super) async fn start_task(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        context: &RequestContext<RoleServer>,
        permits: Permits,
    ) -> Result<CallToolResponse, ErrorData> {
        let can_ask = ask::can_elicit(context);
        let mut call = self.start_call_asking(
            name,
            arguments,
            |events| {
                if can_ask {
                    Asker::Rounds(events.clone())
                } else {
                    Asker::Nobody
                }
            },
            std::collections::VecDeque::new(),
        );
        // The last progress message sent while the call ran as usual: the
        // task's first status message.
        let mut message = None;
        let first = if self.tasks.after.is_zero() {
            None
        } else {
            match self.window(name, &mut call, context, &mut message).await {
                Window::Done(result) => {
                    return Ok(mcp_result(result, self.scope.tool(name)).into());
                }
                Window::Asked(ask) => Some(ask),
                Window::Late => None,
            }
        };
        let id = rounds::new_handle().map_err(|e| ErrorData::internal_error(e, None))?;
        let mut task = StoredTask::new(id.clone(), self.scope.user().id(), name);
        task.message = message.map(|m| self.scope.redact(&m).into_owned());
        let store = self.task_store();
        store.create(&task).await.map_err(|e| store_failed(&e))?;
        let local = Local {
            cancel: CancellationToken::new(),
            wake: Arc::new(Notify::new()),
        };
        self.tasks.lock().insert(id.clone(), local.clone());
        let mut runner = Runner {
            store: store.clone(),
            id: id.clone(),
            user: task.user.clone(),
            scope: self.scope.clone(),
            local,
            asked: 0,
            pending: None,
            cancelled: false,
            message: None,
            alive: Instant::now(),
        };
        if let Some(ask) = first {
            // Asked before the task is answered, so the client's first
            // look at it finds the question.
            runner.event(CallEvent::Ask(ask)).await;
            if runner.pending.is_some() {
                let kept = store.get(&id, &task.user).await;
                if let Ok(Some(kept)) = kept {
                    task = kept;
                }
            }
        }
        let (tasks, scope, tool) = (self.tasks.clone(), self.scope.clone(), name.to_owned());
        let finish = move |result: ToolResult| mcp_result(result, scope.tool(&tool));
        tokio::spawn(
            async move {
                runner.run(call, finish).await;
                tasks.lock().remove(&id);
                drop(permits);
            }
            .in_current_span(),
        );
        Ok(CallToolResponse::Task(CreateTaskResult::new(task.task())))
    }

    /// Runs `call` as any call runs, its progress and log messages sent
    /// on, until it finishes, asks, or outlasts the server's threshold. A
    /// cancelled request cancels the call, which then finishes cancelled.
    /// `message` is left holding the last progress message sent.
    async fn window(
        &self,
        name: &str,
        call: &mut RunningCall,
        context: &RequestContext<RoleServer>,
        message: &mut Option<String>,
    ) -> Window {
        let mut logs = LogRelay {
            peer: &context.peer,
            logger: name,
        };
        let mut relay = context
            .meta
            .get_progress_token()
            .map(|token| ProgressRelay {
                peer: &context.peer,
                token,
                last: 0.0,
                sent: 0,
            });
        let timer = tokio::time::sleep(self.tasks.after);
        tokio::pin!(timer);
        let mut cancelled = false;
        let result = loop {
            tokio::select! {
                result = &mut call.task => break result,
                event = call.events.next() => {
                    if let CallEvent::Progress(p) = &event
                        && !p.message.is_empty()
                    {
                        *message = Some(p.message.clone());
                    }
                    if let Some(ask) = report(event, &mut relay, &mut logs).await {
                        return Window::Asked(ask);
                    }
                }
                () = &mut timer, if !cancelled => return Window::Late,
                () = context.ct.cancelled(), if !cancelled => {
                    cancelled = true;
                    call.cancel.cancel();
                }
            }
        };
        while let Some(event) = call.events.next_report() {
            report(event, &mut relay, &mut logs).await;
        }
        Window::Done(result)
    }

    /// `tasks/get`: the task as the store has it; one whose instance
    /// stopped marking it alive ends `failed`, interrupted.
    pub(super) async fn get_task_state(&self, id: &str) -> Result<GetTaskResult, ErrorData> {
        let store = self.task_store();
        let user = self.scope.user().id();
        let task = store.get(id, user).await.map_err(|e| store_failed(&e))?;
        let mut task = task.ok_or_else(|| self.unknown_task(id))?;
        if task.is_lost_at(now_millis()) && self.tasks.local(id).is_none() {
            store
                .update(id, &StoredTask::interrupted())
                .await
                .map_err(|e| store_failed(&e))?;
            let again = store.get(id, user).await.map_err(|e| store_failed(&e))?;
            task = again.ok_or_else(|| self.unknown_task(id))?;
        }
        Ok(GetTaskResult::new(task.detailed()))
    }

    /// `tasks/update`: the answers to the questions the task asks kept
    /// with it, for the instance running it; answers under other keys are
    /// ignored (and never stored, so a client cannot grow a task).
    pub(super) async fn update_task_state(
        &self,
        id: &str,
        responses: JsonObject,
    ) -> Result<(), ErrorData> {
        let store = self.task_store();
        let user = self.scope.user().id();
        let task = store.get(id, user).await.map_err(|e| store_failed(&e))?;
        let task = task.ok_or_else(|| self.unknown_task(id))?;
        let asked = task.input_requests.unwrap_or_default();
        let responses: JsonObject = responses
            .into_iter()
            .filter(|(key, _)| asked.contains_key(key))
            .collect();
        if responses.is_empty() {
            return Ok(());
        }
        let task = store.respond(id, user, &responses).await;
        task.map_err(|e| store_failed(&e))?
            .ok_or_else(|| self.unknown_task(id))?;
        if let Some(local) = self.tasks.local(id) {
            local.wake.notify_one();
        }
        Ok(())
    }

    /// `tasks/cancel`: marked in the store, and the call's token cancelled
    /// here when it runs here (elsewhere its instance reads the mark).
    pub(super) async fn cancel_task_state(&self, id: &str) -> Result<(), ErrorData> {
        let store = self.task_store();
        let user = self.scope.user().id();
        let task = store.cancel(id, user).await.map_err(|e| store_failed(&e))?;
        let task = task.ok_or_else(|| self.unknown_task(id))?;
        if task.is_terminal() {
            let status = serde_json::to_value(task.status).unwrap_or_default();
            let message = format!(
                "task `{id}` has ended already ({}); there is nothing to cancel",
                status.as_str().unwrap_or("ended")
            );
            return Err(ErrorData::invalid_params(message, None));
        }
        match self.tasks.local(id) {
            Some(local) => local.cancel.cancel(),
            // Nobody runs it any more: it ends here.
            None if task.is_lost_at(now_millis()) => {
                store
                    .update(id, &TaskUpdate::cancelled())
                    .await
                    .map_err(|e| store_failed(&e))?;
            }
            None => {}
        }
        Ok(())
    }
}

/// The loop beside one task's call: its questions to the store, the
/// answers and the cancellation from it, its end into it.
struct Runner {
    store: Arc<dyn TaskStore>,
    id: String,
    user: String,
    scope: oscova_core::UserScope,
    local: Local,
    /// Questions asked so far (each key is `oscova.ask.N`).
    asked: u32,
    /// The question waiting, under its key.
    pending: Option<(String, RoundReply)>,
    cancelled: bool,
    /// A progress message not yet written.
    message: Option<String>,
    /// When the task was last marked alive.
    alive: Instant,
}

impl Runner {
    async fn run(
        mut self,
        mut call: RunningCall,
        finish: impl FnOnce(ToolResult) -> rmcp::model::CallToolResult,
    ) {
        let mut check = tokio::time::interval(TASK_CHECK);
        check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let local = self.local.clone();
        let result = loop {
            tokio::select! {
                result = &mut call.task => break result,
                event = call.events.next() => self.event(event).await,
                () = local.cancel.cancelled(), if !self.cancelled => self.stop(&call.cancel),
                () = local.wake.notified() => self.check(&call.cancel).await,
                _ = check.tick() => self.check(&call.cancel).await,
            }
        };
        let update = if self.cancelled {
            TaskUpdate::cancelled()
        } else {
            match serde_json::to_value(finish(result)) {
                Ok(result) => TaskUpdate::ended(TaskStatus::Completed, object(result)),
                Err(e) => TaskUpdate::ended(
                    TaskStatus::Failed,
                    object(json!({
                        "code": -32603,
                        "message": format!("the tool's result could not be encoded: {e}"),
                    })),
                ),
            }
        };
        if let Err(error) = self.store.update(&self.id, &update).await {
            tracing::warn!(task = %self.id, %error, "a task's end could not be kept");
        }
    }

    /// A progress message, log message or question from the call.
    async fn event(&mut self, event: CallEvent) {
        let ask = match event {
            CallEvent::Progress(p) if !p.message.is_empty() => {
                self.message = Some(self.scope.redact(&p.message).into_owned());
                return;
            }
            CallEvent::Progress(_) | CallEvent::Log(_) => return,
            CallEvent::Ask(ask) => ask,
        };
        if self.pending.is_some() || self.cancelled {
            let _ = ask.reply.send(Err(AskError::Failed(
                "the task asks one question at a time".to_owned(),
            )));
            return;
        }
        let params = match ask::form_params(&ask.question) {
            Ok(params) => params,
            Err(e) => {
                let _ = ask.reply.send(Err(e));
                return;
            }
        };
        self.asked += 1;
        let key = format!("oscova.ask.{}", self.asked);
        let mut requests = InputRequests::new();
        requests.insert(
            key.clone(),
            InputRequest::Elicitation(ElicitRequest::new(params)),
        );
        let mut requests = serde_json::to_value(requests).unwrap_or_default();
        self.scope.redact_json(&mut requests);
        let update = TaskUpdate::input_required(object(requests));
        match self.store.update(&self.id, &update).await {
            Ok(_) => {
                self.alive = Instant::now();
                self.pending = Some((key, ask.reply));
            }
            // Nobody is asked a question whose task could not say so.
            Err(error) => {
                let _ = ask.reply.send(Err(AskError::Failed(error.to_string())));
            }
        }
    }

    /// Stops the call: its token cancelled, its question unanswered.
    fn stop(&mut self, cancel: &CancellationToken) {
        self.cancelled = true;
        cancel.cancel();
        if let Some((_, reply)) = self.pending.take() {
            let _ = reply.send(Err(AskError::Cancelled));
        }
    }

    /// Reads the task: a cancellation or an answer made anywhere; writes a
    /// new progress message, and the heartbeat when due.
    async fn check(&mut self, cancel: &CancellationToken) {
        let task = match self.store.get(&self.id, &self.user).await {
            Ok(task) => task,
            Err(error) => {
                tracing::warn!(task = %self.id, %error, "a task could not be read");
                return;
            }
        };
        let Some(task) = task else {
            // Dropped (past its time to live): nobody can follow it now.
            if !self.cancelled {
                self.stop(cancel);
            }
            return;
        };
        if task.cancel_requested && !self.cancelled {
            self.stop(cancel);
            return;
        }
        let answered = self
            .pending
            .as_ref()
            .and_then(|(key, _)| task.responses.get(key).cloned());
        if let Some(answer) = answered
            && let Some((_, reply)) = self.pending.take()
        {
            let _ = reply.send(answer_in(Some(&answer)));
            let message = self.message.take();
            self.write(TaskUpdate::working(message)).await;
        } else if self.pending.is_none()
            && let Some(message) = self.message.take()
        {
            self.write(TaskUpdate::working(Some(message))).await;
        } else if self.alive.elapsed() >= TASK_HEARTBEAT {
            if let Err(error) = self.store.alive(&self.id).await {
                tracing::warn!(task = %self.id, %error, "a task could not be marked alive");
            }
            self.alive = Instant::now();
        }
    }

    async fn write(&mut self, update: TaskUpdate) {
        match self.store.update(&self.id, &update).await {
            Ok(_) => self.alive = Instant::now(),
            Err(error) => tracing::warn!(task = %self.id, %error, "a task could not be updated"),
        }
    }
}
