//! The SQLite session store: the embedded default, one file per host.
//!
//! Rules: the module rules of `store`, across processes. The file is a
//! [`SqliteFile`]: WAL mode with `synchronous=FULL`, one writer thread per
//! file per process with group commit, so an append that returned is in a
//! commit that was synced and survives a crash of the process or the
//! machine, and concurrent appends (of any session, and the A2A tasks in
//! the same file) share one transaction and one sync. Each append is one
//! write of that transaction, in its own savepoint: it reads the leaf,
//! checks it, inserts and moves the leaf; an error anywhere undoes that
//! append alone and fails only its caller. Several processes may open one
//! file (the writer waits up to [`BUSY_TIMEOUT`](super::BUSY_TIMEOUT) for another's
//! transaction). Reads are one deferred transaction on a read connection,
//! a consistent snapshot. SQLite calls block, so they run on the writer
//! thread or tokio's blocking threads, never on the async workers. The
//! schema is Postgres's (`store/postgres.rs`), column for column. The
//! file is private (`SqliteFile`'s rules): created 0600 in a folder made
//! 0700, and refused, not repaired, when it or a `-wal`, `-shm` or
//! `-journal` file beside it is open to its group or others.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use oscova_core::UserInfo;
use rusqlite::{Connection, OptionalExtension, params};

use super::sqlite_file::{SqliteFile, SqliteFileError};
use super::{
    SCHEMA, SessionInfo, SessionSnapshot, SessionStore, check_chain, duplicate_id, unknown_parent,
};
use crate::session::entry::SessionEntry;
use crate::session::error::SessionError;
use crate::session::id::{EntryId, SessionId, now_iso};

/// Sessions in one SQLite file (see the module rules).
///
/// ```
/// use oscova_agent::session::{SessionStore, SqliteStore};
/// use oscova_core::UserInfo;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// let store = SqliteStore::open(dir.path().join("sessions.db")).await.unwrap();
/// let alice = UserInfo::new("alice");
/// store.create(&alice, "notes").await.unwrap();
/// assert_eq!(store.list(&alice).await.unwrap().len(), 1);
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct SqliteStore {
    file: SqliteFile,
}

impl From<SqliteFileError> for SessionError {
    fn from(error: SqliteFileError) -> Self {
        backend(error)
    }
}

fn backend(error: impl std::error::Error + Send + Sync + 'static) -> SessionError {
    SessionError::Backend {
        backend: "sqlite",
        source: Box::new(error),
    }
}

fn is_constraint(error: &rusqlite::Error) -> bool {
    error.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation)
}

impl SqliteStore {
    /// The default file: `${XDG_DATA_HOME:-~/.local/share}/oscova/sessions.db`.
    pub fn default_path() -> Result<PathBuf, SessionError> {
        data_path(std::env::var_os("XDG_DATA_HOME"), std::env::var_os("HOME"))
    }

    /// Opens the default file ([`SqliteStore::default_path`]), creating it
    /// (0600) and its folder (0700) when missing, as [`SqliteStore::open`]
    /// does.
    pub async fn open_default() -> Result<Self, SessionError> {
        Self::open(Self::default_path()?).await
    }

    /// Opens (or creates) the store in the file at `path`, sharing the
    /// file's writer with every other store this process has open there.
    ///
    /// The file holds every user's conversations (and the A2A tasks and
    /// webhook credentials kept beside them), so it is its owner's alone:
    /// a missing folder is made 0700 (each missing one on the way), a
    /// missing file is created 0600 before SQLite opens it (SQLite gives
    /// its `-wal`, `-shm` and `-journal` files the same mode), and an
    /// existing folder is left as it is. A file, or a side file, that its
    /// group or others have any permission on is refused, not repaired:
    /// the error ([`SqliteFileError::NotPrivate`] in
    /// [`SessionError::Backend`]) names it and `chmod go-rwx`, as a config
    /// file others can write is refused. What was open may have been read
    /// already; the operator decides what that means for the credentials
    /// in it, and runs the `chmod`.
    ///
    /// # Errors
    ///
    /// [`SessionError::Backend`] when the file cannot be made, opened or
    /// set up, or is refused.
    pub async fn open(path: impl Into<PathBuf>) -> Result<Self, SessionError> {
        let file = SqliteFile::open(path).await?;
        file.write(|conn| conn.execute_batch(SCHEMA).map_err(backend))
            .await?;
        Ok(Self { file })
    }

    /// The file the store is in.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The file's writer and readers, for another store to keep its
    /// tables in the same file.
    pub fn file(&self) -> &SqliteFile {
        &self.file
    }
}

fn data_path(
    xdg_data_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Result<PathBuf, SessionError> {
    let base = match xdg_data_home.filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => home
            .filter(|v| !v.is_empty())
            .map(|home| PathBuf::from(home).join(".local").join("share"))
            .ok_or(SessionError::NoDataDir)?,
    };
    Ok(base.join("oscova").join("sessions.db"))
}

const INFO_COLUMNS: &str = "id, name, leaf_id, entry_count, created_at, updated_at";

fn read_info(row: &rusqlite::Row<'_>) -> rusqlite::Result<SessionInfo> {
    let count: i64 = row.get(3)?;
    Ok(SessionInfo {
        id: SessionId::parse(&row.get::<_, String>(0)?).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
        })?,
        name: row.get(1)?,
        leaf: row.get::<_, Option<String>>(2)?.map(EntryId::new),
        entry_count: u64::try_from(count).unwrap_or(0),
        created: row.get(4)?,
        updated: row.get(5)?,
    })
}

fn info_of(conn: &Connection, user: &str, id: &str) -> Result<SessionInfo, SessionError> {
    conn.prepare(&format!(
        "SELECT {INFO_COLUMNS} FROM oscova_sessions WHERE id = ?1 AND user_id = ?2"
    ))
    .and_then(|mut query| query.query_row(params![id, user], read_info).optional())
    .map_err(backend)?
    .ok_or_else(|| SessionError::NotFound {
        session: id.to_owned(),
    })
}

fn check_leaf(info: &SessionInfo, expected: Option<&str>) -> Result<(), SessionError> {
    if info.leaf.as_ref().map(EntryId::as_str) == expected {
        Ok(())
    } else {
        Err(SessionError::Changed {
            expected: expected.map(EntryId::new),
            actual: info.leaf.clone(),
        })
    }
}

fn has_entry(conn: &Connection, session: &str, entry: &str) -> Result<bool, SessionError> {
    conn.prepare("SELECT 1 FROM oscova_session_entries WHERE session_id = ?1 AND id = ?2")
        .and_then(|mut query| query.exists(params![session, entry]))
        .map_err(backend)
}

/// Who holds session `id`'s lease (empty when nobody does any more).
fn holder_of(conn: &Connection, id: &str) -> Result<String, SessionError> {
    conn.query_row(
        "SELECT holder FROM oscova_session_leases WHERE session_id = ?1",
        params![id],
        |row| row.get(0),
    )
    .optional()
    .map(Option::unwrap_or_default)
    .map_err(backend)
}

#[async_trait]
impl SessionStore for SqliteStore {
    async fn create(&self, user: &UserInfo, name: &str) -> Result<SessionInfo, SessionError> {
        let id = SessionId::random()?;
        let (user, name) = (user.id().to_owned(), name.to_owned());
        self.file.write(move |conn| {
            let now = now_iso();
            let inserted = conn.execute(
                "INSERT INTO oscova_sessions (id, user_id, name, leaf_id, entry_count, created_at, updated_at) \
                 VALUES (?1, ?2, ?3, NULL, 0, ?4, ?4)",
                params![id.as_str(), user, name, now],
            );
            match inserted {
                Ok(_) => Ok(SessionInfo {
                    id,
                    name,
                    leaf: None,
                    entry_count: 0,
                    created: now.clone(),
                    updated: now,
                }),
                Err(e) if is_constraint(&e) => Err(SessionError::NameTaken { name }),
                Err(e) => Err(backend(e)),
            }
        })
        .await
    }

    async fn find(&self, user: &UserInfo, name: &str) -> Result<Option<SessionInfo>, SessionError> {
        let (user, name) = (user.id().to_owned(), name.to_owned());
        self.file
            .read(move |conn| {
                conn.query_row(
                &format!(
                    "SELECT {INFO_COLUMNS} FROM oscova_sessions WHERE user_id = ?1 AND name = ?2"
                ),
                params![user, name],
                read_info,
            )
            .optional()
            .map_err(backend)
            })
            .await
    }

    async fn load(&self, user: &UserInfo, id: &SessionId) -> Result<SessionSnapshot, SessionError> {
        let (user, id) = (user.id().to_owned(), id.to_string());
        self.file
            .read(move |conn| {
                let tx = conn.unchecked_transaction().map_err(backend)?;
                let info = info_of(&tx, &user, &id)?;
                let mut statement = tx
                .prepare(
                    "SELECT body FROM oscova_session_entries WHERE session_id = ?1 ORDER BY seq",
                )
                .map_err(backend)?;
                let mut rows = statement.query(params![id]).map_err(backend)?;
                let mut entries =
                    Vec::with_capacity(usize::try_from(info.entry_count).unwrap_or(0));
                while let Some(row) = rows.next().map_err(backend)? {
                    let body = row.get_ref(0).map_err(backend)?.as_str().map_err(backend)?;
                    entries.push(SessionEntry::from_json_line(body).map_err(|e| {
                        SessionError::Corrupt {
                            session: id.clone(),
                            reason: e.to_string(),
                        }
                    })?);
                }
                Ok(SessionSnapshot { info, entries })
            })
            .await
    }

    async fn append(
        &self,
        user: &UserInfo,
        id: &SessionId,
        expected_leaf: Option<&EntryId>,
        entries: &[SessionEntry],
    ) -> Result<SessionInfo, SessionError> {
        check_chain(entries)?;
        let rows = entries
            .iter()
            .map(|e| {
                let body = e.to_json_line().map_err(backend)?;
                Ok((
                    e.id.to_string(),
                    e.parent_id.as_ref().map(EntryId::to_string),
                    body,
                ))
            })
            .collect::<Result<Vec<_>, SessionError>>()?;
        let (user, id) = (user.id().to_owned(), id.to_string());
        let expected = expected_leaf.map(EntryId::to_string);
        self.file.write(move |conn| {
            let mut info = info_of(conn, &user, &id)?;
            check_leaf(&info, expected.as_deref())?;
            if let Some(parent) = rows.first().and_then(|r| r.1.as_deref())
                && !has_entry(conn, &id, parent)?
            {
                return Err(unknown_parent(&EntryId::new(parent)));
            }
            let start = i64::try_from(info.entry_count).map_err(backend)?;
            {
                let mut insert = conn
                    .prepare(
                        "INSERT INTO oscova_session_entries (session_id, seq, id, parent_id, body) \
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                    )
                    .map_err(backend)?;
                for (seq, (entry, parent, body)) in (start..).zip(&rows) {
                    match insert.execute(params![id, seq, entry, parent, body]) {
                        Ok(_) => {}
                        Err(e) if is_constraint(&e) => return Err(duplicate_id()),
                        Err(e) => return Err(backend(e)),
                    }
                }
            }
            let leaf = rows.last().map(|r| r.0.clone());
            let count = start + i64::try_from(rows.len()).map_err(backend)?;
            let now = now_iso();
            conn.prepare(
                "UPDATE oscova_sessions SET leaf_id = ?1, entry_count = ?2, updated_at = ?3 WHERE id = ?4",
            )
            .and_then(|mut update| update.execute(params![leaf, count, now, id]))
            .map_err(backend)?;
            info.leaf = leaf.map(EntryId::new);
            info.entry_count = u64::try_from(count).unwrap_or(0);
            info.updated = now;
            Ok(info)
        })
        .await
    }

    async fn set_leaf(
        &self,
        user: &UserInfo,
        id: &SessionId,
        expected_leaf: Option<&EntryId>,
        leaf: Option<&EntryId>,
    ) -> Result<SessionInfo, SessionError> {
        let (user, id) = (user.id().to_owned(), id.to_string());
        let expected = expected_leaf.map(EntryId::to_string);
        let leaf = leaf.map(EntryId::to_string);
        self.file
            .write(move |conn| {
                let mut info = info_of(conn, &user, &id)?;
                check_leaf(&info, expected.as_deref())?;
                if let Some(leaf) = &leaf
                    && !has_entry(conn, &id, leaf)?
                {
                    return Err(SessionError::UnknownEntry(EntryId::new(leaf.clone())));
                }
                let now = now_iso();
                conn.execute(
                    "UPDATE oscova_sessions SET leaf_id = ?1, updated_at = ?2 WHERE id = ?3",
                    params![leaf, now, id],
                )
                .map_err(backend)?;
                info.leaf = leaf.map(EntryId::new);
                info.updated = now;
                Ok(info)
            })
            .await
    }

    async fn list(&self, user: &UserInfo) -> Result<Vec<SessionInfo>, SessionError> {
        let user = user.id().to_owned();
        self.file.read(move |conn| {
            let mut statement = conn
                .prepare(&format!(
                    "SELECT {INFO_COLUMNS} FROM oscova_sessions WHERE user_id = ?1 ORDER BY updated_at DESC, name"
                ))
                .map_err(backend)?;
            let rows = statement.query_map(params![user], read_info).map_err(backend)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(backend)
        })
        .await
    }

    async fn delete(&self, user: &UserInfo, id: &SessionId) -> Result<bool, SessionError> {
        let (user, id) = (user.id().to_owned(), id.to_string());
        self.file
            .write(move |conn| {
                let deleted = conn
                    .execute(
                        "DELETE FROM oscova_sessions WHERE id = ?1 AND user_id = ?2",
                        params![id, user],
                    )
                    .map_err(backend)?;
                if deleted > 0 {
                    conn.execute(
                        "DELETE FROM oscova_session_entries WHERE session_id = ?1",
                        params![id],
                    )
                    .map_err(backend)?;
                    conn.execute(
                        "DELETE FROM oscova_session_leases WHERE session_id = ?1",
                        params![id],
                    )
                    .map_err(backend)?;
                }
                Ok(deleted > 0)
            })
            .await
    }

    async fn lease(
        &self,
        user: &UserInfo,
        id: &SessionId,
        holder: &str,
        ttl: std::time::Duration,
    ) -> Result<(), SessionError> {
        let (user, key, holder) = (user.id().to_owned(), id.clone(), holder.to_owned());
        let millis = super::ttl_millis(ttl);
        self.file
            .write(move |conn| {
                info_of(conn, &user, key.as_str())?;
                // The database's clock, in milliseconds.
                let taken = conn
                    .execute(
                        "INSERT INTO oscova_session_leases (session_id, holder, expires_at) \
                         VALUES (?1, ?2, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + ?3) \
                         ON CONFLICT (session_id) DO UPDATE \
                         SET holder = excluded.holder, expires_at = excluded.expires_at \
                         WHERE oscova_session_leases.holder = excluded.holder \
                         OR oscova_session_leases.expires_at \
                            <= CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)",
                        params![key.as_str(), holder, millis],
                    )
                    .map_err(backend)?;
                if taken == 0 {
                    return Err(super::leased(&key, ttl, holder_of(conn, key.as_str())?));
                }
                Ok(())
            })
            .await
    }

    async fn take_over(
        &self,
        user: &UserInfo,
        id: &SessionId,
        from: &str,
        holder: &str,
        ttl: std::time::Duration,
    ) -> Result<(), SessionError> {
        let (user, key) = (user.id().to_owned(), id.clone());
        let (from, holder) = (from.to_owned(), holder.to_owned());
        let millis = super::ttl_millis(ttl);
        self.file
            .write(move |conn| {
                info_of(conn, &user, key.as_str())?;
                let taken = conn
                    .execute(
                        "UPDATE oscova_session_leases SET holder = ?3, \
                         expires_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + ?4 \
                         WHERE session_id = ?1 AND holder = ?2",
                        params![key.as_str(), from, holder, millis],
                    )
                    .map_err(backend)?;
                if taken == 0 {
                    return Err(super::leased(&key, ttl, holder_of(conn, key.as_str())?));
                }
                Ok(())
            })
            .await
    }

    async fn release(&self, id: &SessionId, holder: &str) -> Result<(), SessionError> {
        let (id, holder) = (id.to_string(), holder.to_owned());
        self.file
            .write(move |conn| {
                conn.execute(
                    "DELETE FROM oscova_session_leases WHERE session_id = ?1 AND holder = ?2",
                    params![id, holder],
                )
                .map_err(backend)?;
                Ok(())
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_file_is_under_the_xdg_data_folder() {
        let path =
            |x: Option<&str>, h: Option<&str>| data_path(x.map(Into::into), h.map(Into::into));
        assert_eq!(
            path(Some("/x/data"), Some("/home/a")).unwrap(),
            PathBuf::from("/x/data/oscova/sessions.db")
        );
        assert_eq!(
            path(Some(""), Some("/home/a")).unwrap(),
            PathBuf::from("/home/a/.local/share/oscova/sessions.db")
        );
        assert!(matches!(path(None, None), Err(SessionError::NoDataDir)));
    }
}
