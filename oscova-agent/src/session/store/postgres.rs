//! The Postgres session store: the same schema and behaviour as SQLite's,
//! for several host processes or machines on one database.
//!
//! Rules: the module rules of `store`, across machines. Each append is one
//! transaction that locks the session's row (`SELECT ... FOR UPDATE`),
//! checks the leaf, inserts the batch in one statement, moves the leaf and
//! commits; a second writer waits on the row lock, then sees the new leaf
//! and is refused with [`SessionError::Changed`]. Reads are one
//! `REPEATABLE READ` read-only transaction, a consistent snapshot. The
//! schema is created when missing, under an advisory lock so that
//! processes starting together do not race. The store holds one
//! connection (no TLS: loopback or a private network; put a TLS-terminating
//! proxy or a rustls connector in front otherwise); calls on it take turns.
//! When the connection drops, calls fail with [`SessionError::Backend`]
//! and the host connects again.

use async_trait::async_trait;
use oscova_core::UserInfo;
use tokio::sync::Mutex;
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, IsolationLevel, NoTls, Row};

use super::{
    SCHEMA, SessionInfo, SessionSnapshot, SessionStore, check_chain, duplicate_id, unknown_parent,
};
use crate::session::entry::SessionEntry;
use crate::session::error::SessionError;
use crate::session::id::{EntryId, SessionId, now_iso};

/// An arbitrary key for the advisory lock around schema creation.
const SCHEMA_LOCK: i64 = 0x6f73_636f_7661;

const INFO_COLUMNS: &str = "id, name, leaf_id, entry_count, created_at, updated_at";

/// Sessions in a Postgres database (see the module rules).
///
/// ```no_run
/// use oscova_agent::session::{PostgresStore, SessionStore};
/// use oscova_core::UserInfo;
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let store = PostgresStore::connect("host=127.0.0.1 port=5432 user=oscova dbname=oscova").await?;
/// let sessions = store.list(&UserInfo::new("alice")).await?;
/// # let _ = sessions;
/// # Ok(())
/// # }
/// ```
pub struct PostgresStore {
    client: Mutex<Client>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore").finish_non_exhaustive()
    }
}

fn backend(error: impl std::error::Error + Send + Sync + 'static) -> SessionError {
    SessionError::Backend {
        backend: "postgres",
        source: Box::new(error),
    }
}

fn is_unique_violation(error: &tokio_postgres::Error) -> bool {
    error.code() == Some(&SqlState::UNIQUE_VIOLATION)
}

fn read_info(row: &Row) -> Result<SessionInfo, SessionError> {
    let id: String = row.try_get(0).map_err(backend)?;
    let count: i64 = row.try_get(3).map_err(backend)?;
    Ok(SessionInfo {
        id: SessionId::parse(&id)?,
        name: row.try_get(1).map_err(backend)?,
        leaf: row
            .try_get::<_, Option<String>>(2)
            .map_err(backend)?
            .map(EntryId::new),
        entry_count: u64::try_from(count).unwrap_or(0),
        created: row.try_get(4).map_err(backend)?,
        updated: row.try_get(5).map_err(backend)?,
    })
}

fn check_leaf(info: &SessionInfo, expected: Option<&EntryId>) -> Result<(), SessionError> {
    if info.leaf.as_ref() == expected {
        Ok(())
    } else {
        Err(SessionError::Changed {
            expected: expected.cloned(),
            actual: info.leaf.clone(),
        })
    }
}

impl PostgresStore {
    /// Connects with a libpq-style configuration (`host=... port=...
    /// user=... dbname=...` or a `postgresql://` URL) and creates the
    /// schema when missing.
    pub async fn connect(config: &str) -> Result<Self, SessionError> {
        let (mut client, connection) = tokio_postgres::connect(config, NoTls)
            .await
            .map_err(backend)?;
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::warn!(%error, "the Postgres session store's connection ended");
            }
        });
        let tx = client.transaction().await.map_err(backend)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
            .await
            .map_err(backend)?;
        tx.batch_execute(SCHEMA).await.map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        Ok(Self {
            client: Mutex::new(client),
        })
    }
}

/// Who holds session `id`'s lease (empty when nobody does any more).
async fn holder_of(
    tx: &tokio_postgres::Transaction<'_>,
    id: &SessionId,
) -> Result<String, SessionError> {
    let row = tx
        .query_opt(
            "SELECT holder FROM oscova_session_leases WHERE session_id = $1",
            &[&id.as_str()],
        )
        .await
        .map_err(backend)?;
    Ok(row.map(|r| r.get(0)).unwrap_or_default())
}

async fn locked_info(
    tx: &tokio_postgres::Transaction<'_>,
    user: &UserInfo,
    id: &SessionId,
    lock: &str,
) -> Result<SessionInfo, SessionError> {
    let row = tx
        .query_opt(
            &format!(
                "SELECT {INFO_COLUMNS} FROM oscova_sessions WHERE id = $1 AND user_id = $2 {lock}"
            ),
            &[&id.as_str(), &user.id()],
        )
        .await
        .map_err(backend)?
        .ok_or_else(|| SessionError::NotFound {
            session: id.to_string(),
        })?;
    read_info(&row)
}

async fn has_entry(
    tx: &tokio_postgres::Transaction<'_>,
    id: &SessionId,
    entry: &EntryId,
) -> Result<bool, SessionError> {
    Ok(tx
        .query_opt(
            "SELECT 1 FROM oscova_session_entries WHERE session_id = $1 AND id = $2",
            &[&id.as_str(), &entry.as_str()],
        )
        .await
        .map_err(backend)?
        .is_some())
}

#[async_trait]
impl SessionStore for PostgresStore {
    async fn create(&self, user: &UserInfo, name: &str) -> Result<SessionInfo, SessionError> {
        let id = SessionId::random()?;
        let now = now_iso();
        let client = self.client.lock().await;
        let inserted = client
            .execute(
                "INSERT INTO oscova_sessions (id, user_id, name, leaf_id, entry_count, created_at, updated_at) \
                 VALUES ($1, $2, $3, NULL, 0, $4, $4)",
                &[&id.as_str(), &user.id(), &name, &now],
            )
            .await;
        match inserted {
            Ok(_) => Ok(SessionInfo {
                id,
                name: name.to_owned(),
                leaf: None,
                entry_count: 0,
                created: now.clone(),
                updated: now,
            }),
            Err(e) if is_unique_violation(&e) => Err(SessionError::NameTaken { name: name.into() }),
            Err(e) => Err(backend(e)),
        }
    }

    async fn find(&self, user: &UserInfo, name: &str) -> Result<Option<SessionInfo>, SessionError> {
        let client = self.client.lock().await;
        let row = client
            .query_opt(
                &format!(
                    "SELECT {INFO_COLUMNS} FROM oscova_sessions WHERE user_id = $1 AND name = $2"
                ),
                &[&user.id(), &name],
            )
            .await
            .map_err(backend)?;
        row.as_ref().map(read_info).transpose()
    }

    async fn load(&self, user: &UserInfo, id: &SessionId) -> Result<SessionSnapshot, SessionError> {
        let mut client = self.client.lock().await;
        let tx = client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(backend)?;
        let info = locked_info(&tx, user, id, "").await?;
        let rows = tx
            .query(
                "SELECT body FROM oscova_session_entries WHERE session_id = $1 ORDER BY seq",
                &[&id.as_str()],
            )
            .await
            .map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        let mut entries = Vec::with_capacity(rows.len());
        for row in rows {
            let body: &str = row.try_get(0).map_err(backend)?;
            entries.push(SessionEntry::from_json_line(body).map_err(|e| {
                SessionError::Corrupt {
                    session: id.to_string(),
                    reason: e.to_string(),
                }
            })?);
        }
        Ok(SessionSnapshot { info, entries })
    }

    async fn append(
        &self,
        user: &UserInfo,
        id: &SessionId,
        expected_leaf: Option<&EntryId>,
        entries: &[SessionEntry],
    ) -> Result<SessionInfo, SessionError> {
        check_chain(entries)?;
        let mut ids = Vec::with_capacity(entries.len());
        let mut parents = Vec::with_capacity(entries.len());
        let mut bodies = Vec::with_capacity(entries.len());
        for entry in entries {
            ids.push(entry.id.as_str());
            parents.push(entry.parent_id.as_ref().map(EntryId::as_str));
            bodies.push(entry.to_json_line().map_err(backend)?);
        }
        let mut client = self.client.lock().await;
        let tx = client.transaction().await.map_err(backend)?;
        let mut info = locked_info(&tx, user, id, "FOR UPDATE").await?;
        check_leaf(&info, expected_leaf)?;
        if let Some(parent) = entries.first().and_then(|e| e.parent_id.as_ref())
            && !has_entry(&tx, id, parent).await?
        {
            return Err(unknown_parent(parent));
        }
        let start = i64::try_from(info.entry_count).map_err(backend)?;
        let count = start + i64::try_from(entries.len()).map_err(backend)?;
        let inserted = tx
            .execute(
                "INSERT INTO oscova_session_entries (session_id, seq, id, parent_id, body) \
                 SELECT $1, $2 + n - 1, e.id, e.parent_id, e.body \
                 FROM UNNEST($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS e(id, parent_id, body, n)",
                &[&id.as_str(), &start, &ids, &parents, &bodies],
            )
            .await;
        match inserted {
            Ok(_) => {}
            Err(e) if is_unique_violation(&e) => return Err(duplicate_id()),
            Err(e) => return Err(backend(e)),
        }
        let leaf = entries.last().map(|e| e.id.clone());
        let now = now_iso();
        tx.execute(
            "UPDATE oscova_sessions SET leaf_id = $1, entry_count = $2, updated_at = $3 WHERE id = $4",
            &[&leaf.as_ref().map(EntryId::as_str), &count, &now, &id.as_str()],
        )
        .await
        .map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        info.leaf = leaf;
        info.entry_count = u64::try_from(count).unwrap_or(0);
        info.updated = now;
        Ok(info)
    }

    async fn set_leaf(
        &self,
        user: &UserInfo,
        id: &SessionId,
        expected_leaf: Option<&EntryId>,
        leaf: Option<&EntryId>,
    ) -> Result<SessionInfo, SessionError> {
        let mut client = self.client.lock().await;
        let tx = client.transaction().await.map_err(backend)?;
        let mut info = locked_info(&tx, user, id, "FOR UPDATE").await?;
        check_leaf(&info, expected_leaf)?;
        if let Some(leaf) = leaf
            && !has_entry(&tx, id, leaf).await?
        {
            return Err(SessionError::UnknownEntry(leaf.clone()));
        }
        let now = now_iso();
        tx.execute(
            "UPDATE oscova_sessions SET leaf_id = $1, updated_at = $2 WHERE id = $3",
            &[&leaf.map(EntryId::as_str), &now, &id.as_str()],
        )
        .await
        .map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        info.leaf = leaf.cloned();
        info.updated = now;
        Ok(info)
    }

    async fn list(&self, user: &UserInfo) -> Result<Vec<SessionInfo>, SessionError> {
        let client = self.client.lock().await;
        let rows = client
            .query(
                &format!(
                    "SELECT {INFO_COLUMNS} FROM oscova_sessions WHERE user_id = $1 ORDER BY updated_at DESC, name COLLATE \"C\""
                ),
                &[&user.id()],
            )
            .await
            .map_err(backend)?;
        rows.iter().map(read_info).collect()
    }

    async fn delete(&self, user: &UserInfo, id: &SessionId) -> Result<bool, SessionError> {
        let mut client = self.client.lock().await;
        let tx = client.transaction().await.map_err(backend)?;
        let deleted = tx
            .execute(
                "DELETE FROM oscova_sessions WHERE id = $1 AND user_id = $2",
                &[&id.as_str(), &user.id()],
            )
            .await
            .map_err(backend)?;
        if deleted > 0 {
            tx.execute(
                "DELETE FROM oscova_session_entries WHERE session_id = $1",
                &[&id.as_str()],
            )
            .await
            .map_err(backend)?;
            tx.execute(
                "DELETE FROM oscova_session_leases WHERE session_id = $1",
                &[&id.as_str()],
            )
            .await
            .map_err(backend)?;
        }
        tx.commit().await.map_err(backend)?;
        Ok(deleted > 0)
    }

    async fn lease(
        &self,
        user: &UserInfo,
        id: &SessionId,
        holder: &str,
        ttl: std::time::Duration,
    ) -> Result<(), SessionError> {
        let millis = super::ttl_millis(ttl);
        let mut client = self.client.lock().await;
        let tx = client.transaction().await.map_err(backend)?;
        locked_info(&tx, user, id, "").await?;
        // The database's clock, in milliseconds.
        let taken = tx
            .execute(
                "INSERT INTO oscova_session_leases (session_id, holder, expires_at) \
                 VALUES ($1, $2, (extract(epoch FROM clock_timestamp()) * 1000)::bigint + $3) \
                 ON CONFLICT (session_id) DO UPDATE \
                 SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at \
                 WHERE oscova_session_leases.holder = EXCLUDED.holder \
                 OR oscova_session_leases.expires_at \
                    <= (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
                &[&id.as_str(), &holder, &millis],
            )
            .await
            .map_err(backend)?;
        let now_held = if taken == 0 {
            Some(holder_of(&tx, id).await?)
        } else {
            None
        };
        tx.commit().await.map_err(backend)?;
        match now_held {
            Some(other) => Err(super::leased(id, ttl, other)),
            None => Ok(()),
        }
    }

    async fn take_over(
        &self,
        user: &UserInfo,
        id: &SessionId,
        from: &str,
        holder: &str,
        ttl: std::time::Duration,
    ) -> Result<(), SessionError> {
        let millis = super::ttl_millis(ttl);
        let mut client = self.client.lock().await;
        let tx = client.transaction().await.map_err(backend)?;
        locked_info(&tx, user, id, "").await?;
        let taken = tx
            .execute(
                "UPDATE oscova_session_leases SET holder = $3, \
                 expires_at = (extract(epoch FROM clock_timestamp()) * 1000)::bigint + $4 \
                 WHERE session_id = $1 AND holder = $2",
                &[&id.as_str(), &from, &holder, &millis],
            )
            .await
            .map_err(backend)?;
        let now_held = if taken == 0 {
            Some(holder_of(&tx, id).await?)
        } else {
            None
        };
        tx.commit().await.map_err(backend)?;
        match now_held {
            Some(other) => Err(super::leased(id, ttl, other)),
            None => Ok(()),
        }
    }

    async fn release(&self, id: &SessionId, holder: &str) -> Result<(), SessionError> {
        let client = self.client.lock().await;
        client
            .execute(
                "DELETE FROM oscova_session_leases WHERE session_id = $1 AND holder = $2",
                &[&id.as_str(), &holder],
            )
            .await
            .map_err(backend)?;
        Ok(())
    }
}
