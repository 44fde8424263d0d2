//! Tasks in Postgres: a table of the [`PostgresWaitStore`]'s database.
//!
//! Rules: as [the store's](super). A task is one row; each change is one
//! conditional statement (an answer is merged into the task's answers by
//! the database, `jsonb ||`), so instances changing one task at once lose
//! nothing, and writes that change a task leave an ended one as it is. A
//! connection the server closed is opened again by the next use, and the
//! statement is sent once more.

use rmcp::model::JsonObject;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::{
    ENDED, StoredTask, TaskStore, TaskUpdate, now_millis, object_of, status_of, status_text,
    text_of,
};
use crate::wait::{PostgresWaitStore, WaitStoreError, db};

pub(crate) const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS oscova_mcp_tasks (
    task_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    status TEXT NOT NULL,
    message TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    alive_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
    input_requests TEXT,
    responses TEXT NOT NULL DEFAULT '{}',
    outcome TEXT
);
CREATE INDEX IF NOT EXISTS oscova_mcp_tasks_expiry ON oscova_mcp_tasks (expires_at);";

const COLUMNS: &str = "task_id, user_id, tool, status, message, created_at, updated_at, \
    alive_at, expires_at, cancel_requested, input_requests, responses, outcome";

/// The task a row holds.
fn task_of(row: &Row) -> Result<StoredTask, WaitStoreError> {
    let status: String = row.try_get(3).map_err(db)?;
    let requests: Option<String> = row.try_get(10).map_err(db)?;
    let responses: String = row.try_get(11).map_err(db)?;
    let outcome: Option<String> = row.try_get(12).map_err(db)?;
    Ok(StoredTask {
        id: row.try_get(0).map_err(db)?,
        user: row.try_get(1).map_err(db)?,
        tool: row.try_get(2).map_err(db)?,
        status: status_of(&status)?,
        message: row.try_get(4).map_err(db)?,
        created_at: row.try_get(5).map_err(db)?,
        updated_at: row.try_get(6).map_err(db)?,
        alive_at: row.try_get(7).map_err(db)?,
        expires_at: row.try_get(8).map_err(db)?,
        cancel_requested: row.try_get(9).map_err(db)?,
        input_requests: object_of(requests.as_deref())?,
        responses: object_of(Some(&responses))?.unwrap_or_default(),
        outcome: object_of(outcome.as_deref())?,
    })
}

impl PostgresWaitStore {
    /// Runs `statement` with `params`, once more on a new connection if
    /// the server closed the one held; the rows it returned.
    async fn rows(
        &self,
        statement: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, WaitStoreError> {
        let mut client = self.client().await?;
        match client.query(statement, params).await {
            Err(error) if error.is_closed() => {
                *client = crate::wait::postgres::open(self.config()).await?;
                client.query(statement, params).await.map_err(db)
            }
            other => other.map_err(db),
        }
    }

    /// `user`'s live task `id`.
    async fn select(&self, id: &str, user: &str) -> Result<Option<StoredTask>, WaitStoreError> {
        let rows = self
            .rows(
                &format!(
                    "SELECT {COLUMNS} FROM oscova_mcp_tasks WHERE task_id = $1 \
                     AND user_id = $2 AND expires_at > $3"
                ),
                &[&id, &user, &now_millis()],
            )
            .await?;
        rows.first().map(task_of).transpose()
    }
}

#[async_trait::async_trait]
impl TaskStore for PostgresWaitStore {
    async fn create(&self, task: &StoredTask) -> Result<(), WaitStoreError> {
        let requests = text_of(task.input_requests.as_ref())?;
        let outcome = text_of(task.outcome.as_ref())?;
        let responses = text_of(Some(&task.responses))?;
        self.rows(
            "DELETE FROM oscova_mcp_tasks WHERE expires_at <= $1",
            &[&now_millis()],
        )
        .await?;
        self.rows(
            &format!(
                "INSERT INTO oscova_mcp_tasks ({COLUMNS}) VALUES \
                 ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
            ),
            &[
                &task.id,
                &task.user,
                &task.tool,
                &status_text(task.status),
                &task.message,
                &task.created_at,
                &task.updated_at,
                &task.alive_at,
                &task.expires_at,
                &task.cancel_requested,
                &requests,
                &responses,
                &outcome,
            ],
        )
        .await?;
        Ok(())
    }

    async fn get(&self, id: &str, user: &str) -> Result<Option<StoredTask>, WaitStoreError> {
        self.select(id, user).await
    }

    async fn update(&self, id: &str, update: &TaskUpdate) -> Result<bool, WaitStoreError> {
        let requests = text_of(update.input_requests.as_ref())?;
        let outcome = text_of(update.outcome.as_ref())?;
        let rows = self
            .rows(
                &format!(
                    "UPDATE oscova_mcp_tasks SET status = $2, \
                     message = COALESCE($3, message), input_requests = $4, outcome = $5, \
                     updated_at = $6, alive_at = $6 \
                     WHERE task_id = $1 AND status NOT IN {ENDED} RETURNING task_id"
                ),
                &[
                    &id,
                    &status_text(update.status),
                    &update.message,
                    &requests,
                    &outcome,
                    &now_millis(),
                ],
            )
            .await?;
        Ok(!rows.is_empty())
    }

    async fn alive(&self, id: &str) -> Result<(), WaitStoreError> {
        self.rows(
            "UPDATE oscova_mcp_tasks SET alive_at = $2 WHERE task_id = $1",
            &[&id, &now_millis()],
        )
        .await?;
        Ok(())
    }

    async fn cancel(&self, id: &str, user: &str) -> Result<Option<StoredTask>, WaitStoreError> {
        self.rows(
            &format!(
                "UPDATE oscova_mcp_tasks SET cancel_requested = TRUE WHERE task_id = $1 \
                 AND user_id = $2 AND status NOT IN {ENDED}"
            ),
            &[&id, &user],
        )
        .await?;
        self.select(id, user).await
    }

    async fn respond(
        &self,
        id: &str,
        user: &str,
        responses: &JsonObject,
    ) -> Result<Option<StoredTask>, WaitStoreError> {
        let responses = text_of(Some(responses))?;
        self.rows(
            &format!(
                "UPDATE oscova_mcp_tasks \
                 SET responses = (responses::jsonb || $3::text::jsonb)::text \
                 WHERE task_id = $1 AND user_id = $2 AND status NOT IN {ENDED}"
            ),
            &[&id, &user, &responses],
        )
        .await?;
        self.select(id, user).await
    }
}
