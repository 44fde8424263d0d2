//! Tasks in SQLite: a table of the [`SqliteWaitStore`]'s file.
//!
//! Rules: as [the store's](super). A task is one row; every write goes
//! through the file's one writer (`BEGIN IMMEDIATE`), so a change read and
//! written there (an answer added to the task's answers) is one step
//! across the processes sharing the file. Writes that change a task leave
//! an ended one as it is.

use rusqlite::{OptionalExtension, Row, params};

use super::{
    ENDED, StoredTask, TaskStore, TaskUpdate, now_millis, object_of, status_of, status_text,
    text_of,
};
use crate::wait::{SqliteWaitStore, WaitStoreError, db};
use rmcp::model::JsonObject;

pub(crate) const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS mcp_tasks (
    task_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    status TEXT NOT NULL,
    message TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    alive_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    input_requests TEXT,
    responses TEXT NOT NULL DEFAULT '{}',
    outcome TEXT
);
CREATE INDEX IF NOT EXISTS mcp_tasks_expiry ON mcp_tasks (expires_at);";

const COLUMNS: &str = "task_id, user_id, tool, status, message, created_at, updated_at, \
    alive_at, expires_at, cancel_requested, input_requests, responses, outcome";

/// A row's columns, before the JSON is read.
struct Columns {
    id: String,
    user: String,
    tool: String,
    status: String,
    message: Option<String>,
    times: [i64; 4],
    cancel_requested: bool,
    input_requests: Option<String>,
    responses: String,
    outcome: Option<String>,
}

impl Columns {
    fn of(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: row.get(0)?,
            user: row.get(1)?,
            tool: row.get(2)?,
            status: row.get(3)?,
            message: row.get(4)?,
            times: [row.get(5)?, row.get(6)?, row.get(7)?, row.get(8)?],
            cancel_requested: row.get(9)?,
            input_requests: row.get(10)?,
            responses: row.get(11)?,
            outcome: row.get(12)?,
        })
    }

    fn task(self) -> Result<StoredTask, WaitStoreError> {
        let [created_at, updated_at, alive_at, expires_at] = self.times;
        Ok(StoredTask {
            id: self.id,
            user: self.user,
            tool: self.tool,
            status: status_of(&self.status)?,
            message: self.message,
            created_at,
            updated_at,
            alive_at,
            expires_at,
            cancel_requested: self.cancel_requested,
            input_requests: object_of(self.input_requests.as_deref())?,
            responses: object_of(Some(&self.responses))?.unwrap_or_default(),
            outcome: object_of(self.outcome.as_deref())?,
        })
    }
}

/// `user`'s live task `id` on `conn`.
fn select(
    conn: &rusqlite::Connection,
    id: &str,
    user: &str,
) -> Result<Option<Columns>, WaitStoreError> {
    conn.query_row(
        &format!(
            "SELECT {COLUMNS} FROM mcp_tasks WHERE task_id = ?1 AND user_id = ?2 \
             AND expires_at > ?3"
        ),
        params![id, user, now_millis()],
        Columns::of,
    )
    .optional()
    .map_err(db)
}

#[async_trait::async_trait]
impl TaskStore for SqliteWaitStore {
    async fn create(&self, task: &StoredTask) -> Result<(), WaitStoreError> {
        let task = task.clone();
        let (requests, outcome) = (
            text_of(task.input_requests.as_ref())?,
            text_of(task.outcome.as_ref())?,
        );
        let responses = text_of(Some(&task.responses))?;
        self.file
            .write(move |conn| {
                conn.execute(
                    "DELETE FROM mcp_tasks WHERE expires_at <= ?1",
                    params![now_millis()],
                )
                .map_err(db)?;
                conn.execute(
                    &format!(
                        "INSERT INTO mcp_tasks ({COLUMNS}) VALUES \
                         (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
                    ),
                    params![
                        task.id,
                        task.user,
                        task.tool,
                        status_text(task.status),
                        task.message,
                        task.created_at,
                        task.updated_at,
                        task.alive_at,
                        task.expires_at,
                        task.cancel_requested,
                        requests,
                        responses,
                        outcome
                    ],
                )
                .map_err(db)?;
                Ok(())
            })
            .await
    }

    async fn get(&self, id: &str, user: &str) -> Result<Option<StoredTask>, WaitStoreError> {
        let (id, user) = (id.to_owned(), user.to_owned());
        let row = self.file.read(move |conn| select(conn, &id, &user)).await?;
        row.map(Columns::task).transpose()
    }

    async fn update(&self, id: &str, update: &TaskUpdate) -> Result<bool, WaitStoreError> {
        let id = id.to_owned();
        let status = status_text(update.status);
        let message = update.message.clone();
        let requests = text_of(update.input_requests.as_ref())?;
        let outcome = text_of(update.outcome.as_ref())?;
        let changed = self
            .file
            .write(move |conn| {
                conn.execute(
                    &format!(
                        "UPDATE mcp_tasks SET status = ?2, message = COALESCE(?3, message), \
                         input_requests = ?4, outcome = ?5, updated_at = ?6, alive_at = ?6 \
                         WHERE task_id = ?1 AND status NOT IN {ENDED}"
                    ),
                    params![id, status, message, requests, outcome, now_millis()],
                )
                .map_err(db)
            })
            .await?;
        Ok(changed > 0)
    }

    async fn alive(&self, id: &str) -> Result<(), WaitStoreError> {
        let id = id.to_owned();
        self.file
            .write(move |conn| {
                conn.execute(
                    "UPDATE mcp_tasks SET alive_at = ?2 WHERE task_id = ?1",
                    params![id, now_millis()],
                )
                .map_err(db)?;
                Ok(())
            })
            .await
    }

    async fn cancel(&self, id: &str, user: &str) -> Result<Option<StoredTask>, WaitStoreError> {
        let (id, user) = (id.to_owned(), user.to_owned());
        let row = self
            .file
            .write(move |conn| {
                conn.execute(
                    &format!(
                        "UPDATE mcp_tasks SET cancel_requested = 1 WHERE task_id = ?1 \
                         AND user_id = ?2 AND status NOT IN {ENDED}"
                    ),
                    params![id, user],
                )
                .map_err(db)?;
                select(conn, &id, &user)
            })
            .await?;
        row.map(Columns::task).transpose()
    }

    async fn respond(
        &self,
        id: &str,
        user: &str,
        responses: &JsonObject,
    ) -> Result<Option<StoredTask>, WaitStoreError> {
        let (id, user) = (id.to_owned(), user.to_owned());
        let responses = responses.clone();
        let row = self
            .file
            .write(move |conn| -> Result<Option<Columns>, WaitStoreError> {
                let Some(mut row) = select(conn, &id, &user)? else {
                    return Ok(None);
                };
                if ["completed", "failed", "cancelled"].contains(&row.status.as_str()) {
                    return Ok(Some(row));
                }
                // Read and written inside the writer's one transaction.
                let mut all: JsonObject =
                    serde_json::from_str(&row.responses).map_err(WaitStoreError::Data)?;
                all.extend(responses);
                row.responses = serde_json::to_string(&all).map_err(WaitStoreError::Data)?;
                conn.execute(
                    "UPDATE mcp_tasks SET responses = ?2 WHERE task_id = ?1",
                    params![id, row.responses],
                )
                .map_err(db)?;
                Ok(Some(row))
            })
            .await?;
        row.map(Columns::task).transpose()
    }
}
