//! [`SqliteTaskStore`]: tasks in SQLite, in the sessions' database file
//! (its own table) or any other file.
//!
//! Rules: as [the store's](crate::store). A task is one row: its user, id,
//! context, state, update time and the whole task as JSON, written in one
//! statement (insert or replace), so several processes on one file read
//! whole tasks. The file is an
//! [`SqliteFile`](oscova_agent::session::store::SqliteFile): WAL with
//! `synchronous=FULL`, one writer thread per file per process with group
//! commit, shared with the session store when the tasks live in the
//! sessions' file (the default), so a `put` that returned is in a synced
//! commit (durable across a power cut) and the puts of concurrent tasks,
//! and the session appends beside them, share one transaction and one
//! sync; a put that fails fails alone (each write is a savepoint of the
//! shared transaction, so a write of several statements is whole or
//! absent). Reads run on read connections and see every put that
//! returned. Listing is ordered by the row's creation sequence, newest
//! first. A task's webhooks are rows of `a2a_push_configs` (user, task,
//! id, the config as JSON, its secrets included: the file is as private
//! as the sessions in it); an owed push is a row of `a2a_push_owed`,
//! written in the same write as the final state; the call an
//! `INPUT_REQUIRED` task waits on is a row of `a2a_waits`, written with
//! that state and taken by one `DELETE … RETURNING` on the writer. A webhook is counted
//! against its bounds and inserted in one write (the writer's `BEGIN
//! IMMEDIATE` transaction), so two processes adding at once cannot pass
//! them. The tables' `owner` column holds the user id: its name is the
//! first schema's, kept so databases written by earlier versions open
//! unchanged.

use std::path::{Path, PathBuf};
use std::time::Duration;

use oscova_agent::session::store::{SqliteFile, SqliteFileError};
use rusqlite::{OptionalExtension, params};

use super::{
    ExpiredWait, PushLimits, PushWrite, StoreError, TaskPage, TaskQuery, TaskStore, TaskWait,
    failed, matches, now_millis, stale_before,
};
use crate::model::{PushConfig, Task, TaskState};

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS a2a_tasks (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    task TEXT NOT NULL,
    UNIQUE (owner, id)
);
CREATE INDEX IF NOT EXISTS a2a_tasks_owner ON a2a_tasks (owner, seq);
CREATE TABLE IF NOT EXISTS a2a_push_configs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    owner TEXT NOT NULL,
    task_id TEXT NOT NULL,
    id TEXT NOT NULL,
    config TEXT NOT NULL,
    UNIQUE (owner, task_id, id)
);
CREATE TABLE IF NOT EXISTS a2a_push_owed (
    owner TEXT NOT NULL,
    task_id TEXT NOT NULL,
    claimed_at INTEGER NOT NULL,
    claims INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (owner, task_id)
);
CREATE TABLE IF NOT EXISTS a2a_waits (
    owner TEXT NOT NULL,
    task_id TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    wait TEXT NOT NULL,
    PRIMARY KEY (owner, task_id)
);";

/// Drops the wait of the task (?1, ?2).
const UNWAIT: &str = "DELETE FROM a2a_waits WHERE owner = ?1 AND task_id = ?2";

/// Marks the push of (?1, ?2) owed, claimed at ?3, when it has a webhook.
const OWE: &str = "INSERT INTO a2a_push_owed (owner, task_id, claimed_at, claims)
    SELECT ?1, ?2, ?3, 0 WHERE EXISTS
        (SELECT 1 FROM a2a_push_configs WHERE owner = ?1 AND task_id = ?2)
    ON CONFLICT (owner, task_id) DO UPDATE SET claimed_at = excluded.claimed_at, claims = 0";

/// How many webhooks the task (?1, ?2) has, and whether ?3 is one of them.
const ON_TASK: &str = "SELECT COUNT(*), COALESCE(SUM(id = ?3), 0) FROM a2a_push_configs
    WHERE owner = ?1 AND task_id = ?2";

/// How many webhooks ?1 has on tasks not stored in a terminal state
/// (?2..?5).
const LIVE: &str = "SELECT COUNT(*) FROM a2a_push_configs c
    LEFT JOIN a2a_tasks t ON t.owner = c.owner AND t.id = c.task_id
    WHERE c.owner = ?1 AND (t.state IS NULL OR t.state NOT IN (?2, ?3, ?4, ?5))";

/// A task's write. A task stored in a final state (`TaskState::TERMINAL`,
/// bound as ?6 to ?9 by [`upsert`]) keeps it: a run's later write never
/// replaces a cancel stored meanwhile.
const UPSERT: &str =
    "INSERT INTO a2a_tasks (owner, id, context_id, state, task) VALUES (?1, ?2, ?3, ?4, ?5)
    ON CONFLICT (owner, id) DO UPDATE SET state = excluded.state, task = excluded.task
    WHERE a2a_tasks.state NOT IN (?6, ?7, ?8, ?9)";

/// Writes `user`'s task `id` (in `context`, in `state`, `json` its
/// serialization) through [`UPSERT`].
fn upsert(
    conn: &rusqlite::Connection,
    user: &str,
    id: &str,
    context: &str,
    state: &str,
    json: &str,
) -> Result<(), StoreError> {
    let [a, b, c, d] = TaskState::TERMINAL.map(TaskState::as_str);
    conn.execute(UPSERT, params![user, id, context, state, json, a, b, c, d])
        .map_err(db)?;
    Ok(())
}

/// Tasks in a SQLite file: one row per task, written whole, so several
/// processes on one file read whole tasks; reads name the user.
#[derive(Debug, Clone)]
pub struct SqliteTaskStore {
    file: SqliteFile,
}

fn db(error: impl std::fmt::Display) -> StoreError {
    StoreError::Database(error.to_string())
}

impl From<SqliteFileError> for StoreError {
    fn from(error: SqliteFileError) -> Self {
        db(error)
    }
}

impl SqliteTaskStore {
    /// Opens (or creates) the table in the file at `path` (the sessions'
    /// database file is a good place: this process's session store there
    /// shares its writer).
    pub async fn open(path: impl Into<PathBuf>) -> Result<Self, StoreError> {
        Self::on(SqliteFile::open(path).await?).await
    }

    /// Creates the table (when missing) in `file`, an open file another
    /// store may use too.
    pub async fn on(file: SqliteFile) -> Result<Self, StoreError> {
        file.write(|conn| conn.execute_batch(SCHEMA).map_err(db))
            .await?;
        Ok(Self { file })
    }

    /// The file the store is in.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Writes `task` whole; with `owe`, in the same write, the push its
    /// final state owes its webhooks (when it has any).
    async fn write_task(&self, user: &str, task: &Task, owe: bool) -> Result<(), StoreError> {
        let json = serde_json::to_string(task)?;
        let (user, id, context, state) = (
            user.to_owned(),
            task.id.clone(),
            task.context_id.clone(),
            task.status.state.as_str(),
        );
        self.file
            .write(move |conn| {
                upsert(conn, &user, &id, &context, state, &json)?;
                if owe {
                    conn.execute(OWE, params![user, id, now_millis()])
                        .map_err(db)?;
                    conn.execute(UNWAIT, params![user, id]).map_err(db)?;
                }
                Ok(())
            })
            .await
    }
}

#[async_trait::async_trait]
impl TaskStore for SqliteTaskStore {
    async fn put(&self, user: &str, task: &Task) -> Result<(), StoreError> {
        self.write_task(user, task, false).await
    }

    async fn put_final(&self, user: &str, task: &Task) -> Result<(), StoreError> {
        self.write_task(user, task, true).await
    }

    async fn put_waiting(
        &self,
        user: &str,
        task: &Task,
        wait: &TaskWait,
    ) -> Result<(), StoreError> {
        let json = serde_json::to_string(task)?;
        let kept = serde_json::to_string(wait)?;
        let (user, id, context, state, expires) = (
            user.to_owned(),
            task.id.clone(),
            task.context_id.clone(),
            task.status.state.as_str(),
            wait.expires_at,
        );
        self.file
            .write(move |conn| {
                upsert(conn, &user, &id, &context, state, &json)?;
                conn.execute(
                    "INSERT INTO a2a_waits (owner, task_id, expires_at, wait) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (owner, task_id) DO UPDATE
                     SET expires_at = excluded.expires_at, wait = excluded.wait",
                    params![user, id, expires, kept],
                )
                .map_err(db)?;
                Ok(())
            })
            .await
    }

    async fn take_wait(&self, user: &str, id: &str) -> Result<Option<TaskWait>, StoreError> {
        let (user, id) = (user.to_owned(), id.to_owned());
        // On the writer (`BEGIN IMMEDIATE`): two processes taking at once
        // are serialized, and the second finds no row.
        let json: Option<String> = self
            .file
            .write(move |conn| {
                conn.query_row(
                    "DELETE FROM a2a_waits WHERE owner = ?1 AND task_id = ?2 RETURNING wait",
                    params![user, id],
                    |row| row.get(0),
                )
                .optional()
                .map_err(db)
            })
            .await?;
        Ok(json.map(|j| serde_json::from_str(&j)).transpose()?)
    }

    async fn take_expired_waits(&self, now: i64) -> Result<Vec<ExpiredWait>, StoreError> {
        let rows: Vec<(String, String, String)> = self
            .file
            .write(move |conn| {
                let mut statement = conn
                    .prepare(
                        "DELETE FROM a2a_waits WHERE expires_at <= ?1 RETURNING owner, task_id, wait",
                    )
                    .map_err(db)?;
                statement
                    .query_map(params![now], |row| {
                        Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                    })
                    .map_err(db)?
                    .collect::<Result<_, _>>()
                    .map_err(db)
            })
            .await?;
        rows.into_iter()
            .map(|(user, id, json)| Ok((user, id, serde_json::from_str(&json)?)))
            .collect()
    }

    async fn put_push_config(
        &self,
        user: &str,
        config: &PushConfig,
        limits: PushLimits,
    ) -> Result<PushWrite, StoreError> {
        let json = serde_json::to_string(config)?;
        let (user, task, id) = (user.to_owned(), config.task_id.clone(), config.id.clone());
        self.file
            .write(move |conn| {
                let (on_task, replaces): (i64, i64) = conn
                    .query_row(ON_TASK, params![user, task, id], |row| {
                        Ok((row.get(0)?, row.get(1)?))
                    })
                    .map_err(db)?;
                let [a, b, c, d] = TaskState::TERMINAL.map(TaskState::as_str);
                let live: i64 = conn
                    .query_row(LIVE, params![user, a, b, c, d], |row| row.get(0))
                    .map_err(db)?;
                let count = |n: i64| usize::try_from(n).unwrap_or(usize::MAX);
                let decided =
                    PushWrite::decide(limits, replaces > 0, count(on_task), count(live));
                if decided != PushWrite::Written {
                    return Ok(decided);
                }
                conn.execute(
                    "INSERT INTO a2a_push_configs (owner, task_id, id, config) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (owner, task_id, id) DO UPDATE SET config = excluded.config",
                    params![user, task, id, json],
                )
                .map_err(db)?;
                Ok(decided)
            })
            .await
    }

    async fn push_configs(&self, user: &str, task: &str) -> Result<Vec<PushConfig>, StoreError> {
        let (user, task) = (user.to_owned(), task.to_owned());
        let rows: Vec<String> = self
            .file
            .read(move |conn| {
                let mut statement = conn
                    .prepare(
                        "SELECT config FROM a2a_push_configs WHERE owner = ?1 AND task_id = ?2 ORDER BY seq",
                    )
                    .map_err(db)?;
                let rows = statement
                    .query_map(params![user, task], |row| row.get(0))
                    .map_err(db)?
                    .collect::<Result<Vec<String>, _>>()
                    .map_err(db)?;
                Ok::<_, StoreError>(rows)
            })
            .await?;
        rows.iter()
            .map(|json| Ok(serde_json::from_str(json)?))
            .collect()
    }

    async fn delete_push_config(
        &self,
        user: &str,
        task: &str,
        id: &str,
    ) -> Result<bool, StoreError> {
        let (user, task, id) = (user.to_owned(), task.to_owned(), id.to_owned());
        self.file
            .write(move |conn| {
                let gone = conn
                .execute(
                    "DELETE FROM a2a_push_configs WHERE owner = ?1 AND task_id = ?2 AND id = ?3",
                    params![user, task, id],
                )
                .map_err(db)?;
                Ok(gone > 0)
            })
            .await
    }

    async fn push_delivered(&self, user: &str, task: &str) -> Result<(), StoreError> {
        let (user, task) = (user.to_owned(), task.to_owned());
        self.file
            .write(move |conn| {
                conn.execute(
                    "DELETE FROM a2a_push_owed WHERE owner = ?1 AND task_id = ?2",
                    params![user, task],
                )
                .map_err(db)?;
                Ok(())
            })
            .await
    }

    async fn claim_owed_pushes(
        &self,
        stale: Duration,
        max_claims: u32,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let before = stale_before(stale);
        // One write: the writer's transaction is `BEGIN IMMEDIATE`, so two
        // processes sweeping at once claim each row once.
        self.file.write(move |conn| {
            let rows: Vec<(String, String, u32)> = {
                let mut statement = conn
                    .prepare(
                        "SELECT owner, task_id, claims FROM a2a_push_owed WHERE claimed_at <= ?1",
                    )
                    .map_err(db)?;
                statement
                    .query_map(params![before], |row| {
                        Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                    })
                    .map_err(db)?
                    .collect::<Result<_, _>>()
                    .map_err(db)?
            };
            let mut claimed = Vec::new();
            for (user, task, claims) in rows {
                if claims >= max_claims {
                    tracing::warn!(%task, "an owed push was given up after {max_claims} sweeps");
                    conn.execute(
                        "DELETE FROM a2a_push_owed WHERE owner = ?1 AND task_id = ?2",
                        params![user, task],
                    )
                    .map_err(db)?;
                    continue;
                }
                conn.execute(
                    "UPDATE a2a_push_owed SET claimed_at = ?3, claims = claims + 1
                     WHERE owner = ?1 AND task_id = ?2",
                    params![user, task, now_millis()],
                )
                .map_err(db)?;
                claimed.push((user, task));
            }
            Ok(claimed)
        })
        .await
    }

    async fn get(&self, user: &str, id: &str) -> Result<Option<Task>, StoreError> {
        let (user, id) = (user.to_owned(), id.to_owned());
        let json: Option<String> = self
            .file
            .read(move |conn| {
                conn.query_row(
                    "SELECT task FROM a2a_tasks WHERE owner = ?1 AND id = ?2",
                    params![user, id],
                    |row| row.get(0),
                )
                .optional()
                .map_err(db)
            })
            .await?;
        Ok(json.map(|j| serde_json::from_str(&j)).transpose()?)
    }

    async fn list(&self, user: &str, query: &TaskQuery) -> Result<TaskPage, StoreError> {
        let user = user.to_owned();
        let rows: Vec<String> = self
            .file
            .read(move |conn| {
                let mut statement = conn
                    .prepare("SELECT task FROM a2a_tasks WHERE owner = ?1 ORDER BY seq DESC")
                    .map_err(db)?;
                let rows = statement
                    .query_map(params![user], |row| row.get(0))
                    .map_err(db)?
                    .collect::<Result<Vec<String>, _>>()
                    .map_err(db)?;
                Ok::<_, StoreError>(rows)
            })
            .await?;
        let mut all = Vec::new();
        for json in rows {
            let task: Task = serde_json::from_str(&json)?;
            if matches(&task, query) {
                all.push(task);
            }
        }
        Ok(TaskPage {
            total: all.len(),
            tasks: all
                .into_iter()
                .skip(query.offset)
                .take(query.limit)
                .collect(),
        })
    }

    async fn fail_unfinished(&self, reason: &str) -> Result<usize, StoreError> {
        let reason = reason.to_owned();
        self.file
            .write(move |conn| {
                let rows: Vec<(i64, String, String)> = {
                    let mut statement = conn
                        .prepare("SELECT seq, owner, task FROM a2a_tasks WHERE state IN (?1, ?2)")
                        .map_err(db)?;
                    statement
                        .query_map(
                            params![TaskState::Submitted.as_str(), TaskState::Working.as_str()],
                            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
                        )
                        .map_err(db)?
                        .collect::<Result<_, _>>()
                        .map_err(db)?
                };
                for (seq, user, json) in &rows {
                    let task = failed(serde_json::from_str(json)?, &reason);
                    conn.execute(OWE, params![user, task.id, now_millis()])
                        .map_err(db)?;
                    conn.execute(
                        "UPDATE a2a_tasks SET state = ?1, task = ?2 WHERE seq = ?3",
                        params![
                            task.status.state.as_str(),
                            serde_json::to_string(&task)?,
                            seq
                        ],
                    )
                    .map_err(db)?;
                }
                Ok(rows.len())
            })
            .await
    }
}
