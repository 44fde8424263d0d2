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

use std::collections::HashMap;
use std::sync::Mutex;

use crate::wire::{Task, TaskState};

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
}

/// Tasks in memory, lost with the process.
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    /// (owner, id) → (insertion order, task).
    tasks: Mutex<HashMap<(String, String), (u64, Task)>>,
    next: std::sync::atomic::AtomicU64,
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
        let mut count = 0;
        for (_, task) in self.lock().values_mut() {
            if matches!(task.status.state, TaskState::Submitted | TaskState::Working) {
                *task = failed(task.clone(), reason);
                count += 1;
            }
        }
        Ok(count)
    }
}
