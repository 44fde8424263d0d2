//! Where tasks are kept: the [`TaskStore`] trait, [`MemoryTaskStore`]
//! for tests and one process, and (feature `sqlite`)
//! [`SqliteTaskStore`](crate::SqliteTaskStore) beside the sessions.
//!
//! Rules: every read names the task's owner (the user id of the request),
//! and a task of another owner is answered as a missing one, so no store
//! can leak that a task exists to anyone but its owner. A task is written
//! whole each time it changes (its status, history and artifacts), so a
//! reader on another process sees a state the writer had, never half of
//! one. [`TaskStore::fail_unfinished`] is what a process calls when it
//! starts: a task left `SUBMITTED` or `WORKING` by a process that died
//! becomes `FAILED` with a reason, never lost and never left running.
//!
//! A task's webhooks ([`PushConfig`]) are kept beside it, read and
//! deleted by the same owner, and bounded per task and per owner
//! ([`PushLimits`], checked in the write that adds one, so concurrent
//! writers cannot pass them; see `push.rs`). A final state (terminal, or
//! `AUTH_REQUIRED`) written with [`TaskStore::put_final`], or by
//! [`TaskStore::fail_unfinished`], marks its push owed in the same write
//! when the task has a webhook; [`TaskStore::push_delivered`] clears the
//! mark and [`TaskStore::claim_owed_pushes`] hands marks whose claim is
//! old to a sweep, dropping those claimed too often. A store that several
//! processes share may relay a run's stream events from the process
//! running it to the others ([`TaskStore::publish`],
//! [`TaskStore::follow`]: Postgres does, with `LISTEN`/`NOTIFY`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;

#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "postgres")]
mod postgres_relay;
pub(crate) mod relay;
#[cfg(feature = "sqlite")]
mod sqlite;

#[cfg(feature = "postgres")]
pub use postgres::PostgresTaskStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteTaskStore;

use crate::push::{PushConfig, PushLimits, PushWrite};
use crate::model::{Task, TaskState};

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

/// Keeps tasks by owner: every read names the owner, and another owner's
/// task reads as a missing one; a task is written whole each time it
/// changes.
#[async_trait::async_trait]
pub trait TaskStore: Send + Sync + 'static {
    /// Writes `task` for `owner` (inserted, or replacing the stored one).
    async fn put(&self, owner: &str, task: &Task) -> Result<(), StoreError>;
    /// The task `id` of `owner`; `None` when missing or another owner's.
    async fn get(&self, owner: &str, id: &str) -> Result<Option<Task>, StoreError>;
    /// The tasks of `owner` matching `query`, newest first.
    async fn list(&self, owner: &str, query: &TaskQuery) -> Result<TaskPage, StoreError>;
    /// Moves every task left `SUBMITTED` or `WORKING` to `FAILED` with
    /// `reason`; returns how many.
    async fn fail_unfinished(&self, reason: &str) -> Result<usize, StoreError>;
    /// Writes `task` in a final state, and in the same write marks its
    /// push owed (claimed now) when the task has a webhook.
    async fn put_final(&self, owner: &str, task: &Task) -> Result<(), StoreError>;
    /// Writes a webhook of `owner`'s task `config.task_id` (inserted, or
    /// replacing the one with its id), unless that adds one past
    /// `limits`: the task's webhooks, or `owner`'s on tasks not stored in
    /// a terminal state (a task not stored yet counts as not ended). The
    /// count and the write are one step: concurrent writers, in this
    /// process or another on the same store, cannot pass the bounds
    /// ([`PushWrite::decide`] says what to write).
    async fn put_push_config(
        &self,
        owner: &str,
        config: &PushConfig,
        limits: PushLimits,
    ) -> Result<PushWrite, StoreError>;
    /// The webhooks of the task `task` of `owner`, oldest first.
    async fn push_configs(&self, owner: &str, task: &str) -> Result<Vec<PushConfig>, StoreError>;
    /// Deletes the webhook `id` of the task; whether there was one.
    async fn delete_push_config(
        &self,
        owner: &str,
        task: &str,
        id: &str,
    ) -> Result<bool, StoreError>;
    /// Clears the task's owed push.
    async fn push_delivered(&self, owner: &str, task: &str) -> Result<(), StoreError>;
    /// Claims the owed pushes whose claim is at least `stale` old (counting
    /// the claim; a mark claimed `max_claims` times is dropped instead);
    /// returns (owner, task id) of each claimed.
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
    /// Tells the processes following the task `task` of `owner` a stream
    /// event of its run here (see `relay.rs`); nothing unless the store
    /// relays.
    async fn publish(&self, owner: &str, task: &str, event: &Value) -> Result<(), StoreError> {
        let _ = (owner, task, event);
        Ok(())
    }
    /// The stream events another process publishes for the task `task`
    /// from now on, each with its owner (the reader keeps its own); `None`
    /// when the store relays none.
    async fn follow(&self, task: &str) -> Result<Option<Relayed>, StoreError> {
        let _ = task;
        Ok(None)
    }
}

/// Stream events relayed from another process: (owner, event).
pub type Relayed = tokio::sync::broadcast::Receiver<(String, Value)>;

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

/// An owed push: (claimed at, claims).
type Owed = HashMap<(String, String), (i64, u32)>;

/// Tasks in memory, lost with the process.
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    /// (owner, id) → (insertion order, task).
    tasks: Mutex<HashMap<(String, String), (u64, Task)>>,
    next: std::sync::atomic::AtomicU64,
    /// (owner, task id) → its webhooks.
    pushes: Mutex<HashMap<(String, String), Vec<PushConfig>>>,
    owed: Mutex<Owed>,
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), (u64, Task)>> {
        // Every change under the lock is one insert or one update.
        self.tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn pushes(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Vec<PushConfig>>> {
        self.pushes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn owed(&self) -> std::sync::MutexGuard<'_, Owed> {
        self.owed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Marks the task's push owed when it has a webhook.
    fn owe(&self, owner: &str, task: &str) {
        let key = (owner.to_owned(), task.to_owned());
        if self.pushes().get(&key).is_some_and(|l| !l.is_empty()) {
            self.owed().insert(key, (now_millis(), 0));
        }
    }
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

#[async_trait::async_trait]
impl TaskStore for MemoryTaskStore {
    async fn put(&self, owner: &str, task: &Task) -> Result<(), StoreError> {
        let order = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut tasks = self.lock();
        let entry = tasks
            .entry((owner.to_owned(), task.id.clone()))
            .or_insert_with(|| (order, task.clone()));
        entry.1 = task.clone();
        Ok(())
    }

    async fn get(&self, owner: &str, id: &str) -> Result<Option<Task>, StoreError> {
        Ok(self
            .lock()
            .get(&(owner.to_owned(), id.to_owned()))
            .map(|(_, task)| task.clone()))
    }

    async fn list(&self, owner: &str, query: &TaskQuery) -> Result<TaskPage, StoreError> {
        let tasks = self.lock();
        let mut mine: Vec<&(u64, Task)> = tasks
            .iter()
            .filter(|((o, _), (_, task))| o == owner && matches(task, query))
            .map(|(_, entry)| entry)
            .collect();
        mine.sort_by_key(|entry| std::cmp::Reverse(entry.0));
        Ok(TaskPage {
            total: mine.len(),
            tasks: mine
                .into_iter()
                .skip(query.offset)
                .take(query.limit)
                .map(|(_, task)| task.clone())
                .collect(),
        })
    }

    async fn fail_unfinished(&self, reason: &str) -> Result<usize, StoreError> {
        let mut done = Vec::new();
        for ((owner, id), (_, task)) in self.lock().iter_mut() {
            if matches!(task.status.state, TaskState::Submitted | TaskState::Working) {
                *task = failed(task.clone(), reason);
                done.push((owner.clone(), id.clone()));
            }
        }
        for (owner, id) in &done {
            self.owe(owner, id);
        }
        Ok(done.len())
    }

    async fn put_final(&self, owner: &str, task: &Task) -> Result<(), StoreError> {
        self.put(owner, task).await?;
        self.owe(owner, &task.id);
        Ok(())
    }

    async fn put_push_config(
        &self,
        owner: &str,
        config: &PushConfig,
        limits: PushLimits,
    ) -> Result<PushWrite, StoreError> {
        // The tasks' lock, then the webhooks': no other path holds both.
        let tasks = self.lock();
        let mut pushes = self.pushes();
        let ended = |task: &str| {
            tasks
                .get(&(owner.to_owned(), task.to_owned()))
                .is_some_and(|(_, t)| t.status.state.is_terminal())
        };
        let live = pushes
            .iter()
            .filter(|((o, task), _)| o == owner && !ended(task))
            .map(|(_, list)| list.len())
            .sum();
        let key = (owner.to_owned(), config.task_id.clone());
        let list = pushes.get(&key).map_or(&[][..], Vec::as_slice);
        let replaces = list.iter().any(|c| c.id == config.id);
        let decided = PushWrite::decide(limits, replaces, list.len(), live);
        drop(tasks);
        if decided != PushWrite::Written {
            return Ok(decided);
        }
        let list = pushes.entry(key).or_default();
        match list.iter_mut().find(|c| c.id == config.id) {
            Some(old) => *old = config.clone(),
            None => list.push(config.clone()),
        }
        Ok(decided)
    }

    async fn push_configs(&self, owner: &str, task: &str) -> Result<Vec<PushConfig>, StoreError> {
        Ok(self
            .pushes()
            .get(&(owner.to_owned(), task.to_owned()))
            .cloned()
            .unwrap_or_default())
    }

    async fn delete_push_config(
        &self,
        owner: &str,
        task: &str,
        id: &str,
    ) -> Result<bool, StoreError> {
        let mut pushes = self.pushes();
        let Some(list) = pushes.get_mut(&(owner.to_owned(), task.to_owned())) else {
            return Ok(false);
        };
        let before = list.len();
        list.retain(|c| c.id != id);
        Ok(before != list.len())
    }

    async fn push_delivered(&self, owner: &str, task: &str) -> Result<(), StoreError> {
        self.owed().remove(&(owner.to_owned(), task.to_owned()));
        Ok(())
    }

    async fn claim_owed_pushes(
        &self,
        stale: Duration,
        max_claims: u32,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let before = stale_before(stale);
        let mut claimed = Vec::new();
        self.owed().retain(|key, (at, claims)| {
            if *at > before {
                return true;
            }
            if *claims >= max_claims {
                tracing::warn!(task = %key.1, "an owed push was given up after {max_claims} sweeps");
                return false;
            }
            *at = now_millis();
            *claims += 1;
            claimed.push(key.clone());
            true
        });
        Ok(claimed)
    }
}
