//! [`SqliteTaskStore`]: tasks in SQLite, in the sessions' database file
//! (its own table) or any other file.
//!
//! Rules: as [the store's](crate::store). A task is one row: its owner, id,
//! context, state, update time and the whole task as JSON, written in one
//! statement (insert or replace), so several processes on one file read
//! whole tasks. The file is an
//! [`SqliteFile`](oscova_agent::session::store::SqliteFile): WAL with
//! `synchronous=FULL`, one writer thread per file per process with group
//! commit, shared with the session store when the tasks live in the
//! sessions' file (the default), so a `put` that returned is in a synced
//! commit (durable across a power cut) and the puts of concurrent tasks,
//! and the session appends beside them, share one transaction and one
//! sync; a put that fails fails alone. Reads run on read connections and
//! see every put that returned. Listing is ordered by the row's creation
//! sequence, newest first.

use std::path::{Path, PathBuf};

use oscova_agent::session::store::{SqliteFile, SqliteFileError};
use rusqlite::{OptionalExtension, params};

use crate::store::{StoreError, TaskPage, TaskQuery, TaskStore, failed, matches};
use crate::wire::{Task, TaskState};

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS a2a_tasks (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    task TEXT NOT NULL,
    UNIQUE (owner, id)
);
CREATE INDEX IF NOT EXISTS a2a_tasks_owner ON a2a_tasks (owner, seq);";

/// Tasks in a SQLite file: one row per task, written whole, so several
/// processes on one file read whole tasks; reads name the owner.
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
}

#[async_trait::async_trait]
impl TaskStore for SqliteTaskStore {
    async fn put(&self, owner: &str, task: &Task) -> Result<(), StoreError> {
        let json = serde_json::to_string(task)?;
        let (owner, id, context, state) = (
            owner.to_owned(),
            task.id.clone(),
            task.context_id.clone(),
            task.status.state.as_str(),
        );
        self.file
            .write(move |conn| {
                conn.execute(
                    "INSERT INTO a2a_tasks (owner, id, context_id, state, task) VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT (owner, id) DO UPDATE SET state = excluded.state, task = excluded.task",
                    params![owner, id, context, state, json],
                )
                .map_err(db)?;
                Ok(())
            })
            .await
    }

    async fn get(&self, owner: &str, id: &str) -> Result<Option<Task>, StoreError> {
        let (owner, id) = (owner.to_owned(), id.to_owned());
        let json: Option<String> = self
            .file
            .read(move |conn| {
                conn.query_row(
                    "SELECT task FROM a2a_tasks WHERE owner = ?1 AND id = ?2",
                    params![owner, id],
                    |row| row.get(0),
                )
                .optional()
                .map_err(db)
            })
            .await?;
        Ok(json.map(|j| serde_json::from_str(&j)).transpose()?)
    }

    async fn list(&self, owner: &str, query: &TaskQuery) -> Result<TaskPage, StoreError> {
        let owner = owner.to_owned();
        let rows: Vec<String> = self
            .file
            .read(move |conn| {
                let mut statement = conn
                    .prepare("SELECT task FROM a2a_tasks WHERE owner = ?1 ORDER BY seq DESC")
                    .map_err(db)?;
                let rows = statement
                    .query_map(params![owner], |row| row.get(0))
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
                let rows: Vec<(i64, String)> = {
                    let mut statement = conn
                        .prepare("SELECT seq, task FROM a2a_tasks WHERE state IN (?1, ?2)")
                        .map_err(db)?;
                    statement
                        .query_map(
                            params![TaskState::Submitted.as_str(), TaskState::Working.as_str()],
                            |row| Ok((row.get(0)?, row.get(1)?)),
                        )
                        .map_err(db)?
                        .collect::<Result<_, _>>()
                        .map_err(db)?
                };
                for (seq, json) in &rows {
                    let task = failed(serde_json::from_str(json)?, &reason);
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
