//! [`TokenStore`]: each (server, user)'s OAuth grant, kept in the
//! sessions' store (its SQLite file, or its Postgres database), sealed,
//! with a lock that makes one refresh at a time across processes and
//! instances.
//!
//! Rules:
//!
//! - **Where.** Two tables of their own (`oscova_mcp_oauth_grants`,
//!   `oscova_mcp_oauth_refresh`) beside the sessions: in their SQLite
//!   file (`sqlite.rs`: through oscova-agent's `SqliteFile`, private file
//!   modes) or, for a fleet, in their Postgres database (`postgres.rs`,
//!   the `postgres` feature). Both behave alike; one conformance suite
//!   runs against each (`tests/it/oauth_user.rs`).
//! - **Sealed.** A row holds the grant (client id, access and refresh
//!   tokens, where it was got) as JSON sealed by the [`TokenKey`] with the
//!   row's server, user and server URL as associated data; the key lives
//!   elsewhere (the environment), never in the store. A row sealed for
//!   another URL of the server is not used (the server moved: log in
//!   again); one the key cannot open is an error naming the key, never
//!   taken for "no grant".
//! - **Logins under way.** A login started for a person on the other end
//!   of a host (`link.rs`) is a third table, `oscova_mcp_oauth_pending`:
//!   one row per `state` with its server and user, sealed with the state
//!   as associated data, with its end of term. It is read, then changed
//!   (bound to a browser) or taken only if its sealed bytes are still
//!   those read, each in one statement (`UPDATE`/`DELETE ... WHERE
//!   sealed = ?`), so a `state` is used once across processes and
//!   instances and a login changed meanwhile is not taken.
//! - **One refresh at a time.** [`TokenStore::lock`] takes a lease row
//!   for (server, user) atomically (SQLite's write lock across the
//!   processes on a file; Postgres's row lock across instances, on the
//!   database's clock): whoever holds it reloads the grant, refreshes
//!   only if it is still stale, saves, and lets go; the others wait
//!   (polling every 25 ms) and then find the new tokens. A lease ends by
//!   itself after its term (the holder died), which is longer than the
//!   refresh it guards is allowed to take.

#[cfg(feature = "postgres")]
mod postgres;
mod sqlite;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use oscova_agent::session::store::SqliteFileError;
use ring::rand::{SecureRandom, SystemRandom};
use rmcp::transport::auth::StoredCredentials;
use serde::{Deserialize, Serialize};

use super::key::TokenKey;

/// Where OAuth grants are kept (the sessions' SQLite file or Postgres
/// database) and the key sealing them.
///
/// Opened on first use. Clones share the file or connection.
///
/// ```
/// use oscova_plugin_mcp::{TokenKey, TokenStore};
///
/// let key = TokenKey::parse(&"ab".repeat(32)).unwrap();
/// let store = TokenStore::new("/var/lib/oscova/sessions.db", key);
/// assert!(store.path().is_some_and(|p| p.ends_with("sessions.db")));
/// ```
#[derive(Clone)]
pub struct TokenStore {
    inner: Arc<Inner>,
}

struct Inner {
    key: TokenKey,
    backend: Backend,
}

enum Backend {
    Sqlite(sqlite::Sqlite),
    #[cfg(feature = "postgres")]
    Postgres(postgres::Postgres),
}

impl std::fmt::Debug for TokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("TokenStore");
        match &self.inner.backend {
            Backend::Sqlite(file) => out.field("path", &file.path()),
            // The configuration may hold a password: not shown.
            #[cfg(feature = "postgres")]
            Backend::Postgres(_) => out.field("backend", &"postgres"),
        };
        out.finish_non_exhaustive()
    }
}

/// Why the token store failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenStoreError {
    /// The file could not be opened (see `SqliteFile`'s rules).
    #[error(transparent)]
    File(#[from] SqliteFileError),
    /// A statement failed.
    #[error("the token store's database: {0}")]
    Sql(#[from] rusqlite::Error),
    /// The Postgres database could not be reached, or a statement on it
    /// failed.
    #[error("the token store's Postgres database: {0}")]
    Database(String),
    /// A row the key cannot open.
    #[error(
        "a stored grant cannot be opened with this token key (was `OSCOVA_TOKEN_KEY` changed?); log in again, or restore the key"
    )]
    Sealed,
    /// Waiting for another holder's refresh took too long.
    #[error("another process has held the refresh of this grant for longer than {0:?}")]
    Busy(Duration),
}

/// A row as kept: the server's URL and the sealed grant.
pub(super) struct Row {
    url: String,
    sealed: Vec<u8>,
}

/// Whose grant, for which server at which URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    pub(crate) server: String,
    /// `None`: the host's own grant.
    pub(crate) user: Option<String>,
    /// The server's URL when the grant was got.
    pub(crate) url: String,
}

impl Place {
    fn user_column(&self) -> String {
        self.user.clone().unwrap_or_default()
    }

    /// The associated data of the row's seal.
    fn aad(&self) -> Vec<u8> {
        let mut aad = b"oscova.mcp.oauth\0".to_vec();
        for part in [
            self.server.as_str(),
            self.user.as_deref().unwrap_or(""),
            self.url.as_str(),
        ] {
            aad.extend_from_slice(part.as_bytes());
            aad.push(0);
        }
        aad.push(u8::from(self.user.is_some()));
        aad
    }
}

/// One (server, user)'s grant as it is kept.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct Grant {
    /// rmcp's record: client id, token response, scopes, when received.
    pub(crate) credentials: StoredCredentials,
    /// The redirect URI the client used at login.
    pub(crate) redirect_uri: String,
    /// The resource indicator (RFC 8707) the tokens are for.
    pub(crate) resource: String,
    /// The authorization server that issued them.
    pub(crate) issuer: String,
}

impl TokenStore {
    /// The store in the SQLite file at `path` (created when missing),
    /// sealed with `key`. Nothing is opened until it is used.
    pub fn new(path: impl Into<PathBuf>, key: TokenKey) -> Self {
        Self::with(Backend::Sqlite(sqlite::Sqlite::new(path.into())), key)
    }

    /// The store in the Postgres database that `config` names (libpq
    /// style, `host=... port=... user=... dbname=...`, or a
    /// `postgresql://` URL; the sessions' database is the place), sealed
    /// with `key`, for several processes or machines sharing the grants.
    /// Nothing is connected until it is used; the tables are created
    /// then.
    ///
    /// ```
    /// use oscova_plugin_mcp::{TokenKey, TokenStore};
    ///
    /// let key = TokenKey::parse(&"ab".repeat(32)).unwrap();
    /// let store = TokenStore::postgres("host=127.0.0.1 user=oscova dbname=oscova", key);
    /// assert!(store.path().is_none());
    /// ```
    #[cfg(feature = "postgres")]
    pub fn postgres(config: impl Into<String>, key: TokenKey) -> Self {
        Self::with(
            Backend::Postgres(postgres::Postgres::new(config.into())),
            key,
        )
    }

    fn with(backend: Backend, key: TokenKey) -> Self {
        Self {
            inner: Arc::new(Inner { key, backend }),
        }
    }

    /// The SQLite file's path; `None` for a Postgres store.
    pub fn path(&self) -> Option<&Path> {
        match &self.inner.backend {
            Backend::Sqlite(file) => Some(file.path()),
            #[cfg(feature = "postgres")]
            Backend::Postgres(_) => None,
        }
    }

    async fn load_row(&self, server: &str, user: &str) -> Result<Option<Row>, TokenStoreError> {
        match &self.inner.backend {
            Backend::Sqlite(b) => b.load(server, user).await,
            #[cfg(feature = "postgres")]
            Backend::Postgres(b) => b.load(server, user).await,
        }
    }

    async fn save_row(&self, server: &str, user: &str, row: Row) -> Result<(), TokenStoreError> {
        match &self.inner.backend {
            Backend::Sqlite(b) => b.save(server, user, row).await,
            #[cfg(feature = "postgres")]
            Backend::Postgres(b) => b.save(server, user, row).await,
        }
    }

    async fn take(
        &self,
        server: &str,
        user: &str,
        holder: &str,
        term_ms: i64,
    ) -> Result<bool, TokenStoreError> {
        match &self.inner.backend {
            Backend::Sqlite(b) => b.take(server, user, holder, term_ms).await,
            #[cfg(feature = "postgres")]
            Backend::Postgres(b) => b.take(server, user, holder, term_ms).await,
        }
    }

    async fn release(&self, server: &str, user: &str, holder: &str) {
        let released = match &self.inner.backend {
            Backend::Sqlite(b) => b.release(server, user, holder).await,
            #[cfg(feature = "postgres")]
            Backend::Postgres(b) => b.release(server, user, holder).await,
        };
        // Not let go: the lease ends by itself at the end of its term.
        if let Err(error) = released {
            tracing::warn!(%error, server, "a refresh lease was not let go");
        }
    }

    /// The grant kept for `place`: `None` when there is none, or it was
    /// got for another URL of the server.
    pub(crate) async fn load(&self, place: &Place) -> Result<Option<Grant>, TokenStoreError> {
        let Some(row) = self.load_row(&place.server, &place.user_column()).await? else {
            return Ok(None);
        };
        if row.url != place.url {
            return Ok(None);
        }
        let plain = self
            .inner
            .key
            .open(&place.aad(), &row.sealed)
            .ok_or(TokenStoreError::Sealed)?;
        serde_json::from_slice(&plain)
            .map(Some)
            .map_err(|_| TokenStoreError::Sealed)
    }

    /// Keeps `grant` for `place`, replacing what was there.
    pub(crate) async fn save(&self, place: &Place, grant: &Grant) -> Result<(), TokenStoreError> {
        let plain = serde_json::to_vec(grant).map_err(|_| TokenStoreError::Sealed)?;
        let sealed = self
            .inner
            .key
            .seal(&place.aad(), &plain)
            .ok_or(TokenStoreError::Sealed)?;
        let row = Row {
            url: place.url.clone(),
            sealed,
        };
        self.save_row(&place.server, &place.user_column(), row)
            .await
    }

    /// Forgets `server`'s grant for `user` (`None`: the host's), whatever
    /// URL it was for; whether there was one.
    pub(crate) async fn remove(
        &self,
        server: &str,
        user: Option<&str>,
    ) -> Result<bool, TokenStoreError> {
        let user = user.unwrap_or_default();
        match &self.inner.backend {
            Backend::Sqlite(b) => b.remove(server, user).await,
            #[cfg(feature = "postgres")]
            Backend::Postgres(b) => b.remove(server, user).await,
        }
    }

    /// Keeps `plain` (a login under way, `link.rs`) sealed under its
    /// `state` for `term`; rows whose term is over are dropped meanwhile.
    pub(crate) async fn put_pending(
        &self,
        state: &str,
        place: &Place,
        plain: &[u8],
        term: Duration,
    ) -> Result<(), TokenStoreError> {
        let sealed = self
            .inner
            .key
            .seal(&pending_aad(state), plain)
            .ok_or(TokenStoreError::Sealed)?;
        let term_ms = i64::try_from(term.as_millis()).unwrap_or(i64::MAX);
        let user = place.user_column();
        let owner = (place.server.as_str(), user.as_str());
        match &self.inner.backend {
            Backend::Sqlite(b) => b.put_pending(state, owner, sealed, term_ms).await,
            #[cfg(feature = "postgres")]
            Backend::Postgres(b) => b.put_pending(state, owner, sealed, term_ms).await,
        }
    }

    /// The state and plain bytes of `place`'s login under way (server and
    /// user) with the most of its term left, if at least `left` is.
    pub(crate) async fn live_pending(
        &self,
        place: &Place,
        left: Duration,
    ) -> Result<Option<(String, Vec<u8>)>, TokenStoreError> {
        let left_ms = i64::try_from(left.as_millis()).unwrap_or(i64::MAX);
        let user = place.user_column();
        let found = match &self.inner.backend {
            Backend::Sqlite(b) => b.live_pending(&place.server, &user, left_ms).await?,
            #[cfg(feature = "postgres")]
            Backend::Postgres(b) => b.live_pending(&place.server, &user, left_ms).await?,
        };
        let Some((state, sealed)) = found else {
            return Ok(None);
        };
        let plain = self
            .inner
            .key
            .open(&pending_aad(&state), &sealed)
            .ok_or(TokenStoreError::Sealed)?;
        Ok(Some((state, plain)))
    }

    /// The login under way by `state`, left in the store: what it is, to
    /// be changed ([`reseal_pending`](Self::reseal_pending)) or taken
    /// ([`take_pending`](Self::take_pending)) only as it was read.
    pub(crate) async fn peek_pending(
        &self,
        state: &str,
    ) -> Result<Option<PendingRow>, TokenStoreError> {
        let found = match &self.inner.backend {
            Backend::Sqlite(b) => b.peek_pending(state).await?,
            #[cfg(feature = "postgres")]
            Backend::Postgres(b) => b.peek_pending(state).await?,
        };
        let Some((sealed, live)) = found else {
            return Ok(None);
        };
        let plain = self
            .inner
            .key
            .open(&pending_aad(state), &sealed)
            .ok_or(TokenStoreError::Sealed)?;
        Ok(Some(PendingRow {
            state: state.to_owned(),
            sealed,
            plain,
            live,
        }))
    }

    /// Replaces the login under way `row` read with `plain`, sealed, if
    /// nobody changed or took it since and its term still runs; whether
    /// it was replaced.
    pub(crate) async fn reseal_pending(
        &self,
        row: PendingRow,
        plain: &[u8],
    ) -> Result<bool, TokenStoreError> {
        let sealed = self
            .inner
            .key
            .seal(&pending_aad(&row.state), plain)
            .ok_or(TokenStoreError::Sealed)?;
        match &self.inner.backend {
            Backend::Sqlite(b) => b.reseal_pending(&row.state, row.sealed, sealed).await,
            #[cfg(feature = "postgres")]
            Backend::Postgres(b) => b.reseal_pending(&row.state, row.sealed, sealed).await,
        }
    }

    /// Takes the login under way `row` read out of the store, if nobody
    /// changed or took it since (in one statement: of two takers, one
    /// gets it); whether it was taken.
    pub(crate) async fn take_pending(&self, row: &PendingRow) -> Result<bool, TokenStoreError> {
        match &self.inner.backend {
            Backend::Sqlite(b) => b.take_pending(&row.state, row.sealed.clone()).await,
            #[cfg(feature = "postgres")]
            Backend::Postgres(b) => b.take_pending(&row.state, row.sealed.clone()).await,
        }
    }

    /// Takes the refresh lease of `place` for `term`, waiting at most
    /// `wait` for another holder.
    pub(crate) async fn lock(
        &self,
        place: &Place,
        term: Duration,
        wait: Duration,
    ) -> Result<Lease, TokenStoreError> {
        let mut id = [0u8; 16];
        SystemRandom::new()
            .fill(&mut id)
            .map_err(|_| TokenStoreError::Busy(Duration::ZERO))?;
        let holder: String = id.iter().map(|b| format!("{b:02x}")).collect();
        let term_ms = i64::try_from(term.as_millis()).unwrap_or(i64::MAX);
        let deadline = Instant::now() + wait;
        let user = place.user_column();
        loop {
            if self.take(&place.server, &user, &holder, term_ms).await? {
                return Ok(Lease {
                    store: Some(self.clone()),
                    place: place.clone(),
                    holder,
                });
            }
            if Instant::now() >= deadline {
                return Err(TokenStoreError::Busy(wait));
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

/// A login under way as read from the store ([`TokenStore::peek_pending`]).
pub(crate) struct PendingRow {
    state: String,
    /// The row as kept: a change or take applies only while it is this.
    sealed: Vec<u8>,
    /// What it holds, opened.
    pub(crate) plain: Vec<u8>,
    /// Whether its term was still running.
    pub(crate) live: bool,
}

/// The associated data of a login under way's seal: its `state`.
fn pending_aad(state: &str) -> Vec<u8> {
    let mut aad = b"oscova.mcp.oauth.pending\0".to_vec();
    aad.extend_from_slice(state.as_bytes());
    aad
}

/// A held refresh lease; let go by [`release`](Self::release), or, if
/// dropped, by a task (or, without a runtime, at the end of its term).
pub(crate) struct Lease {
    store: Option<TokenStore>,
    place: Place,
    holder: String,
}

impl Lease {
    /// Lets go of the lease.
    pub(crate) async fn release(mut self) {
        if let Some(store) = self.store.take() {
            store
                .release(&self.place.server, &self.place.user_column(), &self.holder)
                .await;
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(store) = self.store.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let (server, user, holder) = (
                self.place.server.clone(),
                self.place.user_column(),
                std::mem::take(&mut self.holder),
            );
            runtime.spawn(async move { store.release(&server, &user, &holder).await });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(user: &str) -> Place {
        Place {
            server: "up".to_owned(),
            user: Some(user.to_owned()),
            url: "http://127.0.0.1:9/mcp".to_owned(),
        }
    }

    /// The lease's rules, on `store`: one holder at a time per (server,
    /// user), let go on release, and a holder that died (its lease
    /// forgotten, never released) blocks the others only until its term.
    async fn lease_rules(store: TokenStore) {
        let (alice, bob) = (place("alice"), place("bob"));
        let short = Duration::from_millis(100);
        let first = store
            .lock(&alice, Duration::from_secs(60), short)
            .await
            .unwrap();
        assert!(
            matches!(
                store.lock(&alice, Duration::from_secs(60), short).await,
                Err(TokenStoreError::Busy(_))
            ),
            "held"
        );
        let other = store
            .lock(&bob, Duration::from_secs(60), short)
            .await
            .unwrap();
        first.release().await;
        let second = store
            .lock(&alice, Duration::from_millis(400), short)
            .await
            .unwrap();
        // Its holder dies: the lease is never let go.
        std::mem::forget(second);
        let started = Instant::now();
        assert!(
            store
                .lock(&alice, Duration::from_secs(60), short)
                .await
                .is_err()
        );
        let third = store
            .lock(&alice, Duration::from_secs(60), Duration::from_secs(5))
            .await
            .unwrap();
        assert!(
            started.elapsed() >= Duration::from_millis(250),
            "taken only once the dead holder's term was over"
        );
        third.release().await;
        other.release().await;
    }

    #[tokio::test]
    async fn a_sqlite_lease_is_one_holders_until_released_or_its_term_ends() {
        let dir = tempfile::tempdir().unwrap();
        let key = TokenKey::parse(&"01".repeat(32)).unwrap();
        lease_rules(TokenStore::new(
            dir.path().join("s").join("sessions.db"),
            key,
        ))
        .await;
    }

    #[cfg(feature = "postgres")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_postgres_lease_is_one_holders_until_released_or_its_term_ends() {
        let (cluster, config) = tokio::task::spawn_blocking(|| {
            let cluster = oscova_test_support::postgres::Cluster::start();
            let config = cluster.create_database("leases");
            (cluster, config)
        })
        .await
        .unwrap();
        let key = TokenKey::parse(&"01".repeat(32)).unwrap();
        lease_rules(TokenStore::postgres(config, key)).await;
        drop(cluster);
    }

    #[cfg(feature = "postgres")]
    #[test]
    fn a_postgres_store_never_shows_its_configuration() {
        let key = TokenKey::parse(&"01".repeat(32)).unwrap();
        let store = TokenStore::postgres("postgresql://oscova:hunter2@127.0.0.1/oscova", key);
        let shown = format!("{store:?}");
        assert!(
            shown.contains("postgres") && !shown.contains("hunter2"),
            "{shown}"
        );
        assert!(store.path().is_none());
    }

    #[test]
    fn a_sqlite_store_shows_its_file() {
        let key = TokenKey::parse(&"01".repeat(32)).unwrap();
        let store = TokenStore::new("/var/lib/oscova/sessions.db", key);
        assert!(format!("{store:?}").contains("sessions.db"));
    }
}
