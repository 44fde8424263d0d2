//! [`SqliteWaitStore`]: waiting calls in SQLite, in the sessions' database
//! file (a table of its own) or any other file.
//!
//! Rules: as [the store's](super). A wait is one row (handle, user, tool,
//! whether its body started, its expiry, the rest as JSON), written with
//! its user's excess and the long-expired waits removed in the same write.
//! The file is an [`SqliteFile`]: WAL with `synchronous=FULL`, one writer
//! per file per process with group commit, shared with the session store
//! when the waits live in the sessions' file, so a `put` that returned is
//! in a synced commit. A take is one `DELETE ... RETURNING` on the writer,
//! whose transaction is `BEGIN IMMEDIATE`: of two processes taking one
//! handle, one gets the row and the other nothing.

use std::path::{Path, PathBuf};

use oscova_agent::session::store::{SqliteFile, SqliteFileError};
use rusqlite::{OptionalExtension, params};

use super::{Body, KeptWait, WaitStore, WaitStoreError, db, dropped_before};

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS mcp_waits (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    handle TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    started INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS mcp_waits_user ON mcp_waits (user_id, seq);
CREATE INDEX IF NOT EXISTS mcp_waits_expiry ON mcp_waits (expires_at);";

/// The user ?1's waits but the newest ?2.
const EXCESS: &str = "DELETE FROM mcp_waits WHERE user_id = ?1 AND seq NOT IN
    (SELECT seq FROM mcp_waits WHERE user_id = ?1 ORDER BY seq DESC LIMIT ?2)";

const TAKE: &str = "DELETE FROM mcp_waits WHERE handle = ?1 AND user_id = ?2 AND tool = ?3
    RETURNING started, expires_at, body";

/// Waiting calls in a SQLite file, taken once across the processes that
/// share it.
#[derive(Debug, Clone)]
pub struct SqliteWaitStore {
    pub(crate) file: SqliteFile,
}

impl From<SqliteFileError> for WaitStoreError {
    fn from(error: SqliteFileError) -> Self {
        db(error)
    }
}

impl SqliteWaitStore {
    /// Opens (or creates) the tables (the waits' and the tasks',
    /// [`crate::task`]) in the file at `path` (the sessions'
    /// database file is a good place: this process's session store there
    /// shares its writer).
    pub async fn open(path: impl Into<PathBuf>) -> Result<Self, WaitStoreError> {
        Self::on(SqliteFile::open(path).await?).await
    }

    /// Creates the tables (when missing) in `file`, an open file other
    /// stores may use too.
    pub async fn on(file: SqliteFile) -> Result<Self, WaitStoreError> {
        file.write(|conn| {
            conn.execute_batch(SCHEMA).map_err(db)?;
            conn.execute_batch(crate::task::sqlite::SCHEMA).map_err(db)
        })
        .await?;
        Ok(Self { file })
    }

    /// The file the store is in.
    pub fn path(&self) -> &Path {
        self.file.path()
    }
}

#[async_trait::async_trait]
impl WaitStore for SqliteWaitStore {
    async fn put(&self, wait: &KeptWait, per_user: usize) -> Result<(), WaitStoreError> {
        let body = Body::of(wait)?;
        let (handle, user, tool) = (wait.handle.clone(), wait.user.clone(), wait.tool.clone());
        let (started, expires_at) = (wait.started, wait.expires_at);
        let keep = i64::try_from(per_user).unwrap_or(i64::MAX);
        self.file
            .write(move |conn| {
                conn.execute(
                    "INSERT INTO mcp_waits (handle, user_id, tool, started, expires_at, body)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![handle, user, tool, started, expires_at, body],
                )
                .map_err(db)?;
                conn.execute(EXCESS, params![user, keep]).map_err(db)?;
                conn.execute(
                    "DELETE FROM mcp_waits WHERE expires_at < ?1",
                    params![dropped_before()],
                )
                .map_err(db)?;
                Ok(())
            })
            .await
    }

    async fn take(
        &self,
        handle: &str,
        user: &str,
        tool: &str,
    ) -> Result<Option<KeptWait>, WaitStoreError> {
        let (h, u, t) = (handle.to_owned(), user.to_owned(), tool.to_owned());
        let row: Option<(bool, i64, String)> = self
            .file
            .write(move |conn| {
                conn.query_row(TAKE, params![h, u, t], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                })
                .optional()
                .map_err(db)
            })
            .await?;
        row.map(|(started, expires_at, body)| {
            Body::wait(&body, (handle, user, tool), started, expires_at)
        })
        .transpose()
    }
}
