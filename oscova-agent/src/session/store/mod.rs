//! Where sessions are kept: the [`SessionStore`] trait and its stores.
//!
//! Rules every store keeps (the conformance suite in the crate's
//! integration tests runs against each):
//!
//! - **Per user.** Every method takes the user; a session of another user
//!   is invisible by name and by id ([`SessionError::NotFound`], the same
//!   words as for a missing one). Names are unique per user, not across
//!   users.
//! - **Optimistic appends.** [`SessionStore::append`] and
//!   [`SessionStore::set_leaf`] name the leaf the writer last saw; when the
//!   stored leaf differs, the write is refused with
//!   [`SessionError::Changed`] and nothing of it is kept. Two writers on one
//!   session therefore never interleave a branch: the second resumes.
//! - **Atomic.** A batch of entries is kept whole or not at all: the check
//!   of the leaf, the entries and the new leaf are one transaction.
//! - **Well formed.** Appended entries form a chain: the first one's parent
//!   is an entry of the session (or none, a new root), each next one's
//!   parent is the one before; ids are unique within the session. The leaf
//!   after an append is the last entry appended.
//! - **One runner.** [`SessionStore::lease`] gives one holder at a time a
//!   session's lease until an expiry on the store's clock (the database's
//!   for SQLite and Postgres, so the processes' clocks do not matter):
//!   taken when nobody holds it, renewed by its holder, taken over once
//!   it lapsed; anyone else is refused with [`SessionError::Leased`].
//!   [`SessionLease`] takes it, renews it while held and gives it back
//!   when dropped, so two live processes never run one session at once and
//!   a crashed holder's lease lapses.
//! - **Durable.** An entry is kept once `append` returned, across a crash of
//!   the process or the machine (SQLite: WAL with `synchronous=FULL`, the
//!   append answered after the commit that holds it; Postgres: its
//!   commit).
//!
//! The stores: [`MemoryStore`] (tests, embedding), `SqliteStore` (feature
//! `sqlite`, the embedded default, one file, written through a
//! `SqliteFile`: one writer thread per file with group commit, shared with
//! other stores in the same file), `PostgresStore` (feature `postgres`,
//! for several processes or machines; the same schema).

mod lease;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "sqlite")]
mod sqlite_file;

pub use lease::{LEASE_TTL, SessionLease};
pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
#[cfg(feature = "sqlite")]
pub use sqlite_file::{BUSY_TIMEOUT, MAX_BATCH, SqliteFile, SqliteFileError};

use std::collections::HashSet;
use std::time::Duration;

use async_trait::async_trait;
use oscova_core::UserInfo;

use super::entry::SessionEntry;
use super::error::SessionError;
use super::id::{EntryId, SessionId};

/// What a store knows of a session apart from its entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// Its id.
    pub id: SessionId,
    /// Its name, unique among its user's sessions.
    pub name: String,
    /// The active branch's last entry; `None` before the first entry (or
    /// after the leaf was reset to start a new root).
    pub leaf: Option<EntryId>,
    /// How many entries it holds.
    pub entry_count: u64,
    /// When it was created (ISO 8601 UTC).
    pub created: String,
    /// When it last changed (ISO 8601 UTC).
    pub updated: String,
}

/// A session as read at one instant: its info and every entry, in append
/// order.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSnapshot {
    /// The session.
    pub info: SessionInfo,
    /// Its entries, in the order they were appended.
    pub entries: Vec<SessionEntry>,
}

/// Keeps sessions, per user, with optimistic concurrency (see the module
/// rules).
#[async_trait]
pub trait SessionStore: Send + Sync + 'static {
    /// Creates an empty session named `name` for `user`
    /// ([`SessionError::NameTaken`] when the user has one so named).
    async fn create(&self, user: &UserInfo, name: &str) -> Result<SessionInfo, SessionError>;

    /// The user's session named `name`, if any.
    async fn find(&self, user: &UserInfo, name: &str) -> Result<Option<SessionInfo>, SessionError>;

    /// The user's session `id` with all its entries.
    async fn load(&self, user: &UserInfo, id: &SessionId) -> Result<SessionSnapshot, SessionError>;

    /// Appends `entries` when the session's leaf is still `expected_leaf`;
    /// the last entry becomes the leaf.
    async fn append(
        &self,
        user: &UserInfo,
        id: &SessionId,
        expected_leaf: Option<&EntryId>,
        entries: &[SessionEntry],
    ) -> Result<SessionInfo, SessionError>;

    /// Moves the leaf to `leaf` (an entry of the session, or `None` to
    /// start a new root) when it is still `expected_leaf`: a fork.
    async fn set_leaf(
        &self,
        user: &UserInfo,
        id: &SessionId,
        expected_leaf: Option<&EntryId>,
        leaf: Option<&EntryId>,
    ) -> Result<SessionInfo, SessionError>;

    /// The user's sessions, the most recently changed first (ties by
    /// name).
    async fn list(&self, user: &UserInfo) -> Result<Vec<SessionInfo>, SessionError>;

    /// Deletes the user's session `id` with its entries; `false` when the
    /// user has none so named.
    async fn delete(&self, user: &UserInfo, id: &SessionId) -> Result<bool, SessionError>;

    /// Takes or renews `holder`'s lease on the user's session `id` until
    /// `ttl` from now on the store's clock: granted when nobody holds it,
    /// `holder` does, or the lease lapsed; [`SessionError::Leased`] when
    /// another holder's lease runs. [`SessionLease`] is the usual way in.
    async fn lease(
        &self,
        user: &UserInfo,
        id: &SessionId,
        holder: &str,
        ttl: Duration,
    ) -> Result<(), SessionError>;

    /// Gives back `holder`'s lease on session `id`; nothing when it holds
    /// none there.
    async fn release(&self, id: &SessionId, holder: &str) -> Result<(), SessionError>;

    /// Takes the user's session `id`'s lease over from `from`, known to be
    /// gone (a process of this machine that no longer runs), for `holder`
    /// until `ttl` from now: only while `from` still holds it, else
    /// [`SessionError::Leased`] naming the holder now.
    async fn take_over(
        &self,
        user: &UserInfo,
        id: &SessionId,
        from: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<(), SessionError>;
}

/// The refusal of a lease `holder` has.
pub(crate) fn leased(id: &SessionId, ttl: Duration, holder: String) -> SessionError {
    SessionError::Leased {
        session: id.to_string(),
        ttl_secs: ttl.as_secs().max(1),
        holder,
    }
}

/// A lease's length in whole milliseconds, as the stores write it.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn ttl_millis(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX)
}

/// Checks what every store checks before it writes: the batch is not
/// empty, its entries chain one to the next, and no id repeats within it.
/// Whether the first parent exists and ids are new to the session is the
/// store's check, inside its transaction.
pub(crate) fn check_chain(entries: &[SessionEntry]) -> Result<(), SessionError> {
    let Some(first) = entries.first() else {
        return Err(SessionError::InvalidAppend("no entries were given".into()));
    };
    let mut seen = HashSet::with_capacity(entries.len());
    seen.insert(&first.id);
    for pair in entries.windows(2) {
        if pair[1].parent_id.as_ref() != Some(&pair[0].id) {
            return Err(SessionError::InvalidAppend(format!(
                "entry `{}` does not follow `{}`, the entry before it",
                pair[1].id, pair[0].id
            )));
        }
        if !seen.insert(&pair[1].id) {
            return Err(SessionError::InvalidAppend(format!(
                "the id `{}` is used twice",
                pair[1].id
            )));
        }
    }
    Ok(())
}

/// The refusal for an id already in the session.
pub(crate) fn duplicate_id() -> SessionError {
    SessionError::InvalidAppend("an entry id is already used in this session".into())
}

/// The refusal for a first parent the session does not hold.
pub(crate) fn unknown_parent(parent: &EntryId) -> SessionError {
    SessionError::InvalidAppend(format!("the parent `{parent}` is not in this session"))
}

/// The tables of the SQLite and Postgres stores: one schema for both, so
/// any store of a fleet reads what another wrote the same way.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS oscova_sessions (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    leaf_id TEXT,
    entry_count BIGINT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (user_id, name)
);
CREATE TABLE IF NOT EXISTS oscova_session_entries (
    session_id TEXT NOT NULL REFERENCES oscova_sessions (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    id TEXT NOT NULL,
    parent_id TEXT,
    body TEXT NOT NULL,
    PRIMARY KEY (session_id, seq),
    UNIQUE (session_id, id)
);
CREATE TABLE IF NOT EXISTS oscova_session_leases (
    session_id TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
";
