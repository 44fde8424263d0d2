//! Tool calls served as tasks (the MCP Tasks extension, SEP-2663,
//! `io.modelcontextprotocol/tasks`), kept in a store every instance
//! shares.
//!
//! Rules: the server advertises the extension. A `tools/call` whose
//! client declared it (in the request's `_meta` on 2026-07-28, else at
//! `initialize`) and that carries no `requestState` runs as any call
//! does (its progress and log messages sent as notifications) for the
//! server's threshold ([`DEFAULT_TASK_AFTER`] unless set with
//! `task_after`). Finished by then, it is answered with its result and no
//! task is made: a short call touches no store and costs no poll. Still
//! running then, or asking a question (its approval, or one of its own)
//! before then, it is made a task at that moment and answered with it
//! (`resultType: "task"`, status `working`, or `input_required` when it
//! asked); a threshold of zero makes every such call a task at once. The
//! call runs on beside its task on the instance that took it, holding its
//! bounds on calls in flight as any call does. The task is a [`StoredTask`] in a [`TaskStore`]: the
//! same store as the waiting calls ([`crate::wait`]: a table of its own
//! in the sessions' SQLite file or Postgres database) when the server
//! has one, else this process's memory. So:
//!
//! - `tasks/get`, on any instance sharing the store, answers the task's
//!   status (`working`, `input_required` with its `inputRequests`,
//!   `completed` with the `tools/call` result, `failed` with the error,
//!   `cancelled`), with the hints: `pollIntervalMs`
//!   ([`TASK_POLL_INTERVAL`]) and `ttlMs` ([`TASK_TTL`], after which the
//!   task is dropped and its id names nothing);
//! - a question the call asks (its approval, or one of its own) makes the
//!   task `input_required`, the elicitation under a key of its own
//!   (`oscova.ask.N`); `tasks/update` with the answer under that key, on
//!   any instance, lets the call go on; answers under keys the task is
//!   not asking are ignored, as the extension asks, and not kept;
//! - `tasks/cancel` marks the task cancel-requested in the store; on the
//!   instance running it, the call's cancellation token is cancelled at
//!   once, on another it is within [`TASK_CHECK`] (the running instance
//!   reads the task that often). The call then ends `cancelled`. A task
//!   already ended is not cancelled (-32602, saying how it ended);
//! - the running instance marks the task alive every [`TASK_HEARTBEAT`];
//!   a task not marked for [`TASK_LOST_AFTER`] (its instance stopped or
//!   was killed) is `failed`, its error saying it was interrupted: it is
//!   never run again;
//! - a task is its user's: another user's task id is unknown (-32602),
//!   as an id never given out is.
//!
//! Once the call is a task, its progress and log messages are not sent
//! (no request is in flight to carry them); a progress message becomes
//! the task's `statusMessage`. The result is kept as the client gets it (redacted,
//! as every result), so the store is as private as the sessions beside it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use rmcp::model::{DetailedTask, JsonObject, Task, TaskPayload, TaskStatus};
use serde_json::{Value, json};

use crate::wait::{WaitStoreError, now_millis};

#[cfg(feature = "postgres")]
pub(crate) mod postgres;
#[cfg(feature = "sqlite")]
pub(crate) mod sqlite;

/// How long a `tools/call` of a client that declared the extension runs
/// as usual before it is made a task, unless the server sets another
/// threshold (`task_after`).
pub const DEFAULT_TASK_AFTER: Duration = Duration::from_secs(1);

/// The polling interval a task suggests to its client (`pollIntervalMs`).
pub const TASK_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// How long a task is kept after it was created (`ttlMs`): then its id
/// names nothing.
pub const TASK_TTL: Duration = Duration::from_secs(60 * 60);

/// How often the instance running a task reads it, for a cancellation or
/// an answer given through another instance.
pub const TASK_CHECK: Duration = Duration::from_millis(200);

/// How often the instance running a task marks it alive.
pub const TASK_HEARTBEAT: Duration = Duration::from_secs(5);

/// How long a running task may go unmarked before it counts as
/// interrupted (its instance gone).
pub const TASK_LOST_AFTER: Duration = Duration::from_secs(30);

/// The JSON-RPC error of a task whose instance stopped running it.
const INTERRUPTED: i64 = -32603;

/// A task as a store keeps it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StoredTask {
    /// The task id: 128 random bits in hex.
    pub id: String,
    /// Whose call it is.
    pub user: String,
    /// The tool called (its wire name).
    pub tool: String,
    /// Where the task is.
    pub status: TaskStatus,
    /// What the task is doing, for the person (`statusMessage`).
    pub message: Option<String>,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_at: i64,
    /// When its status, message or payload last changed.
    pub updated_at: i64,
    /// When the instance running it last marked it alive.
    pub alive_at: i64,
    /// When it is dropped (its creation plus [`TASK_TTL`]).
    pub expires_at: i64,
    /// Whether `tasks/cancel` asked for it to stop.
    pub cancel_requested: bool,
    /// The questions waiting (`inputRequests`), while `input_required`.
    pub input_requests: Option<JsonObject>,
    /// The answers given through `tasks/update`, by key.
    pub responses: JsonObject,
    /// The `tools/call` result (`completed`) or the JSON-RPC error
    /// (`failed`).
    pub outcome: Option<JsonObject>,
}

impl StoredTask {
    /// A new `working` task `id` of `user`'s call of `tool`, created now.
    pub fn new(id: impl Into<String>, user: impl Into<String>, tool: impl Into<String>) -> Self {
        let now = now_millis();
        let ttl = i64::try_from(TASK_TTL.as_millis()).unwrap_or(i64::MAX);
        Self {
            id: id.into(),
            user: user.into(),
            tool: tool.into(),
            status: TaskStatus::Working,
            message: None,
            created_at: now,
            updated_at: now,
            alive_at: now,
            expires_at: now.saturating_add(ttl),
            cancel_requested: false,
            input_requests: None,
            responses: JsonObject::new(),
            outcome: None,
        }
    }

    /// Whether it runs no more: `completed`, `failed` or `cancelled`.
    pub fn is_terminal(&self) -> bool {
        self.status.is_terminal()
    }

    /// Whether, at `now`, it is still running but its instance has not
    /// marked it alive for [`TASK_LOST_AFTER`].
    pub fn is_lost_at(&self, now: i64) -> bool {
        let lost = i64::try_from(TASK_LOST_AFTER.as_millis()).unwrap_or(i64::MAX);
        !self.is_terminal() && now.saturating_sub(self.alive_at) > lost
    }

    /// The change that ends a lost task: `failed`, saying it was
    /// interrupted.
    pub fn interrupted() -> TaskUpdate {
        let error = json!({
            "code": INTERRUPTED,
            "message": "the task was interrupted: the server instance running it stopped \
                        before it ended; it is not run again",
            "data": {"error": "interrupted"},
        });
        TaskUpdate::ended(TaskStatus::Failed, object(error))
    }

    /// The task's metadata as the extension sends it.
    pub fn task(&self) -> Task {
        let mut task = Task::new(
            self.id.clone(),
            self.status,
            iso8601(self.created_at),
            iso8601(self.updated_at),
        )
        .with_ttl_ms(u64::try_from(TASK_TTL.as_millis()).unwrap_or(u64::MAX))
        .with_poll_interval_ms(u64::try_from(TASK_POLL_INTERVAL.as_millis()).unwrap_or(500));
        task.status_message = self.message.clone();
        task
    }

    /// The task with its status's payload, as `tasks/get` answers it.
    pub fn detailed(&self) -> DetailedTask {
        let payload = match self.status {
            TaskStatus::InputRequired => {
                let requests = self.input_requests.clone().unwrap_or_default();
                match serde_json::from_value(Value::Object(requests)) {
                    Ok(input_requests) => TaskPayload::InputRequired { input_requests },
                    // Written by this crate from the same type; a row that
                    // does not read is reported rather than guessed at.
                    Err(e) => TaskPayload::Failed {
                        error: object(json!({
                            "code": -32603,
                            "message": format!("the task's questions could not be read: {e}"),
                        })),
                    },
                }
            }
            TaskStatus::Completed => TaskPayload::Completed {
                result: self.outcome.clone().unwrap_or_default(),
            },
            TaskStatus::Failed => TaskPayload::Failed {
                error: self.outcome.clone().unwrap_or_default(),
            },
            TaskStatus::Cancelled => TaskPayload::Cancelled,
            _ => TaskPayload::Working,
        };
        DetailedTask::new(self.task(), payload)
    }
}

/// A change the running instance makes to its task.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TaskUpdate {
    /// The new status.
    pub status: TaskStatus,
    /// The new status message (`None` keeps the old one).
    pub message: Option<String>,
    /// The questions waiting, for `input_required` (else cleared).
    pub input_requests: Option<JsonObject>,
    /// The result or error, for `completed` and `failed`.
    pub outcome: Option<JsonObject>,
}

impl TaskUpdate {
    /// Back to (or still) `working`, with `message` if given.
    pub fn working(message: Option<String>) -> Self {
        Self {
            status: TaskStatus::Working,
            message,
            input_requests: None,
            outcome: None,
        }
    }

    /// `input_required`, asking `requests`.
    pub fn input_required(requests: JsonObject) -> Self {
        Self {
            status: TaskStatus::InputRequired,
            message: None,
            input_requests: Some(requests),
            outcome: None,
        }
    }

    /// Ended as `status` with `outcome` (the result, or the error).
    pub fn ended(status: TaskStatus, outcome: JsonObject) -> Self {
        Self {
            status,
            message: None,
            input_requests: None,
            outcome: Some(outcome),
        }
    }

    /// Ended `cancelled`.
    pub fn cancelled() -> Self {
        Self {
            status: TaskStatus::Cancelled,
            message: None,
            input_requests: None,
            outcome: None,
        }
    }
}

/// Where tasks are kept, for every server instance that shares it (see
/// [the module](self)). Every [`WaitStore`](crate::wait::WaitStore) is
/// one (the waits' SQLite file or Postgres database, a table of its
/// own); without a store a server keeps its tasks in memory.
#[async_trait::async_trait]
pub trait TaskStore: Send + Sync + std::fmt::Debug + 'static {
    /// Keeps a new task; in the same write, drops the tasks past their
    /// expiry. Returns once the write is durable.
    async fn create(&self, task: &StoredTask) -> Result<(), WaitStoreError>;

    /// The task `id` if it is `user`'s and not past its expiry.
    async fn get(&self, id: &str, user: &str) -> Result<Option<StoredTask>, WaitStoreError>;

    /// Applies `update` to task `id` unless it has ended already, marking
    /// it alive; returns whether it applied.
    async fn update(&self, id: &str, update: &TaskUpdate) -> Result<bool, WaitStoreError>;

    /// Marks task `id` alive (the running instance's heartbeat).
    async fn alive(&self, id: &str) -> Result<(), WaitStoreError>;

    /// Marks `user`'s task `id` cancel-requested unless it has ended, and
    /// returns it as it then is (`None`: no such task of theirs).
    async fn cancel(&self, id: &str, user: &str) -> Result<Option<StoredTask>, WaitStoreError>;

    /// Adds `responses` (by key) to `user`'s task `id` unless it has
    /// ended, and returns it as it then is.
    async fn respond(
        &self,
        id: &str,
        user: &str,
        responses: &JsonObject,
    ) -> Result<Option<StoredTask>, WaitStoreError>;
}

/// Tasks in this process's memory: the store of a server without a
/// [`WaitStore`](crate::wait::WaitStore).
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, StoredTask>>,
}

impl MemoryTaskStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, StoredTask>> {
        self.tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `user`'s live task `id`, changed by `change` unless it has ended.
    fn change(
        &self,
        id: &str,
        user: &str,
        change: impl FnOnce(&mut StoredTask),
    ) -> Option<StoredTask> {
        let now = now_millis();
        let mut tasks = self.lock();
        let task = tasks
            .get_mut(id)
            .filter(|t| t.user == user && t.expires_at > now)?;
        if !task.is_terminal() {
            change(task);
        }
        Some(task.clone())
    }
}

#[async_trait::async_trait]
impl TaskStore for MemoryTaskStore {
    async fn create(&self, task: &StoredTask) -> Result<(), WaitStoreError> {
        let now = now_millis();
        let mut tasks = self.lock();
        tasks.retain(|_, t| t.expires_at > now);
        tasks.insert(task.id.clone(), task.clone());
        Ok(())
    }

    async fn get(&self, id: &str, user: &str) -> Result<Option<StoredTask>, WaitStoreError> {
        Ok(self.change(id, user, |_| {}))
    }

    async fn update(&self, id: &str, update: &TaskUpdate) -> Result<bool, WaitStoreError> {
        let now = now_millis();
        let mut tasks = self.lock();
        let Some(task) = tasks.get_mut(id).filter(|t| !t.is_terminal()) else {
            return Ok(false);
        };
        apply(task, update, now);
        Ok(true)
    }

    async fn alive(&self, id: &str) -> Result<(), WaitStoreError> {
        if let Some(task) = self.lock().get_mut(id) {
            task.alive_at = now_millis();
        }
        Ok(())
    }

    async fn cancel(&self, id: &str, user: &str) -> Result<Option<StoredTask>, WaitStoreError> {
        Ok(self.change(id, user, |t| t.cancel_requested = true))
    }

    async fn respond(
        &self,
        id: &str,
        user: &str,
        responses: &JsonObject,
    ) -> Result<Option<StoredTask>, WaitStoreError> {
        Ok(self.change(id, user, |t| {
            t.responses
                .extend(responses.iter().map(|(k, v)| (k.clone(), v.clone())));
        }))
    }
}

/// `update` applied to `task` at `now`.
fn apply(task: &mut StoredTask, update: &TaskUpdate, now: i64) {
    task.status = update.status;
    if update.message.is_some() {
        task.message.clone_from(&update.message);
    }
    task.input_requests.clone_from(&update.input_requests);
    task.outcome.clone_from(&update.outcome);
    task.updated_at = now;
    task.alive_at = now;
}

/// `value` as an object (an empty one if it is not).
pub(crate) fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// A status as the store writes it.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn status_text(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::InputRequired => "input_required",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "cancelled",
        _ => "working",
    }
}

/// A status the store wrote.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn status_of(text: &str) -> Result<TaskStatus, WaitStoreError> {
    serde_json::from_value(Value::String(text.to_owned())).map_err(WaitStoreError::Data)
}

/// A JSON object column.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn object_of(text: Option<&str>) -> Result<Option<JsonObject>, WaitStoreError> {
    text.map(|t| serde_json::from_str(t).map_err(WaitStoreError::Data))
        .transpose()
}

/// An object as its column text.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn text_of(object: Option<&JsonObject>) -> Result<Option<String>, WaitStoreError> {
    object
        .map(|o| serde_json::to_string(o).map_err(WaitStoreError::Data))
        .transpose()
}

/// The SQL list of the statuses of ended tasks.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
const ENDED: &str = "('completed', 'failed', 'cancelled')";

/// `millis` since the Unix epoch as an ISO 8601 UTC timestamp with
/// milliseconds (`2026-12-07T11:30:00.000Z`).
pub(crate) fn iso8601(millis: i64) -> String {
    let secs = millis.div_euclid(1000);
    let ms = millis.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_8601_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(iso8601(1_796_643_000_000), "2026-12-07T11:30:00.000Z");
    }

    #[test]
    fn a_task_unmarked_for_long_is_lost_unless_ended() {
        let mut task = StoredTask::new("t", "alice", "tool");
        let later = task.alive_at + i64::try_from(TASK_LOST_AFTER.as_millis()).unwrap() + 1;
        assert!(!task.is_lost_at(task.alive_at));
        assert!(task.is_lost_at(later));
        let at = task.alive_at;
        apply(&mut task, &TaskUpdate::cancelled(), at);
        assert!(!task.is_lost_at(later));
    }
}
