//! [`PostgresTaskStore`]: tasks in Postgres, for several processes or
//! machines serving the same users (the sessions' database is a good
//! place).
//!
//! Rules: as [the store's](crate::store). A task is one row (user, id,
//! context, state, the whole task as JSON), written in one statement, so
//! any instance reads whole tasks another wrote; listing is by the row's
//! sequence, newest first. The schema is created under an advisory lock,
//! so instances starting together do not race. A fleet turns
//! [`fail_unfinished_at_start`](crate::A2aServer::fail_unfinished_at_start)
//! off: another instance may be running the unfinished tasks. A task's
//! webhooks are rows of `oscova_a2a_push_configs` (the config as JSON,
//! its secrets included: the database is as private as the sessions in
//! it); an owed push is a row of `oscova_a2a_push_owed`, written in the
//! transaction that writes the final state (which drops the task's wait,
//! a row of `oscova_a2a_waits` written with its `INPUT_REQUIRED` state and
//! taken by one `DELETE … RETURNING`), claimed with `FOR UPDATE SKIP
//! LOCKED` so two sweeps never take one row. A webhook is counted
//! against its bounds and inserted in one transaction under an advisory
//! lock of its user, so instances adding at once cannot pass them. The
//! stream events of a run
//! (the model's text as it comes, each state) are relayed to the other
//! instances with `NOTIFY` (`postgres_relay.rs`), so a subscriber on any
//! instance gets the chunks, not only the states. The tables' `owner`
//! column holds the user id: its name is the first schema's, kept so
//! databases written by earlier versions open unchanged.

use tokio::sync::Mutex;
use tokio_postgres::{Client, GenericClient, NoTls};

use std::time::Duration;

use serde_json::Value;

use super::{
    ExpiredWait, PushLimits, PushWrite, Relayed, StoreError, TaskPage, TaskQuery, TaskStore,
    TaskWait, failed, matches, now_millis, stale_before,
};
use crate::model::{PushConfig, Task, TaskState};
use crate::store::postgres_relay::Relay;

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS oscova_a2a_tasks (
    seq BIGSERIAL PRIMARY KEY,
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    task TEXT NOT NULL,
    UNIQUE (owner, id)
);
CREATE INDEX IF NOT EXISTS oscova_a2a_tasks_owner ON oscova_a2a_tasks (owner, seq);
CREATE TABLE IF NOT EXISTS oscova_a2a_push_configs (
    seq BIGSERIAL PRIMARY KEY,
    owner TEXT NOT NULL,
    task_id TEXT NOT NULL,
    id TEXT NOT NULL,
    config TEXT NOT NULL,
    UNIQUE (owner, task_id, id)
);
CREATE TABLE IF NOT EXISTS oscova_a2a_push_owed (
    owner TEXT NOT NULL,
    task_id TEXT NOT NULL,
    claimed_at BIGINT NOT NULL,
    claims INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (owner, task_id)
);
CREATE TABLE IF NOT EXISTS oscova_a2a_waits (
    owner TEXT NOT NULL,
    task_id TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    wait TEXT NOT NULL,
    PRIMARY KEY (owner, task_id)
);";

/// Marks the push of ($1, $2) owed, claimed at $3, when it has a webhook.
const OWE: &str = "INSERT INTO oscova_a2a_push_owed (owner, task_id, claimed_at, claims)
    SELECT $1, $2, $3, 0 WHERE EXISTS
        (SELECT 1 FROM oscova_a2a_push_configs WHERE owner = $1 AND task_id = $2)
    ON CONFLICT (owner, task_id) DO UPDATE SET claimed_at = EXCLUDED.claimed_at, claims = 0";

/// [`OWE`], and the task's wait dropped, in one statement.
const OWE_AND_UNWAIT: &str = "WITH unwait AS
        (DELETE FROM oscova_a2a_waits WHERE owner = $1 AND task_id = $2)
    INSERT INTO oscova_a2a_push_owed (owner, task_id, claimed_at, claims)
    SELECT $1, $2, $3, 0 WHERE EXISTS
        (SELECT 1 FROM oscova_a2a_push_configs WHERE owner = $1 AND task_id = $2)
    ON CONFLICT (owner, task_id) DO UPDATE SET claimed_at = EXCLUDED.claimed_at, claims = 0";

/// A task's write. A task stored in a final state (`TaskState::TERMINAL`,
/// bound as $6 by [`upsert`]) keeps it: a run's later write, on this
/// instance or another, never replaces a cancel another instance stored
/// meanwhile.
const UPSERT: &str = "INSERT INTO oscova_a2a_tasks (owner, id, context_id, state, task)
    VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (owner, id) DO UPDATE SET state = EXCLUDED.state, task = EXCLUDED.task
    WHERE NOT (oscova_a2a_tasks.state = ANY($6))";

/// Writes `user`'s `task`, `json` its serialization, through [`UPSERT`]
/// on `client` (the connection, or a transaction on it).
async fn upsert(
    client: &impl GenericClient,
    user: &str,
    task: &Task,
    json: &str,
) -> Result<(), StoreError> {
    let ended: Vec<&str> = TaskState::TERMINAL.iter().map(|s| s.as_str()).collect();
    client
        .execute(
            UPSERT,
            &[
                &user,
                &task.id,
                &task.context_id,
                &task.status.state.as_str(),
                &json,
                &ended,
            ],
        )
        .await
        .map_err(db)?;
    Ok(())
}

/// The advisory lock the schema is created under.
const SCHEMA_LOCK: i64 = 0x05c0_7a2a;

/// The class of the advisory locks a webhook's user is locked under
/// while one is added (the other key is the user's `hashtext`).
const PUSH_LOCK: i32 = 0x05c0_7a2b;

/// How many webhooks the task ($1, $2) has, and whether $3 is one of them.
const ON_TASK: &str = "SELECT COUNT(*), COUNT(*) FILTER (WHERE id = $3)
    FROM oscova_a2a_push_configs WHERE owner = $1 AND task_id = $2";

/// How many webhooks $1 has on tasks not stored in a terminal state ($2).
const LIVE: &str = "SELECT COUNT(*) FROM oscova_a2a_push_configs c
    LEFT JOIN oscova_a2a_tasks t ON t.owner = c.owner AND t.id = c.task_id
    WHERE c.owner = $1 AND (t.state IS NULL OR NOT (t.state = ANY($2)))";

fn db(error: impl std::fmt::Display) -> StoreError {
    StoreError::Database(error.to_string())
}

/// Tasks in Postgres: one row per task, written whole, read by user, for
/// several processes or machines on one database; a run's stream events
/// relayed to the other instances (`postgres_relay.rs`).
pub struct PostgresTaskStore {
    client: Mutex<Client>,
    /// For the relay's own connection, opened when first used (again
    /// when it was lost).
    config: String,
    relay: Mutex<Option<std::sync::Arc<Relay>>>,
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
            config: config.to_owned(),
            relay: Mutex::new(None),
        })
    }

    async fn relay(&self) -> Result<std::sync::Arc<Relay>, StoreError> {
        let mut slot = self.relay.lock().await;
        if let Some(relay) = slot.as_ref().filter(|r| !r.is_closed()) {
            return Ok(relay.clone());
        }
        let relay = std::sync::Arc::new(Relay::connect(&self.config).await?);
        *slot = Some(relay.clone());
        Ok(relay)
    }
}

#[async_trait::async_trait]
impl TaskStore for PostgresTaskStore {
    fn relays(&self) -> bool {
        true
    }

    async fn publish(&self, user: &str, task: &str, event: &Value) -> Result<(), StoreError> {
        self.relay().await?.publish(user, task, event).await
    }

    async fn listen(&self, task: &str) -> Result<Option<Relayed>, StoreError> {
        Ok(Some(self.relay().await?.listen(task).await?))
    }

    async fn put(&self, user: &str, task: &Task) -> Result<(), StoreError> {
        let json = serde_json::to_string(task)?;
        upsert(&*self.client.lock().await, user, task, &json).await
    }

    async fn put_final(&self, user: &str, task: &Task) -> Result<(), StoreError> {
        let json = serde_json::to_string(task)?;
        let mut client = self.client.lock().await;
        let tx = client.transaction().await.map_err(db)?;
        upsert(&tx, user, task, &json).await?;
        // The wait is dropped in the statement that owes the push: a final
        // state costs no more round trips than before waits were kept.
        tx.execute(OWE_AND_UNWAIT, &[&user, &task.id, &now_millis()])
            .await
            .map_err(db)?;
        tx.commit().await.map_err(db)
    }

    async fn put_waiting(
        &self,
        user: &str,
        task: &Task,
        wait: &TaskWait,
    ) -> Result<(), StoreError> {
        let json = serde_json::to_string(task)?;
        let kept = serde_json::to_string(wait)?;
        let mut client = self.client.lock().await;
        let tx = client.transaction().await.map_err(db)?;
        upsert(&tx, user, task, &json).await?;
        tx.execute(
            "INSERT INTO oscova_a2a_waits (owner, task_id, expires_at, wait) VALUES ($1, $2, $3, $4)
             ON CONFLICT (owner, task_id) DO UPDATE
             SET expires_at = EXCLUDED.expires_at, wait = EXCLUDED.wait",
            &[&user, &task.id, &wait.expires_at, &kept],
        )
        .await
        .map_err(db)?;
        tx.commit().await.map_err(db)
    }

    async fn take_wait(&self, user: &str, id: &str) -> Result<Option<TaskWait>, StoreError> {
        // One statement: of two instances deleting at once, one gets the
        // row back.
        let row = self
            .client
            .lock()
            .await
            .query_opt(
                "DELETE FROM oscova_a2a_waits WHERE owner = $1 AND task_id = $2 RETURNING wait",
                &[&user, &id],
            )
            .await
            .map_err(db)?;
        let json: Option<String> = row.map(|r| r.get(0));
        Ok(json.map(|j| serde_json::from_str(&j)).transpose()?)
    }

    async fn take_expired_waits(&self, now: i64) -> Result<Vec<ExpiredWait>, StoreError> {
        let rows = self
            .client
            .lock()
            .await
            .query(
                "DELETE FROM oscova_a2a_waits WHERE expires_at <= $1 RETURNING owner, task_id, wait",
                &[&now],
            )
            .await
            .map_err(db)?;
        rows.into_iter()
            .map(|row| {
                let json: String = row.get(2);
                Ok((row.get(0), row.get(1), serde_json::from_str(&json)?))
            })
            .collect()
    }

    async fn put_push_config(
        &self,
        user: &str,
        config: &PushConfig,
        limits: PushLimits,
    ) -> Result<PushWrite, StoreError> {
        let json = serde_json::to_string(config)?;
        let mut client = self.client.lock().await;
        let tx = client.transaction().await.map_err(db)?;
        tx.execute(
            "SELECT pg_advisory_xact_lock($1, hashtext($2))",
            &[&PUSH_LOCK, &user],
        )
        .await
        .map_err(db)?;
        let row = tx
            .query_one(ON_TASK, &[&user, &config.task_id, &config.id])
            .await
            .map_err(db)?;
        let (on_task, replaces): (i64, i64) =
            (row.try_get(0).map_err(db)?, row.try_get(1).map_err(db)?);
        let ended: Vec<&str> = TaskState::TERMINAL.iter().map(|s| s.as_str()).collect();
        let live: i64 = tx
            .query_one(LIVE, &[&user, &ended])
            .await
            .map_err(db)?
            .try_get(0)
            .map_err(db)?;
        let count = |n: i64| usize::try_from(n).unwrap_or(usize::MAX);
        let decided = PushWrite::decide(limits, replaces > 0, count(on_task), count(live));
        if decided == PushWrite::Written {
            tx.execute(
                "INSERT INTO oscova_a2a_push_configs (owner, task_id, id, config) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (owner, task_id, id) DO UPDATE SET config = EXCLUDED.config",
                &[&user, &config.task_id, &config.id, &json],
            )
            .await
            .map_err(db)?;
        }
        tx.commit().await.map_err(db)?;
        Ok(decided)
    }

    async fn push_configs(&self, user: &str, task: &str) -> Result<Vec<PushConfig>, StoreError> {
        let rows = self
            .client
            .lock()
            .await
            .query(
                "SELECT config FROM oscova_a2a_push_configs WHERE owner = $1 AND task_id = $2 ORDER BY seq",
                &[&user, &task],
            )
            .await
            .map_err(db)?;
        rows.iter()
            .map(|row| {
                let json: String = row.try_get(0).map_err(db)?;
                Ok(serde_json::from_str(&json)?)
            })
            .collect()
    }

    async fn delete_push_config(
        &self,
        user: &str,
        task: &str,
        id: &str,
    ) -> Result<bool, StoreError> {
        let gone = self
            .client
            .lock()
            .await
            .execute(
                "DELETE FROM oscova_a2a_push_configs WHERE owner = $1 AND task_id = $2 AND id = $3",
                &[&user, &task, &id],
            )
            .await
            .map_err(db)?;
        Ok(gone > 0)
    }

    async fn push_delivered(&self, user: &str, task: &str) -> Result<(), StoreError> {
        self.client
            .lock()
            .await
            .execute(
                "DELETE FROM oscova_a2a_push_owed WHERE owner = $1 AND task_id = $2",
                &[&user, &task],
            )
            .await
            .map_err(db)?;
        Ok(())
    }

    async fn claim_owed_pushes(
        &self,
        stale: Duration,
        max_claims: u32,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let max = i32::try_from(max_claims).unwrap_or(i32::MAX);
        let mut client = self.client.lock().await;
        let tx = client.transaction().await.map_err(db)?;
        let rows = tx
            .query(
                "SELECT owner, task_id, claims FROM oscova_a2a_push_owed
                 WHERE claimed_at <= $1 FOR UPDATE SKIP LOCKED",
                &[&stale_before(stale)],
            )
            .await
            .map_err(db)?;
        let mut claimed = Vec::new();
        for row in &rows {
            let user: String = row.try_get(0).map_err(db)?;
            let task: String = row.try_get(1).map_err(db)?;
            let claims: i32 = row.try_get(2).map_err(db)?;
            if claims >= max {
                tracing::warn!(%task, "an owed push was given up after {max_claims} sweeps");
                tx.execute(
                    "DELETE FROM oscova_a2a_push_owed WHERE owner = $1 AND task_id = $2",
                    &[&user, &task],
                )
                .await
                .map_err(db)?;
                continue;
            }
            tx.execute(
                "UPDATE oscova_a2a_push_owed SET claimed_at = $3, claims = claims + 1
                 WHERE owner = $1 AND task_id = $2",
                &[&user, &task, &now_millis()],
            )
            .await
            .map_err(db)?;
            claimed.push((user, task));
        }
        tx.commit().await.map_err(db)?;
        Ok(claimed)
    }

    async fn get(&self, user: &str, id: &str) -> Result<Option<Task>, StoreError> {
        let row = self
            .client
            .lock()
            .await
            .query_opt(
                "SELECT task FROM oscova_a2a_tasks WHERE owner = $1 AND id = $2",
                &[&user, &id],
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

    async fn list(&self, user: &str, query: &TaskQuery) -> Result<TaskPage, StoreError> {
        let rows = self
            .client
            .lock()
            .await
            .query(
                "SELECT task FROM oscova_a2a_tasks WHERE owner = $1 ORDER BY seq DESC",
                &[&user],
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
                "SELECT seq, owner, task FROM oscova_a2a_tasks WHERE state IN ($1, $2) FOR UPDATE",
                &[&TaskState::Submitted.as_str(), &TaskState::Working.as_str()],
            )
            .await
            .map_err(db)?;
        for row in &rows {
            let seq: i64 = row.try_get(0).map_err(db)?;
            let user: String = row.try_get(1).map_err(db)?;
            let json: String = row.try_get(2).map_err(db)?;
            let task = failed(serde_json::from_str(&json)?, reason);
            tx.execute(OWE, &[&user, &task.id, &now_millis()])
                .await
                .map_err(db)?;
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
