//! The token store's rows in the sessions' SQLite file.
//!
//! Rules: the file is opened through oscova-agent's `SqliteFile` (one
//! writer per file per process, WAL, synced before a write returns; a
//! missing one created 0600 in a 0700 folder, one that its group or
//! others can open refused), on first use, and the two tables created
//! then. A lease is taken in one write transaction, which SQLite's write
//! lock makes atomic across the processes on the file; its time is this
//! machine's clock (one file is one machine's).

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use oscova_agent::session::store::SqliteFile;
use rusqlite::OptionalExtension;

use super::{Row, TokenStoreError};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS oscova_mcp_oauth_grants (
    server TEXT NOT NULL,
    user_id TEXT NOT NULL,
    url TEXT NOT NULL,
    sealed BLOB NOT NULL,
    updated_ms INTEGER NOT NULL,
    PRIMARY KEY (server, user_id)
);
CREATE TABLE IF NOT EXISTS oscova_mcp_oauth_refresh (
    server TEXT NOT NULL,
    user_id TEXT NOT NULL,
    holder TEXT NOT NULL,
    until_ms INTEGER NOT NULL,
    PRIMARY KEY (server, user_id)
);
CREATE TABLE IF NOT EXISTS oscova_mcp_oauth_pending (
    state TEXT PRIMARY KEY,
    server TEXT NOT NULL,
    user_id TEXT NOT NULL,
    sealed BLOB NOT NULL,
    until_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS oscova_mcp_oauth_pending_by_user
    ON oscova_mcp_oauth_pending (server, user_id);";

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}

/// The rows in one SQLite file.
pub(super) struct Sqlite {
    path: PathBuf,
    file: tokio::sync::OnceCell<SqliteFile>,
}

impl Sqlite {
    pub(super) fn new(path: PathBuf) -> Self {
        Self {
            path,
            file: tokio::sync::OnceCell::new(),
        }
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    async fn file(&self) -> Result<&SqliteFile, TokenStoreError> {
        self.file
            .get_or_try_init(|| async {
                let file = SqliteFile::open(self.path.clone()).await?;
                file.write(|conn| {
                    conn.execute_batch(SCHEMA)?;
                    Ok::<_, TokenStoreError>(())
                })
                .await?;
                Ok::<_, TokenStoreError>(file)
            })
            .await
    }

    pub(super) async fn load(
        &self,
        server: &str,
        user: &str,
    ) -> Result<Option<Row>, TokenStoreError> {
        let (server, user) = (server.to_owned(), user.to_owned());
        self.file()
            .await?
            .read(move |conn| {
                conn.query_row(
                    "SELECT url, sealed FROM oscova_mcp_oauth_grants WHERE server = ?1 AND user_id = ?2",
                    (&server, &user),
                    |row| Ok(Row { url: row.get(0)?, sealed: row.get(1)? }),
                )
                .optional()
                .map_err(TokenStoreError::from)
            })
            .await
    }

    pub(super) async fn save(
        &self,
        server: &str,
        user: &str,
        row: Row,
    ) -> Result<(), TokenStoreError> {
        let (server, user) = (server.to_owned(), user.to_owned());
        self.file()
            .await?
            .write(move |conn| {
                conn.execute(
                    "INSERT INTO oscova_mcp_oauth_grants (server, user_id, url, sealed, updated_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT (server, user_id) DO UPDATE SET
                         url = excluded.url, sealed = excluded.sealed, updated_ms = excluded.updated_ms",
                    (&server, &user, &row.url, &row.sealed, now_ms()),
                )?;
                Ok::<_, TokenStoreError>(())
            })
            .await
    }

    pub(super) async fn remove(&self, server: &str, user: &str) -> Result<bool, TokenStoreError> {
        let (server, user) = (server.to_owned(), user.to_owned());
        self.file()
            .await?
            .write(move |conn| {
                let gone = conn.execute(
                    "DELETE FROM oscova_mcp_oauth_grants WHERE server = ?1 AND user_id = ?2",
                    (&server, &user),
                )?;
                Ok::<_, TokenStoreError>(gone > 0)
            })
            .await
    }

    /// Takes the lease for `holder` until `term_ms` from now, unless
    /// another holder's has not ended; whether it was taken.
    pub(super) async fn take(
        &self,
        server: &str,
        user: &str,
        holder: &str,
        term_ms: i64,
    ) -> Result<bool, TokenStoreError> {
        let (server, user, holder) = (server.to_owned(), user.to_owned(), holder.to_owned());
        self.file()
            .await?
            .write(move |conn| {
                let now = now_ms();
                let held: Option<i64> = conn
                    .query_row(
                        "SELECT until_ms FROM oscova_mcp_oauth_refresh WHERE server = ?1 AND user_id = ?2",
                        (&server, &user),
                        |row| row.get(0),
                    )
                    .optional()?;
                if held.is_some_and(|until| until > now) {
                    return Ok::<_, TokenStoreError>(false);
                }
                conn.execute(
                    "INSERT INTO oscova_mcp_oauth_refresh (server, user_id, holder, until_ms)
                     VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (server, user_id) DO UPDATE SET
                         holder = excluded.holder, until_ms = excluded.until_ms",
                    (&server, &user, &holder, now.saturating_add(term_ms)),
                )?;
                Ok(true)
            })
            .await
    }

    /// Lets go of `holder`'s lease (another's is left alone).
    pub(super) async fn release(
        &self,
        server: &str,
        user: &str,
        holder: &str,
    ) -> Result<(), TokenStoreError> {
        let (server, user, holder) = (server.to_owned(), user.to_owned(), holder.to_owned());
        self.file()
            .await?
            .write(move |conn| {
                conn.execute(
                    "DELETE FROM oscova_mcp_oauth_refresh WHERE server = ?1 AND user_id = ?2 AND holder = ?3",
                    (&server, &user, &holder),
                )?;
                Ok::<_, TokenStoreError>(())
            })
            .await
    }

    /// Keeps a login under way by its `state` until `term_ms` from now,
    /// dropping those whose term is over.
    pub(super) async fn put_pending(
        &self,
        state: &str,
        (server, user): (&str, &str),
        sealed: Vec<u8>,
        term_ms: i64,
    ) -> Result<(), TokenStoreError> {
        let (state, server, user) = (state.to_owned(), server.to_owned(), user.to_owned());
        self.file()
            .await?
            .write(move |conn| {
                let now = now_ms();
                conn.execute(
                    "DELETE FROM oscova_mcp_oauth_pending WHERE until_ms <= ?1",
                    [now],
                )?;
                conn.execute(
                    "INSERT INTO oscova_mcp_oauth_pending (state, server, user_id, sealed, until_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    (&state, &server, &user, &sealed, now.saturating_add(term_ms)),
                )?;
                Ok::<_, TokenStoreError>(())
            })
            .await
    }

    /// The (server, user)'s login under way with the most of its term
    /// left, if at least `left_ms` is: its state and sealed row.
    pub(super) async fn live_pending(
        &self,
        server: &str,
        user: &str,
        left_ms: i64,
    ) -> Result<Option<(String, Vec<u8>)>, TokenStoreError> {
        let (server, user) = (server.to_owned(), user.to_owned());
        self.file()
            .await?
            .read(move |conn| {
                conn.query_row(
                    "SELECT state, sealed FROM oscova_mcp_oauth_pending
                     WHERE server = ?1 AND user_id = ?2 AND until_ms > ?3
                     ORDER BY until_ms DESC LIMIT 1",
                    (&server, &user, now_ms().saturating_add(left_ms)),
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()
                .map_err(TokenStoreError::from)
            })
            .await
    }

    /// The login under way by `state`, left in place: its sealed row and
    /// whether its term is still running; `None` when there is none.
    pub(super) async fn peek_pending(
        &self,
        state: &str,
    ) -> Result<Option<(Vec<u8>, bool)>, TokenStoreError> {
        let state = state.to_owned();
        self.file()
            .await?
            .read(move |conn| {
                let row: Option<(Vec<u8>, i64)> = conn
                    .query_row(
                        "SELECT sealed, until_ms FROM oscova_mcp_oauth_pending WHERE state = ?1",
                        [&state],
                        |row| Ok((row.get(0)?, row.get(1)?)),
                    )
                    .optional()?;
                Ok::<_, TokenStoreError>(row.map(|(sealed, until)| (sealed, until > now_ms())))
            })
            .await
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
        let state = state.to_owned();
        self.file()
            .await?
            .write(move |conn| {
                let changed = conn.execute(
                    "UPDATE oscova_mcp_oauth_pending SET sealed = ?3
                     WHERE state = ?1 AND sealed = ?2 AND until_ms > ?4",
                    (&state, &was, &sealed, now_ms()),
                )?;
                Ok::<_, TokenStoreError>(changed == 1)
            })
            .await
    }

    /// Takes (deletes, in one statement: one taker) the login under way by
    /// `state` while its row is still `was`; whether it was taken.
    pub(super) async fn take_pending(
        &self,
        state: &str,
        was: Vec<u8>,
    ) -> Result<bool, TokenStoreError> {
        let state = state.to_owned();
        self.file()
            .await?
            .write(move |conn| {
                let taken = conn.execute(
                    "DELETE FROM oscova_mcp_oauth_pending WHERE state = ?1 AND sealed = ?2",
                    (&state, &was),
                )?;
                Ok::<_, TokenStoreError>(taken == 1)
            })
            .await
    }
}
