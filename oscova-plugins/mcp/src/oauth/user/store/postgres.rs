//! The token store's rows in the sessions' Postgres database, for several
//! processes or machines serving one fleet.
//!
//! Rules: the same two tables as SQLite's (`sealed` a `BYTEA`), created
//! on first use under an advisory lock, so instances starting together do
//! not race. One connection per store (no TLS, as the session store:
//! loopback or a private network), its calls taking turns; one the server
//! closed (a restart, a failover) is opened again by the next call. A
//! lease is taken by one `INSERT ... ON CONFLICT DO UPDATE ... WHERE` the
//! lease has ended: Postgres locks the row, so of two instances taking it
//! at once the second sees the first's lease and gets nothing. Lease
//! times are the database's clock, never an instance's, so instances
//! whose clocks disagree still agree on when a lease ends.

use tokio::sync::{Mutex, MutexGuard};
use tokio_postgres::{Client, NoTls};

use super::{Row, TokenStoreError};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS oscova_mcp_oauth_grants (
    server TEXT NOT NULL,
    user_id TEXT NOT NULL,
    url TEXT NOT NULL,
    sealed BYTEA NOT NULL,
    updated_ms BIGINT NOT NULL,
    PRIMARY KEY (server, user_id)
);
CREATE TABLE IF NOT EXISTS oscova_mcp_oauth_refresh (
    server TEXT NOT NULL,
    user_id TEXT NOT NULL,
    holder TEXT NOT NULL,
    until_ms BIGINT NOT NULL,
    PRIMARY KEY (server, user_id)
);
CREATE TABLE IF NOT EXISTS oscova_mcp_oauth_pending (
    state TEXT PRIMARY KEY,
    server TEXT NOT NULL,
    user_id TEXT NOT NULL,
    sealed BYTEA NOT NULL,
    until_ms BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS oscova_mcp_oauth_pending_by_user
    ON oscova_mcp_oauth_pending (server, user_id);";

/// The advisory lock the schema is created under.
const SCHEMA_LOCK: i64 = 0x05c0_0a07;

/// The database's time in milliseconds.
const NOW_MS: &str = "(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT";

/// The first row's two columns, if there is a row.
fn first_two<A, B>(rows: &[tokio_postgres::Row]) -> Result<Option<(A, B)>, TokenStoreError>
where
    A: for<'a> tokio_postgres::types::FromSql<'a>,
    B: for<'a> tokio_postgres::types::FromSql<'a>,
{
    rows.first()
        .map(|row| {
            Ok((
                row.try_get(0).map_err(|e| db(&e))?,
                row.try_get(1).map_err(|e| db(&e))?,
            ))
        })
        .transpose()
}

fn db(error: &tokio_postgres::Error) -> TokenStoreError {
    use std::error::Error as _;
    // The server's message is the source; the error itself says "db error".
    let message = match error.source() {
        Some(source) => format!("{error}: {source}"),
        None => error.to_string(),
    };
    TokenStoreError::Database(message)
}

/// The rows in one Postgres database.
pub(super) struct Postgres {
    config: String,
    /// `None` until first used.
    client: Mutex<Option<Client>>,
}

impl Postgres {
    pub(super) fn new(config: String) -> Self {
        Self {
            config,
            client: Mutex::new(None),
        }
    }

    /// The connection, opened (and the schema made) when there is none or
    /// the server closed it.
    async fn client(&self) -> Result<MutexGuard<'_, Option<Client>>, TokenStoreError> {
        let mut client = self.client.lock().await;
        if client.as_ref().is_none_or(Client::is_closed) {
            *client = Some(open(&self.config).await?);
        }
        Ok(client)
    }

    /// Runs `statement` with `params` on the connection; the rows.
    async fn query(
        &self,
        statement: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<tokio_postgres::Row>, TokenStoreError> {
        let guard = self.client().await?;
        let client = guard
            .as_ref()
            .ok_or_else(|| TokenStoreError::Database("no connection".to_owned()))?;
        client.query(statement, params).await.map_err(|e| db(&e))
    }

    pub(super) async fn load(
        &self,
        server: &str,
        user: &str,
    ) -> Result<Option<Row>, TokenStoreError> {
        let rows = self
            .query(
                "SELECT url, sealed FROM oscova_mcp_oauth_grants WHERE server = $1 AND user_id = $2",
                &[&server, &user],
            )
            .await?;
        Ok(first_two(&rows)?.map(|(url, sealed)| Row { url, sealed }))
    }

    pub(super) async fn save(
        &self,
        server: &str,
        user: &str,
        row: Row,
    ) -> Result<(), TokenStoreError> {
        self.query(
            &format!(
                "INSERT INTO oscova_mcp_oauth_grants (server, user_id, url, sealed, updated_ms)
                 VALUES ($1, $2, $3, $4, {NOW_MS})
                 ON CONFLICT (server, user_id) DO UPDATE SET
                     url = excluded.url, sealed = excluded.sealed, updated_ms = excluded.updated_ms"
            ),
            &[&server, &user, &row.url, &row.sealed],
        )
        .await
        .map(drop)
    }

    pub(super) async fn remove(&self, server: &str, user: &str) -> Result<bool, TokenStoreError> {
        let gone = self
            .query(
                "DELETE FROM oscova_mcp_oauth_grants WHERE server = $1 AND user_id = $2 RETURNING 1",
                &[&server, &user],
            )
            .await?;
        Ok(!gone.is_empty())
    }

    /// Takes the lease for `holder` until `term_ms` from now (the
    /// database's clock), unless another holder's has not ended; whether
    /// it was taken.
    pub(super) async fn take(
        &self,
        server: &str,
        user: &str,
        holder: &str,
        term_ms: i64,
    ) -> Result<bool, TokenStoreError> {
        let taken = self
            .query(
                &format!(
                    "INSERT INTO oscova_mcp_oauth_refresh AS lease (server, user_id, holder, until_ms)
                     VALUES ($1, $2, $3, {NOW_MS} + $4)
                     ON CONFLICT (server, user_id) DO UPDATE SET
                         holder = excluded.holder, until_ms = excluded.until_ms
                     WHERE lease.until_ms <= {NOW_MS}
                     RETURNING holder"
                ),
                &[&server, &user, &holder, &term_ms],
            )
            .await?;
        Ok(!taken.is_empty())
    }

    /// Lets go of `holder`'s lease (another's is left alone).
    pub(super) async fn release(
        &self,
        server: &str,
        user: &str,
        holder: &str,
    ) -> Result<(), TokenStoreError> {
        self.query(
            "DELETE FROM oscova_mcp_oauth_refresh WHERE server = $1 AND user_id = $2 AND holder = $3",
            &[&server, &user, &holder],
        )
        .await
        .map(drop)
    }

    /// Keeps a login under way by its `state` until `term_ms` from now
    /// (the database's clock), dropping those whose term is over.
    pub(super) async fn put_pending(
        &self,
        state: &str,
        (server, user): (&str, &str),
        sealed: Vec<u8>,
        term_ms: i64,
    ) -> Result<(), TokenStoreError> {
        self.query(
            &format!("DELETE FROM oscova_mcp_oauth_pending WHERE until_ms <= {NOW_MS}"),
            &[],
        )
        .await?;
        self.query(
            &format!(
                "INSERT INTO oscova_mcp_oauth_pending (state, server, user_id, sealed, until_ms)
                 VALUES ($1, $2, $3, $4, {NOW_MS} + $5)"
            ),
            &[&state, &server, &user, &sealed, &term_ms],
        )
        .await
        .map(drop)
    }

    /// The (server, user)'s login under way with the most of its term
    /// left, if at least `left_ms` is: its state and sealed row.
    pub(super) async fn live_pending(
        &self,
        server: &str,
        user: &str,
        left_ms: i64,
    ) -> Result<Option<(String, Vec<u8>)>, TokenStoreError> {
        let rows = self
            .query(
                &format!(
                    "SELECT state, sealed FROM oscova_mcp_oauth_pending
                     WHERE server = $1 AND user_id = $2 AND until_ms > {NOW_MS} + $3
                     ORDER BY until_ms DESC LIMIT 1"
                ),
                &[&server, &user, &left_ms],
            )
            .await?;
        first_two(&rows)
    }

    /// The login under way by `state`, left in place: its sealed row and
    /// whether its term is still running (the database's clock).
    pub(super) async fn peek_pending(
        &self,
        state: &str,
    ) -> Result<Option<(Vec<u8>, bool)>, TokenStoreError> {
        let rows = self
            .query(
                &format!(
                    "SELECT sealed, until_ms > {NOW_MS} FROM oscova_mcp_oauth_pending WHERE state = $1"
                ),
                &[&state],
            )
            .await?;
        first_two(&rows)
    }

    /// Replaces the sealed row of the login under way by `state` with
    /// `sealed`, only while it is still `was` and its term runs; whether
    /// it was replaced.
    pub(super) async fn reseal_pending(
        &self,
        state: &str,
        was: Vec<u8>,
        sealed: Vec<u8>,
    ) -> Result<bool, TokenStoreError> {
        let rows = self
            .query(
                &format!(
                    "UPDATE oscova_mcp_oauth_pending SET sealed = $3
                     WHERE state = $1 AND sealed = $2 AND until_ms > {NOW_MS} RETURNING state"
                ),
                &[&state, &was, &sealed],
            )
            .await?;
        Ok(rows.len() == 1)
    }

    /// Takes (deletes, in one statement: one taker) the login under way by
    /// `state` while its row is still `was`; whether it was taken.
    pub(super) async fn take_pending(
        &self,
        state: &str,
        was: Vec<u8>,
    ) -> Result<bool, TokenStoreError> {
        let rows = self
            .query(
                "DELETE FROM oscova_mcp_oauth_pending WHERE state = $1 AND sealed = $2 RETURNING state",
                &[&state, &was],
            )
            .await?;
        Ok(rows.len() == 1)
    }
}

/// A connection, its driver spawned, the schema made.
async fn open(config: &str) -> Result<Client, TokenStoreError> {
    let (mut client, connection) = tokio_postgres::connect(config, NoTls)
        .await
        .map_err(|e| db(&e))?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::warn!(%error, "the Postgres token store's connection ended");
        }
    });
    let tx = client.transaction().await.map_err(|e| db(&e))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
        .await
        .map_err(|e| db(&e))?;
    tx.batch_execute(SCHEMA).await.map_err(|e| db(&e))?;
    tx.commit().await.map_err(|e| db(&e))?;
    Ok(client)
}
