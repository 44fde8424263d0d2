//! [`TokenStore`]: each (server, user)'s OAuth grant, kept in the
//! sessions' SQLite file, sealed, with a lock that makes one refresh at a
//! time across processes.
//!
//! Rules:
//!
//! - **Where.** Two tables of their own (`oscova_mcp_oauth_grants`,
//!   `oscova_mcp_oauth_refresh`) in one SQLite file, opened through
//!   oscova-agent's `SqliteFile`: the file the session store uses (one
//!   writer per file per process, WAL, synced before a write returns), a
//!   missing one created 0600 in a 0700 folder, one that its group or
//!   others can open refused.
//! - **Sealed.** A row holds the grant (client id, access and refresh
//!   tokens, where it was got) as JSON sealed by the [`TokenKey`] with the
//!   row's server, user and server URL as associated data; the key lives
//!   elsewhere (the environment), never in the file. A row sealed for
//!   another URL of the server is not used (the server moved: log in
//!   again); one the key cannot open is an error naming the key, never
//!   taken for "no grant".
//! - **One refresh at a time.** [`TokenStore::lock`] takes a lease row
//!   for (server, user) in one write transaction (SQLite's write lock
//!   makes taking it atomic across processes): whoever holds it reloads
//!   the grant, refreshes only if it is still stale, saves, and lets go;
//!   the others wait (polling every 25 ms) and then find the new tokens.
//!   A lease ends by itself after its term (the holder died), which is
//!   longer than the refresh it guards is allowed to take.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use oscova_agent::session::store::{SqliteFile, SqliteFileError};
use ring::rand::{SecureRandom, SystemRandom};
use rmcp::transport::auth::StoredCredentials;
use rusqlite::OptionalExtension;
use serde::{Deserialize, Serialize};

use super::key::TokenKey;

/// Where OAuth grants are kept: a SQLite file and the key sealing them.
///
/// Opened on first use. Clones share the file.
///
/// ```
/// use oscova_plugin_mcp::{TokenKey, TokenStore};
///
/// let key = TokenKey::parse(&"ab".repeat(32)).unwrap();
/// let store = TokenStore::new("/var/lib/oscova/sessions.db", key);
/// assert!(store.path().ends_with("sessions.db"));
/// ```
#[derive(Clone)]
pub struct TokenStore {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    key: TokenKey,
    file: tokio::sync::OnceCell<SqliteFile>,
}

impl std::fmt::Debug for TokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenStore")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
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
    /// A row the key cannot open.
    #[error(
        "a stored grant cannot be opened with this token key (was `OSCOVA_TOKEN_KEY` changed?); log in again, or restore the key"
    )]
    Sealed,
    /// Waiting for another holder's refresh took too long.
    #[error("another process has held the refresh of this grant for longer than {0:?}")]
    Busy(Duration),
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
);";

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}

impl TokenStore {
    /// The store in the SQLite file at `path` (created when missing),
    /// sealed with `key`. Nothing is opened until it is used.
    pub fn new(path: impl Into<PathBuf>, key: TokenKey) -> Self {
        Self {
            inner: Arc::new(Inner {
                path: path.into(),
                key,
                file: tokio::sync::OnceCell::new(),
            }),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    async fn file(&self) -> Result<&SqliteFile, TokenStoreError> {
        self.inner
            .file
            .get_or_try_init(|| async {
                let file = SqliteFile::open(self.inner.path.clone()).await?;
                file.write(|conn| {
                    conn.execute_batch(SCHEMA)?;
                    Ok::<_, TokenStoreError>(())
                })
                .await?;
                Ok::<_, TokenStoreError>(file)
            })
            .await
    }

    /// The grant kept for `place`: `None` when there is none, or it was
    /// got for another URL of the server.
    pub(crate) async fn load(&self, place: &Place) -> Result<Option<Grant>, TokenStoreError> {
        let file = self.file().await?;
        let (server, user) = (place.server.clone(), place.user_column());
        let row: Option<(String, Vec<u8>)> = file
            .read(move |conn| {
                conn.query_row(
                    "SELECT url, sealed FROM oscova_mcp_oauth_grants WHERE server = ?1 AND user_id = ?2",
                    (&server, &user),
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()
                .map_err(TokenStoreError::from)
            })
            .await?;
        let Some((url, sealed)) = row else {
            return Ok(None);
        };
        if url != place.url {
            return Ok(None);
        }
        let plain = self
            .inner
            .key
            .open(&place.aad(), &sealed)
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
        let file = self.file().await?;
        let (server, user, url) = (place.server.clone(), place.user_column(), place.url.clone());
        file.write(move |conn| {
            conn.execute(
                "INSERT INTO oscova_mcp_oauth_grants (server, user_id, url, sealed, updated_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (server, user_id) DO UPDATE SET
                     url = excluded.url, sealed = excluded.sealed, updated_ms = excluded.updated_ms",
                (&server, &user, &url, &sealed, now_ms()),
            )?;
            Ok::<_, TokenStoreError>(())
        })
        .await
    }

    /// Forgets `server`'s grant for `user` (`None`: the host's), whatever
    /// URL it was for; whether there was one.
    pub(crate) async fn remove(
        &self,
        server: &str,
        user: Option<&str>,
    ) -> Result<bool, TokenStoreError> {
        let file = self.file().await?;
        let (server, user) = (server.to_owned(), user.unwrap_or_default().to_owned());
        file.write(move |conn| {
            let gone = conn.execute(
                "DELETE FROM oscova_mcp_oauth_grants WHERE server = ?1 AND user_id = ?2",
                (&server, &user),
            )?;
            Ok::<_, TokenStoreError>(gone > 0)
        })
        .await
    }

    /// Takes the refresh lease of `place` for `term`, waiting at most
    /// `wait` for another holder.
    pub(crate) async fn lock(
        &self,
        place: &Place,
        term: Duration,
        wait: Duration,
    ) -> Result<Lease, TokenStoreError> {
        let file = self.file().await?.clone();
        let mut id = [0u8; 16];
        SystemRandom::new()
            .fill(&mut id)
            .map_err(|_| TokenStoreError::Busy(Duration::ZERO))?;
        let holder: String = id.iter().map(|b| format!("{b:02x}")).collect();
        let term_ms = i64::try_from(term.as_millis()).unwrap_or(i64::MAX);
        let deadline = Instant::now() + wait;
        loop {
            let (server, user, me) = (place.server.clone(), place.user_column(), holder.clone());
            let taken = file
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
                        (&server, &user, &me, now.saturating_add(term_ms)),
                    )?;
                    Ok(true)
                })
                .await?;
            if taken {
                return Ok(Lease {
                    file: Some(file),
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

/// A held refresh lease; let go by [`release`](Self::release), or, if
/// dropped, by a task (or, without a runtime, at the end of its term).
pub(crate) struct Lease {
    file: Option<SqliteFile>,
    place: Place,
    holder: String,
}

impl Lease {
    /// Lets go of the lease.
    pub(crate) async fn release(mut self) {
        if let Some(file) = self.file.take() {
            release(file, self.place.clone(), self.holder.clone()).await;
        }
    }
}

async fn release(file: SqliteFile, place: Place, holder: String) {
    let user = place.user_column();
    let _ = file
        .write(move |conn| {
            conn.execute(
                "DELETE FROM oscova_mcp_oauth_refresh WHERE server = ?1 AND user_id = ?2 AND holder = ?3",
                (&place.server, &user, &holder),
            )?;
            Ok::<_, TokenStoreError>(())
        })
        .await;
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(file) = self.file.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(release(file, self.place.clone(), self.holder.clone()));
        }
    }
}
