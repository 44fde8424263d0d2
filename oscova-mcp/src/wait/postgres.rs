//! [`PostgresWaitStore`]: waiting calls in Postgres, for several server
//! processes or machines on one database (the sessions' is a good place).
//!
//! Rules: as [the store's](super). A wait is one row (handle, user, tool,
//! whether its body started, its expiry, the rest as JSON), inserted with
//! its user's excess and the long-expired waits removed in one
//! transaction. The schema is created under an advisory lock, so
//! instances starting together do not race. A take is one `DELETE ...
//! RETURNING`: of two instances taking one handle, the second waits for
//! the first's row lock, then finds no row. A connection the server
//! closed (a restart, a failover) is opened again by the next use.

use tokio::sync::{Mutex, MutexGuard};
use tokio_postgres::{Client, NoTls};

use super::{Body, KeptWait, WaitStore, WaitStoreError, db, dropped_before};

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS oscova_mcp_waits (
    seq BIGSERIAL PRIMARY KEY,
    handle TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    started BOOLEAN NOT NULL,
    expires_at BIGINT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS oscova_mcp_waits_user ON oscova_mcp_waits (user_id, seq);
CREATE INDEX IF NOT EXISTS oscova_mcp_waits_expiry ON oscova_mcp_waits (expires_at);";

/// The advisory lock the schema is created under.
const SCHEMA_LOCK: i64 = 0x05c0_3c90;

/// The user $1's waits but the newest $2.
const EXCESS: &str = "DELETE FROM oscova_mcp_waits WHERE user_id = $1 AND seq NOT IN
    (SELECT seq FROM oscova_mcp_waits WHERE user_id = $1 ORDER BY seq DESC LIMIT $2)";

const TAKE: &str = "DELETE FROM oscova_mcp_waits WHERE handle = $1 AND user_id = $2 AND tool = $3
    RETURNING started, expires_at, body";

/// Waiting calls in Postgres, taken once across the instances that share
/// the database.
pub struct PostgresWaitStore {
    client: Mutex<Client>,
    /// To connect again when the connection was lost.
    config: String,
}

impl std::fmt::Debug for PostgresWaitStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresWaitStore").finish_non_exhaustive()
    }
}

impl PostgresWaitStore {
    /// Connects with a libpq-style configuration (`host=... port=...
    /// user=... dbname=...` or a `postgresql://` URL) and creates the
    /// tables (the waits' and the tasks', [`crate::task`]) when missing.
    pub async fn connect(config: &str) -> Result<Self, WaitStoreError> {
        let mut client = open(config).await?;
        let tx = client.transaction().await.map_err(db)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
            .await
            .map_err(db)?;
        tx.batch_execute(SCHEMA).await.map_err(db)?;
        tx.batch_execute(crate::task::postgres::SCHEMA)
            .await
            .map_err(db)?;
        tx.commit().await.map_err(db)?;
        Ok(Self {
            client: Mutex::new(client),
            config: config.to_owned(),
        })
    }

    /// The configuration it connects with.
    pub(crate) fn config(&self) -> &str {
        &self.config
    }

    /// The connection, opened again if the server closed it.
    pub(crate) async fn client(&self) -> Result<MutexGuard<'_, Client>, WaitStoreError> {
        let mut client = self.client.lock().await;
        if client.is_closed() {
            *client = open(&self.config).await?;
        }
        Ok(client)
    }
}

/// A connection, its driver spawned.
pub(crate) async fn open(config: &str) -> Result<Client, WaitStoreError> {
    let (client, connection) = tokio_postgres::connect(config, NoTls).await.map_err(db)?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::warn!(%error, "the Postgres wait store's connection ended");
        }
    });
    Ok(client)
}

/// Inserts `wait` (its `body` apart) and drops the user's excess past
/// `keep` and the long-expired waits, in one transaction.
async fn insert(
    client: &mut Client,
    wait: &KeptWait,
    body: &str,
    keep: i64,
) -> Result<(), tokio_postgres::Error> {
    let tx = client.transaction().await?;
    tx.execute(
        "INSERT INTO oscova_mcp_waits (handle, user_id, tool, started, expires_at, body)
         VALUES ($1, $2, $3, $4, $5, $6)",
        &[
            &wait.handle,
            &wait.user,
            &wait.tool,
            &wait.started,
            &wait.expires_at,
            &body,
        ],
    )
    .await?;
    tx.execute(EXCESS, &[&wait.user, &keep]).await?;
    tx.execute(
        "DELETE FROM oscova_mcp_waits WHERE expires_at < $1",
        &[&dropped_before()],
    )
    .await?;
    tx.commit().await
}

#[async_trait::async_trait]
impl WaitStore for PostgresWaitStore {
    async fn put(&self, wait: &KeptWait, per_user: usize) -> Result<(), WaitStoreError> {
        let body = Body::of(wait)?;
        let keep = i64::try_from(per_user).unwrap_or(i64::MAX);
        let mut client = self.client().await?;
        match insert(&mut client, wait, &body, keep).await {
            // The server closed the connection under the write: once more
            // on a new one (nothing was kept, or the insert is refused as
            // a handle kept already).
            Err(error) if error.is_closed() => {
                *client = open(&self.config).await?;
                insert(&mut client, wait, &body, keep).await.map_err(db)
            }
            other => other.map_err(db),
        }
    }

    async fn take(
        &self,
        handle: &str,
        user: &str,
        tool: &str,
    ) -> Result<Option<KeptWait>, WaitStoreError> {
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] = [&handle, &user, &tool];
        let mut client = self.client().await?;
        let row = match client.query_opt(TAKE, &params).await {
            // Once more on a new connection: a take the closed one
            // committed is not seen twice (the row is gone), so the worst
            // is a refusal, never a second taker.
            Err(error) if error.is_closed() => {
                *client = open(&self.config).await?;
                client.query_opt(TAKE, &params).await
            }
            other => other,
        }
        .map_err(db)?;
        drop(client);
        let Some(row) = row else {
            return Ok(None);
        };
        let started: bool = row.try_get(0).map_err(db)?;
        let expires_at: i64 = row.try_get(1).map_err(db)?;
        let body: String = row.try_get(2).map_err(db)?;
        Body::wait(&body, (handle, user, tool), started, expires_at).map(Some)
    }
}
