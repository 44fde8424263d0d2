//! Tasks as runs of the user's session agent: sending, cancelling.
//!
//! Rules: a task's context is a session of the user who sent it (the
//! session named `a2a:<contextId>` in the agent host's store), so a
//! `contextId` names different sessions for different users and one user
//! can never reach another's. A task is one run of that session's agent
//! ([`AgentSession::prompt`](oscova_agent::session::agent::AgentSession::prompt))
//! on the text of the message's parts; runs in one context go one after
//! the other, in the order they were sent (a context's lock is forgotten
//! once no run holds or waits for it). A `contextId` is 1 to 256 bytes
//! (`InvalidParams` otherwise). A user has at most
//! `max_tasks_per_user` tasks running on this process; one more is refused
//! with `UnsupportedOperation` and never stored. Every change of state is
//! written to the store before anyone is told of it (a write that returned
//! is on disk with the SQLite store: `synchronous=FULL`, group commit):
//! `SUBMITTED` when received (a blocking `SendMessage` tells its client
//! only the last state, so it stores `SUBMITTED` only when its run waits
//! for its context's turn, and else starts at `WORKING`: one sync fewer
//! per message, no state told is skipped), `WORKING` when the run starts,
//! then `COMPLETED` (the model's
//! answer as the artifact `response` and the agent's message in the
//! history), `CANCELED`, or `FAILED` with the reason, or `AUTH_REQUIRED`
//! when a tool call of the run came back with a missing credential
//! ([`oscova_core::ToolResult::is_missing_credential`]): the first such
//! call's guidance is the status message, the model's answer joins the
//! history and there is no artifact. The client's next message naming an
//! `AUTH_REQUIRED` task (sent once the person set the credential) joins
//! its history and runs the task again on that message's text, in the
//! same session, on whichever process receives it (the run had ended;
//! nothing waits in memory); a task running already is refused with
//! `UnsupportedOperation`. A cancel of a task
//! running here cancels its run and waits for it to end; a cancel of a
//! task no process here runs (another instance's, or one left by a dead
//! process) marks it `CANCELED` in the store, and a run that ends later
//! keeps that state rather than overwrite it. A run is inside the hop
//! count of its message's metadata (`oscova.hops`,
//! [`oscova_core::tool::origin`]): a call it makes to another agent
//! carries one more, refused past the limit.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oscova_agent::session::agent::AgentHost;
use oscova_core::tool::origin::hops_in;
use oscova_serve::UserDirectory;
use serde_json::Value;
use tokio::sync::{broadcast, oneshot, watch};
use tokio_util::sync::CancellationToken;

pub(crate) use crate::events::status_update;
use crate::events::{settle, wait};
use crate::limits::{Limits, StreamSlot};
use crate::model::{A2aError, Message, PushConfig, Role, Task, TaskState, new_id};
use crate::push::Pushes;
use crate::store::TaskStore;

mod answer;
mod approve;
mod ask;
mod run;

/// Stream events a slow reader may fall behind by before it skips some
/// (the last state is always the newest, so it is never the one skipped).
const EVENT_BUFFER: usize = 256;

/// The longest `contextId` taken (it names a session).
const MAX_CONTEXT_ID: usize = 256;

/// How long a cancel waits for its run to end.
const CANCEL_WAIT: Duration = Duration::from_secs(10);

/// What a run starts from: its message's text and hop count, and whether
/// the task was stored before the run (else the run stores it before it
/// waits for its context or works).
struct Start {
    text: String,
    hops: u32,
    stored: bool,
    /// A run resumed where the answer to its kept question came: the
    /// session's unanswered batch is settled (`AgentSession::recover`),
    /// the answer given again to the same question.
    resume: Option<ask::Replay>,
    /// Stops the run as a stopped process would (set by `launch`).
    abandon: CancellationToken,
}

impl Start {
    fn new(text: String, hops: u32, stored: bool) -> Self {
        Self {
            text,
            hops,
            stored,
            resume: None,
            abandon: CancellationToken::new(),
        }
    }
}

/// The lock the runs of one context take in turn.
type ContextLock = Arc<tokio::sync::Mutex<()>>;

/// A run in progress here.
struct Running {
    cancel: CancellationToken,
    /// Becomes true when the run's last state is stored.
    done: watch::Receiver<bool>,
    /// The run's stream events (`StreamResponse` objects), for streams.
    events: broadcast::Sender<Value>,
}

/// Runs tasks and remembers which run here.
pub(crate) struct Runner {
    pub(crate) agents: AgentHost,
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) users: UserDirectory,
    pub(crate) model: Option<(String, Option<String>)>,
    /// The per-user bounds, checked, and how long a stream may go
    /// without an event.
    pub(crate) limits: Limits,
    /// Streams open per user.
    streams: Arc<Mutex<HashMap<String, usize>>>,
    /// (user, task id) → its run.
    running: Mutex<HashMap<(String, String), Running>>,
    /// (user, context id) → the lock its runs take in turn.
    contexts: Mutex<HashMap<(String, String), ContextLock>>,
    /// (user, task id) → where the answer to its question goes.
    waiting: Mutex<HashMap<(String, String), oneshot::Sender<Message>>>,
    /// How long a tool's question waits for its answer.
    pub(crate) input_wait: Duration,
    /// Whether calls that need approval run unasked (else the client is
    /// asked, `tasks/approve.rs`).
    pub(crate) allow_approval_required: bool,
    /// The tasks' webhooks.
    pub(crate) pushes: Pushes,
    /// Ends every run at shutdown.
    pub(crate) cancel: CancellationToken,
}

fn internal(error: impl std::fmt::Display) -> A2aError {
    A2aError::Internal(error.to_string())
}

impl Runner {
    pub(crate) fn new(
        agents: AgentHost,
        store: Arc<dyn TaskStore>,
        users: UserDirectory,
        model: Option<(String, Option<String>)>,
        limits: Limits,
        input_wait: Duration,
        cancel: CancellationToken,
    ) -> Self {
        let pushes = Pushes::new(
            &agents.plugins().http_client(),
            store.clone(),
            limits.pushes(),
        );
        Self {
            agents,
            store,
            users,
            model,
            limits,
            streams: Arc::default(),
            waiting: Mutex::default(),
            input_wait,
            allow_approval_required: false,
            pushes,
            running: Mutex::default(),
            contexts: Mutex::default(),
            cancel,
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Running>> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts a task for `message` of `user`; with `blocking`, returns
    /// once it ended, else at once.
    pub(crate) async fn send(
        self: &Arc<Self>,
        user: &str,
        message: Message,
        blocking: bool,
        push: Option<PushConfig>,
    ) -> Result<Task, A2aError> {
        Ok(self.send_streamed(user, message, blocking, push).await?.0)
    }

    /// As [`send`](Self::send), with a receiver of the run's events from
    /// its start on.
    pub(crate) async fn send_streamed(
        self: &Arc<Self>,
        user: &str,
        mut message: Message,
        blocking: bool,
        push: Option<PushConfig>,
    ) -> Result<(Task, broadcast::Receiver<Value>), A2aError> {
        if message.role != Role::User {
            return Err(A2aError::InvalidParams(
                "message.role must be ROLE_USER".into(),
            ));
        }
        let text = message.text();
        if text.trim().is_empty() {
            return Err(A2aError::InvalidParams(
                "message.parts must hold text; this agent reads text parts".into(),
            ));
        }
        if let Some(task_id) = message.task_id.clone() {
            if let Some(push) = push {
                // The caller's task only: another's is `TaskNotFound`.
                let task = self.get(user, &task_id).await?;
                self.pushes.set(user, &task.id, push).await?;
            }
            return self.answer(user, &task_id, message, blocking).await;
        }
        let hops = hops_in(message.metadata.as_ref());
        let context = message.context_id.clone().unwrap_or_else(new_id);
        if context.is_empty() || context.len() > MAX_CONTEXT_ID {
            return Err(A2aError::InvalidParams(format!(
                "message.contextId: 1 to {MAX_CONTEXT_ID} bytes"
            )));
        }
        let id = new_id();
        let push = push.map(|p| Pushes::check(&id, p)).transpose()?;
        message.context_id = Some(context.clone());
        message.task_id = Some(id.clone());
        let task = Task::submitted(id, context, message);
        // A blocking send tells no one of `SUBMITTED`: its first stored
        // state is `WORKING`, unless the run waits for its context (or a
        // webhook is stored with it).
        let start = Start::new(text, hops, !blocking);
        self.launch(user, task, start, blocking, push).await
    }

    /// Starts the run of `task` on `start.text`, storing it as it is first
    /// (and `push`, its webhook) when `start.stored` or a webhook is given (else
    /// the run stores it before it waits or works); with `blocking`,
    /// returns once it settled.
    async fn launch(
        self: &Arc<Self>,
        user: &str,
        task: Task,
        mut start: Start,
        blocking: bool,
        push: Option<PushConfig>,
    ) -> Result<(Task, broadcast::Receiver<Value>), A2aError> {
        let id = task.id.clone();
        let (done_tx, done) = watch::channel(false);
        let (events, receiver) = broadcast::channel(EVENT_BUFFER);
        let settled = events.subscribe();
        let cancel = self.cancel.child_token();
        {
            let mut running = self.running();
            if running.contains_key(&(user.to_owned(), id.clone())) {
                return Err(A2aError::UnsupportedOperation(format!(
                    "task {id} is running already"
                )));
            }
            let mine = running.keys().filter(|(o, _)| o == user).count();
            if mine >= self.limits.max_tasks_per_user {
                return Err(A2aError::UnsupportedOperation(format!(
                    "too many tasks running: at most {} per user; wait for one to end",
                    self.limits.max_tasks_per_user
                )));
            }
            running.insert(
                (user.to_owned(), id.clone()),
                Running {
                    cancel: cancel.clone(),
                    done: done.clone(),
                    events: events.clone(),
                },
            );
        }
        start.stored = start.stored || push.is_some();
        // The webhook first, within its bounds: refused, no task is stored
        // (a task not stored yet counts as one that has not ended).
        if let Some(push) = &push
            && let Err(error) = self.pushes.add(user, push).await
        {
            self.running().remove(&(user.to_owned(), id));
            return Err(error);
        }
        let stored = if start.stored {
            self.store.put(user, &task).await
        } else {
            Ok(())
        };
        if let Err(error) = stored {
            if let Some(push) = &push {
                let _ = self.store.delete_push_config(user, &id, &push.id).await;
            }
            self.running().remove(&(user.to_owned(), id));
            return Err(internal(error));
        }
        // Webhooks may be set later, through any instance: the forwarder
        // reads them from the store at each state.
        self.pushes.forward(user, &id, events.subscribe());
        if self.store.relays() {
            crate::store::relay::publish_run(
                self.store.clone(),
                user.to_owned(),
                id.clone(),
                events.subscribe(),
            );
        }
        let answer = id.clone();
        let runner = self.clone();
        let user_id = user.to_owned();
        let abandon = start.abandon.clone();
        tokio::spawn(async move {
            // Given way (`tasks/ask.rs`): the run is dropped where it
            // waits, as a stopped process's, and writes nothing more.
            tokio::select! {
                () = runner.run(&user_id, task, start, cancel, events) => {}
                () = abandon.cancelled() => {}
            }
            runner.stop_waiting(&user_id, &id);
            runner.running().remove(&(user_id, id));
            let _ = done_tx.send(true);
        });
        if blocking {
            settle(settled, done).await;
        }
        Ok((self.get(user, &answer).await?, receiver))
    }

    /// Notes where the answer to the task's question goes.
    pub(crate) fn wait_for_answer(&self, user: &str, id: &str, answer: oneshot::Sender<Message>) {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert((user.to_owned(), id.to_owned()), answer);
    }

    fn take_waiting(&self, user: &str, id: &str) -> Option<oneshot::Sender<Message>> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&(user.to_owned(), id.to_owned()))
    }

    /// Whether the task's run waits here for an answer.
    pub(crate) fn is_waiting(&self, user: &str, id: &str) -> bool {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains_key(&(user.to_owned(), id.to_owned()))
    }

    /// `text` with the host's secrets redacted.
    pub(crate) fn redact(&self, text: &str) -> String {
        self.agents.plugins().redactor().redact(text).into_owned()
    }

    /// `value` with the host's secrets redacted (in its JSON text).
    pub(crate) fn redacted(&self, value: &Value) -> Value {
        let text = self.redact(&value.to_string());
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    }

    /// Forgets the task's question.
    pub(crate) fn stop_waiting(&self, user: &str, id: &str) {
        let _ = self.take_waiting(user, id);
    }

    /// Stores `task` of `user`.
    pub(crate) async fn put(&self, user: &str, task: &Task) -> Result<(), A2aError> {
        self.store.put(user, task).await.map_err(internal)
    }

    /// A receiver of the events of the task `id` of `user`, when its run
    /// is here.
    pub(crate) fn subscribe(&self, user: &str, id: &str) -> Option<broadcast::Receiver<Value>> {
        self.running()
            .get(&(user.to_owned(), id.to_owned()))
            .map(|r| r.events.subscribe())
    }

    /// A stream slot of `user`, or `UnsupportedOperation` when they have
    /// `max_streams_per_user` open.
    pub(crate) fn stream_slot(&self, user: &str) -> Result<StreamSlot, A2aError> {
        let mut streams = self
            .streams
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let open = streams.entry(user.to_owned()).or_default();
        if *open >= self.limits.max_streams_per_user {
            return Err(A2aError::UnsupportedOperation(format!(
                "too many streams open: at most {} per user",
                self.limits.max_streams_per_user
            )));
        }
        *open += 1;
        Ok(StreamSlot::new(self.streams.clone(), user))
    }

    /// The task `id` of `user`.
    pub(crate) async fn get(&self, user: &str, id: &str) -> Result<Task, A2aError> {
        self.store
            .get(user, id)
            .await
            .map_err(internal)?
            .ok_or(A2aError::TaskNotFound)
    }

    /// Cancels the task `id` of `user`.
    pub(crate) async fn cancel(&self, user: &str, id: &str) -> Result<Task, A2aError> {
        let task = self.get(user, id).await?;
        if task.status.state.is_terminal() {
            return Err(A2aError::TaskNotCancelable(
                task.status.state.as_str().to_owned(),
            ));
        }
        let here = self
            .running()
            .get(&(user.to_owned(), id.to_owned()))
            .map(|r| (r.cancel.clone(), r.done.clone()));
        match here {
            Some((cancel, done)) => {
                cancel.cancel();
                let _ = tokio::time::timeout(CANCEL_WAIT, wait(done)).await;
            }
            None => {
                let mut task = task;
                task.set_state(TaskState::Canceled, Some("canceled by the client"));
                self.store.put_final(user, &task).await.map_err(internal)?;
            }
        }
        self.get(user, id).await
    }
}
