//! Where tasks are kept: the [`TaskStore`] trait, [`MemoryTaskStore`]
//! for tests and one process (`memory.rs`), (feature `sqlite`)
//! `SqliteTaskStore` beside the sessions (`sqlite.rs`), (feature
//! `postgres`) `PostgresTaskStore` for a fleet on one database
//! (`postgres.rs`), and the relay of a run's events to the other
//! processes on a store (`relay.rs`, over `NOTIFY` in
//! `postgres_relay.rs`).
//!
//! Rules: every read names the task's user (the user id of the request),
//! and a task of another user is answered as a missing one, so no store
//! can leak that a task exists to anyone but its user. A task is written
//! whole each time it changes (its status, history and artifacts), so a
//! reader on another process sees a state the writer had, never half of
//! one. [`TaskStore::fail_unfinished`] is what a process calls when it
//! starts: a task left `SUBMITTED` or `WORKING` by a process that died
//! becomes `FAILED` with a reason, never lost and never left running.
//!
//! A task's webhooks ([`PushConfig`]) are kept beside it, read and
//! deleted by the same user, and bounded per task and per user
//! ([`PushLimits`], checked in the write that adds one, so concurrent
//! writers cannot pass them; see `push.rs`). A final state (terminal, or
//! `AUTH_REQUIRED`) written with [`TaskStore::put_final`], or by
//! [`TaskStore::fail_unfinished`], marks its push owed in the same write
//! when the task has a webhook; [`TaskStore::push_delivered`] clears the
//! mark and [`TaskStore::claim_owed_pushes`] hands marks whose claim is
//! old to a sweep, dropping those claimed too often. A store that several
//! processes share may relay a run's stream events from the process
//! running it to the others ([`TaskStore::publish`],
//! [`TaskStore::listen`]: Postgres does, with `LISTEN`/`NOTIFY`).
//!
//! A task in `INPUT_REQUIRED` keeps the call it waits on ([`TaskWait`],
//! `wait.rs`) beside it, written with the state in one write
//! ([`TaskStore::put_waiting`]) and taken by the answer in one conditional
//! statement ([`TaskStore::take_wait`]), or at its expiry by a sweep
//! ([`TaskStore::take_expired_waits`]), so the question outlives its
//! process and one answer goes on, on one process. A task that never asks
//! writes no wait.

use std::time::Duration;

use serde_json::Value;

mod memory;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "postgres")]
mod postgres_relay;
pub(crate) mod relay;
#[cfg(feature = "sqlite")]
mod sqlite;
mod wait;

pub use memory::MemoryTaskStore;
#[cfg(feature = "postgres")]
pub use postgres::PostgresTaskStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteTaskStore;
pub use wait::TaskWait;

use crate::model::{PushConfig, Task, TaskState};

/// Why a store failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The database failed.
    #[error("task store: {0}")]
    Database(String),
    /// A stored task did not read back.
    #[error("task store: a stored task is not valid JSON: {0}")]
    Corrupt(#[from] serde_json::Error),
}

/// Which of a user's tasks to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskQuery {
    /// Only tasks of this context.
    pub context_id: Option<String>,
    /// Only tasks in this state.
    pub state: Option<TaskState>,
    /// At most this many (the newest first).
    pub limit: usize,
    /// Skip this many (from a page token).
    pub offset: usize,
}

/// A page of tasks and how many match in all.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct TaskPage {
    /// The tasks, newest first.
    pub tasks: Vec<Task>,
    /// How many tasks match the query, all pages together.
    pub total: usize,
}

/// Keeps tasks by user: every read names the user, and another user's
/// task reads as a missing one; a task is written whole each time it
/// changes.
#[async_trait::async_trait]
pub trait TaskStore: Send + Sync + 'static {
    /// Writes `task` for `user` (inserted, or replacing the stored one).
    async fn put(&self, user: &str, task: &Task) -> Result<(), StoreError>;
    /// The task `id` of `user`; `None` when missing or another user's.
    async fn get(&self, user: &str, id: &str) -> Result<Option<Task>, StoreError>;
    /// The tasks of `user` matching `query`, newest first.
    async fn list(&self, user: &str, query: &TaskQuery) -> Result<TaskPage, StoreError>;
    /// Moves every task left `SUBMITTED` or `WORKING` to `FAILED` with
    /// `reason`; returns how many.
    async fn fail_unfinished(&self, reason: &str) -> Result<usize, StoreError>;
    /// Writes `task` in a final state, and in the same write marks its
    /// push owed (claimed now) when the task has a webhook and drops the
    /// call it waited on, if any.
    async fn put_final(&self, user: &str, task: &Task) -> Result<(), StoreError>;
    /// Writes `task` (in `INPUT_REQUIRED`) and the call it now waits on,
    /// `wait`, in one write (replacing an earlier wait of the task).
    /// Returns once both are stored as durably as any put.
    async fn put_waiting(&self, user: &str, task: &Task, wait: &TaskWait)
    -> Result<(), StoreError>;
    /// Removes and returns the wait of the task `id` of `user`, in one
    /// conditional statement: of several takers, in any process on the
    /// store, one gets it, the others `None` (as for a task that waits for
    /// nothing, or another user's).
    async fn take_wait(&self, user: &str, id: &str) -> Result<Option<TaskWait>, StoreError>;
    /// Removes and returns every wait whose expiry is at or before `now`
    /// (milliseconds since the Unix epoch), each with its user and task
    /// id, in one conditional statement: a wait is taken once, by this
    /// sweep or by an answer, on any process.
    async fn take_expired_waits(&self, now: i64) -> Result<Vec<ExpiredWait>, StoreError>;
    /// Writes a webhook of `user`'s task `config.task_id` (inserted, or
    /// replacing the one with its id), unless that adds one past
    /// `limits`: the task's webhooks, or `user`'s on tasks not stored in
    /// a terminal state (a task not stored yet counts as not ended). The
    /// count and the write are one step: concurrent writers, in this
    /// process or another on the same store, cannot pass the bounds
    /// ([`PushWrite::decide`] says what to write).
    async fn put_push_config(
        &self,
        user: &str,
        config: &PushConfig,
        limits: PushLimits,
    ) -> Result<PushWrite, StoreError>;
    /// The webhooks of the task `task` of `user`, oldest first.
    async fn push_configs(&self, user: &str, task: &str) -> Result<Vec<PushConfig>, StoreError>;
    /// Deletes the webhook `id` of the task; whether there was one.
    async fn delete_push_config(
        &self,
        user: &str,
        task: &str,
        id: &str,
    ) -> Result<bool, StoreError>;
    /// Clears the task's owed push.
    async fn push_delivered(&self, user: &str, task: &str) -> Result<(), StoreError>;
    /// Claims the owed pushes whose claim is at least `stale` old (counting
    /// the claim; a mark claimed `max_claims` times is dropped instead);
    /// returns (user, task id) of each claimed.
    async fn claim_owed_pushes(
        &self,
        stale: Duration,
        max_claims: u32,
    ) -> Result<Vec<(String, String)>, StoreError>;
    /// Whether other processes on this store hear what
    /// [`publish`](Self::publish) sends (a fleet's store); false unless
    /// the store says so.
    fn relays(&self) -> bool {
        false
    }
    /// Tells the processes listening to the task `task` of `user` a stream
    /// event of its run here (see `store/relay.rs`); nothing unless the store
    /// relays.
    async fn publish(&self, user: &str, task: &str, event: &Value) -> Result<(), StoreError> {
        let _ = (user, task, event);
        Ok(())
    }
    /// The stream events another process publishes for the task `task`
    /// from now on, each with its user (the reader keeps its own); `None`
    /// when the store relays none.
    async fn listen(&self, task: &str) -> Result<Option<Relayed>, StoreError> {
        let _ = task;
        Ok(None)
    }
}

/// A wait taken at its expiry: (user, task id, the wait).
pub type ExpiredWait = (String, String, TaskWait);

/// Stream events relayed from another process: (user, event).
pub type Relayed = tokio::sync::broadcast::Receiver<(String, Value)>;

/// The bounds on webhooks a store checks when it adds one (see the
/// module rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PushLimits {
    /// The most webhooks of one task.
    pub per_task: usize,
    /// The most webhooks of one user on their tasks not stored in a
    /// terminal state.
    pub per_user: usize,
}

impl PushLimits {
    /// `per_task` webhooks a task, `per_user` a user.
    pub fn new(per_task: usize, per_user: usize) -> Self {
        Self { per_task, per_user }
    }
}

/// 8 webhooks a task, 128 a user.
impl Default for PushLimits {
    fn default() -> Self {
        Self::new(8, 128)
    }
}

/// What [`TaskStore::put_push_config`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PushWrite {
    /// Written (inserted, or replacing the one with its id).
    Written,
    /// Not written: the task has [`PushLimits::per_task`] webhooks.
    TaskFull,
    /// Not written: the user has [`PushLimits::per_user`] webhooks on
    /// tasks that have not ended.
    UserFull,
}

impl PushWrite {
    /// Whether a store with `on_task` webhooks on the task and `live` on
    /// the user's tasks that have not ended may add one (`replaces`: the
    /// config's id is one of the task's already).
    pub fn decide(limits: PushLimits, replaces: bool, on_task: usize, live: usize) -> Self {
        if replaces {
            Self::Written
        } else if on_task >= limits.per_task {
            Self::TaskFull
        } else if live >= limits.per_user {
            Self::UserFull
        } else {
            Self::Written
        }
    }
}

/// Milliseconds since the Unix epoch: when a claim was made.
pub(crate) fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The claim time before which a claim is stale.
pub(crate) fn stale_before(stale: Duration) -> i64 {
    now_millis().saturating_sub(i64::try_from(stale.as_millis()).unwrap_or(i64::MAX))
}

/// Whether `task` matches `query`'s filters.
pub(crate) fn matches(task: &Task, query: &TaskQuery) -> bool {
    query
        .context_id
        .as_ref()
        .is_none_or(|c| *c == task.context_id)
        && query.state.is_none_or(|s| s == task.status.state)
}

/// A task left running by a dead process, failed with `reason`.
pub(crate) fn failed(mut task: Task, reason: &str) -> Task {
    task.set_state(TaskState::Failed, Some(reason));
    task
}
