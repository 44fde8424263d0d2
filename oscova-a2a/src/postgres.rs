//! [`PostgresTaskStore`]: tasks in Postgres, for several processes or
//! machines serving the same users (the sessions' database is a good
//! place).
//!
//! Rules: as [the store's](crate::store). A task is one row (owner, id,
//! context, state, the whole task as JSON), written in one statement, so
//! any instance reads whole tasks another wrote; listing is by the row's
//! sequence, newest first. The schema is created under an advisory lock,
//! so instances starting together do not race. A fleet turns
//! [`fail_unfinished_at_start`](crate::A2aServer::fail_unfinished_at_start)
//! off: another instance may be running the unfinished tasks.

use tokio::sync::Mutex;
use tokio_postgres::{Client, NoTls};

use crate::store::{StoreError, TaskPage, TaskQuery, TaskStore, failed, matches};
use crate::wire::{Task, TaskState};

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS oscova_a2a_tasks (
    seq BIGSERIAL PRIMARY KEY,
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    task TEXT NOT NULL,
    UNIQUE (owner, id)
);
CREATE INDEX IF NOT EXISTS oscova_a2a_tasks_owner ON oscova_a2a_tasks (owner, seq);";

/// The advisory lock the schema is created under.
const SCHEMA_LOCK: i64 = 0x05c0_7a2a;

fn db(error: impl std::fmt::Display) -> StoreError {
    StoreError::Database(error.to_string())
}

/// Tasks in Postgres: one row per task, written whole, read by owner, for
/// several processes or machines on one database.
pub struct PostgresTaskStore {
    client: Mutex<Client>,
}

impl std::fmt::Debug for PostgresTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresTaskStore").finish_non_exhaustive()
    }
}

impl PostgresTaskStore {
    /// Connects with a libpq-style configuration (`host=... port=...
    /// user=... dbname=...` or a `postgresql://` URL) and creates the
    /// table when missing.
    pub async fn connect(config: &str) -> Result<Self, StoreError> {
        let (mut client, connection) = tokio_postgres::connect(config, NoTls).await.map_err(db)?;
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::warn!(%error, "the Postgres task store's connection ended");
            }
        });
        let tx = client.transaction().await.map_err(db)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
            .await
            .map_err(db)?;
        tx.batch_execute(SCHEMA).await.map_err(db)?;
        tx.commit().await.map_err(db)?;
        Ok(Self {
            client: Mutex::new(client),
        })
    }
}

#[async_trait::async_trait]
impl TaskStore for PostgresTaskStore {
    async fn put(&self, owner: &str, task: &Task) -> Result<(), StoreError> {
        let json = serde_json::to_string(task)?;
        self.client
            .lock()
            .await
            .execute(
                "INSERT INTO oscova_a2a_tasks (owner, id, context_id, state, task)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (owner, id) DO UPDATE SET state = EXCLUDED.state, task = EXCLUDED.task",
                &[&owner, &task.id, &task.context_id, &task.status.state.as_str(), &json],
            )
            .await
            .map_err(db)?;
        Ok(())
    }

    async fn get(&self, owner: &str, id: &str) -> Result<Option<Task>, StoreError> {
        let row = self
            .client
            .lock()
            .await
            .query_opt(
                "SELECT task FROM oscova_a2a_tasks WHERE owner = $1 AND id = $2",
                &[&owner, &id],
            )
            .await
            .map_err(db)?;
        match row {
            Some(row) => {
                let json: String = row.try_get(0).map_err(db)?;
                Ok(Some(serde_json::from_str(&json)?))
            }
            None => Ok(None),
        }
    }

    async fn list(&self, owner: &str, query: &TaskQuery) -> Result<TaskPage, StoreError> {
        let rows = self
            .client
            .lock()
            .await
            .query(
                "SELECT task FROM oscova_a2a_tasks WHERE owner = $1 ORDER BY seq DESC",
                &[&owner],
            )
            .await
            .map_err(db)?;
        let mut all = Vec::new();
        for row in rows {
            let json: String = row.try_get(0).map_err(db)?;
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
        let mut client = self.client.lock().await;
        let tx = client.transaction().await.map_err(db)?;
        let rows = tx
            .query(
                "SELECT seq, task FROM oscova_a2a_tasks WHERE state IN ($1, $2) FOR UPDATE",
                &[&TaskState::Submitted.as_str(), &TaskState::Working.as_str()],
            )
            .await
            .map_err(db)?;
        for row in &rows {
            let seq: i64 = row.try_get(0).map_err(db)?;
            let json: String = row.try_get(1).map_err(db)?;
            let task = failed(serde_json::from_str(&json)?, reason);
            tx.execute(
                "UPDATE oscova_a2a_tasks SET state = $1, task = $2 WHERE seq = $3",
                &[
                    &task.status.state.as_str(),
                    &serde_json::to_string(&task)?,
                    &seq,
                ],
            )
            .await
            .map_err(db)?;
        }
        tx.commit().await.map_err(db)?;
        Ok(rows.len())
    }
}
