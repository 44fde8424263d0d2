//! [`MemoryTaskStore`]: tasks in memory, for tests and one process.
//!
//! Rules: as [the store's](crate::store); every lock is held for one
//! insert or one update, and the tasks' lock is taken before the
//! webhooks' where both are needed, so no two paths wait on each other.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use super::{
    ExpiredWait, PushLimits, PushWrite, StoreError, TaskPage, TaskQuery, TaskStore, TaskWait,
    failed, matches, now_millis, stale_before,
};
use crate::model::{PushConfig, Task, TaskState};

/// An owed push: (claimed at, claims).
type Owed = HashMap<(String, String), (i64, u32)>;

/// Tasks in memory, lost with the process.
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    /// (user, id) → (insertion order, task).
    tasks: Mutex<HashMap<(String, String), (u64, Task)>>,
    next: std::sync::atomic::AtomicU64,
    /// (user, task id) → its webhooks.
    pushes: Mutex<HashMap<(String, String), Vec<PushConfig>>>,
    owed: Mutex<Owed>,
    /// (user, task id) → the call it waits on (under the tasks' lock's
    /// order: tasks first, then waits).
    waits: Mutex<HashMap<(String, String), TaskWait>>,
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

    fn waits(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), TaskWait>> {
        self.waits
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Marks the task's push owed when it has a webhook.
    fn owe(&self, user: &str, task: &str) {
        let key = (user.to_owned(), task.to_owned());
        if self.pushes().get(&key).is_some_and(|l| !l.is_empty()) {
            self.owed().insert(key, (now_millis(), 0));
        }
    }
}

#[async_trait::async_trait]
impl TaskStore for MemoryTaskStore {
    async fn put(&self, user: &str, task: &Task) -> Result<(), StoreError> {
        let order = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut tasks = self.lock();
        let entry = tasks
            .entry((user.to_owned(), task.id.clone()))
            .or_insert_with(|| (order, task.clone()));
        // A task in a final state keeps it, as in the SQL stores.
        if !entry.1.status.state.is_terminal() {
            entry.1 = task.clone();
        }
        Ok(())
    }

    async fn get(&self, user: &str, id: &str) -> Result<Option<Task>, StoreError> {
        Ok(self
            .lock()
            .get(&(user.to_owned(), id.to_owned()))
            .map(|(_, task)| task.clone()))
    }

    async fn list(&self, user: &str, query: &TaskQuery) -> Result<TaskPage, StoreError> {
        let tasks = self.lock();
        let mut mine: Vec<&(u64, Task)> = tasks
            .iter()
            .filter(|((o, _), (_, task))| o == user && matches(task, query))
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
        for ((user, id), (_, task)) in self.lock().iter_mut() {
            if matches!(task.status.state, TaskState::Submitted | TaskState::Working) {
                *task = failed(task.clone(), reason);
                done.push((user.clone(), id.clone()));
            }
        }
        for (user, id) in &done {
            self.owe(user, id);
        }
        Ok(done.len())
    }

    async fn put_final(&self, user: &str, task: &Task) -> Result<(), StoreError> {
        self.put(user, task).await?;
        self.waits().remove(&(user.to_owned(), task.id.clone()));
        self.owe(user, &task.id);
        Ok(())
    }

    async fn put_waiting(
        &self,
        user: &str,
        task: &Task,
        wait: &TaskWait,
    ) -> Result<(), StoreError> {
        // Both under the tasks' lock: a reader sees neither or both.
        let order = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut tasks = self.lock();
        let key = (user.to_owned(), task.id.clone());
        self.waits().insert(key.clone(), wait.clone());
        tasks.entry(key).or_insert_with(|| (order, task.clone())).1 = task.clone();
        Ok(())
    }

    async fn take_wait(&self, user: &str, id: &str) -> Result<Option<TaskWait>, StoreError> {
        Ok(self.waits().remove(&(user.to_owned(), id.to_owned())))
    }

    async fn take_expired_waits(&self, now: i64) -> Result<Vec<ExpiredWait>, StoreError> {
        let mut taken = Vec::new();
        self.waits().retain(|(user, id), wait| {
            if wait.is_expired_at(now) {
                taken.push((user.clone(), id.clone(), wait.clone()));
                return false;
            }
            true
        });
        Ok(taken)
    }

    async fn put_push_config(
        &self,
        user: &str,
        config: &PushConfig,
        limits: PushLimits,
    ) -> Result<PushWrite, StoreError> {
        // The tasks' lock, then the webhooks': no other path holds both.
        let tasks = self.lock();
        let mut pushes = self.pushes();
        let ended = |task: &str| {
            tasks
                .get(&(user.to_owned(), task.to_owned()))
                .is_some_and(|(_, t)| t.status.state.is_terminal())
        };
        let live = pushes
            .iter()
            .filter(|((o, task), _)| o == user && !ended(task))
            .map(|(_, list)| list.len())
            .sum();
        let key = (user.to_owned(), config.task_id.clone());
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

    async fn push_configs(&self, user: &str, task: &str) -> Result<Vec<PushConfig>, StoreError> {
        Ok(self
            .pushes()
            .get(&(user.to_owned(), task.to_owned()))
            .cloned()
            .unwrap_or_default())
    }

    async fn delete_push_config(
        &self,
        user: &str,
        task: &str,
        id: &str,
    ) -> Result<bool, StoreError> {
        let mut pushes = self.pushes();
        let Some(list) = pushes.get_mut(&(user.to_owned(), task.to_owned())) else {
            return Ok(false);
        };
        let before = list.len();
        list.retain(|c| c.id != id);
        Ok(before != list.len())
    }

    async fn push_delivered(&self, user: &str, task: &str) -> Result<(), StoreError> {
        self.owed().remove(&(user.to_owned(), task.to_owned()));
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
