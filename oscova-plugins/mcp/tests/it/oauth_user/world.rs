//! What each case of the token store's conformance suite runs against:
//! the provider, the upstream, and a token store of the [`Kind`] asked
//! for, with the raw rows as someone holding the store would see and
//! alter them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use oscova_plugin_mcp::{McpPluginBuilder, TokenKey, TokenStore};
use oscova_test_support::oidc::OidcProvider;

use super::{builder, server, trusting};
use crate::oauth::{Upstream, any_port};

/// Which store the grants are kept in.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    /// The sessions' SQLite file.
    Sqlite,
    /// A database of its own on the suite's Postgres cluster.
    #[cfg(feature = "postgres")]
    Postgres,
}

/// The Postgres cluster the cases share (`None` until one needs it), so
/// the suite starts one, not one per case: each case takes a database of
/// its own on it ([`shared_database`]), and the cluster stops when the
/// last case holding it ends.
#[cfg(feature = "postgres")]
static CLUSTER: std::sync::Mutex<std::sync::Weak<oscova_test_support::postgres::Cluster>> =
    std::sync::Mutex::new(std::sync::Weak::new());

/// The suite's cluster (started if no case holds it) and a fresh database
/// on it, named for no other case: blocking, run it off the runtime.
#[cfg(feature = "postgres")]
pub(crate) fn shared_database() -> (Arc<oscova_test_support::postgres::Cluster>, String) {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let cluster = {
        let mut kept = CLUSTER
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match kept.upgrade() {
            Some(cluster) => cluster,
            None => {
                let cluster = Arc::new(oscova_test_support::postgres::Cluster::start());
                *kept = Arc::downgrade(&cluster);
                cluster
            }
        }
    };
    let name = format!("grants_{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let config = cluster.create_database(&name);
    (cluster, config)
}

/// Where the rows are.
enum Place {
    File(tempfile::TempDir),
    #[cfg(feature = "postgres")]
    Database {
        /// The suite's cluster, held while the case runs.
        _cluster: Arc<oscova_test_support::postgres::Cluster>,
        config: String,
    },
}

pub(crate) fn key() -> TokenKey {
    TokenKey::parse(&"5a".repeat(32)).expect("a key")
}

/// Everything a case needs: the provider, the upstream, a store.
pub(crate) struct World {
    pub(crate) provider: Arc<OidcProvider>,
    pub(crate) upstream: Upstream,
    place: Place,
}

/// One raw row: user, URL, sealed grant.
pub(crate) type RawRow = (String, String, Vec<u8>);

impl World {
    pub(crate) async fn new(kind: Kind) -> Self {
        Self::starting(kind, OidcProvider::start).await
    }

    /// A world whose provider is `provider` (started as a case needs).
    pub(crate) async fn with_provider(kind: Kind, provider: OidcProvider) -> Self {
        Self::starting(kind, move || provider).await
    }

    async fn starting(kind: Kind, provider: impl FnOnce() -> OidcProvider) -> Self {
        let place = match kind {
            Kind::Sqlite => Place::File(tempfile::tempdir().unwrap()),
            #[cfg(feature = "postgres")]
            Kind::Postgres => {
                let (cluster, config) = tokio::task::spawn_blocking(shared_database).await.unwrap();
                Place::Database {
                    _cluster: cluster,
                    config,
                }
            }
        };
        // The place first: a case holds the shared cluster while the
        // provider starts, so the one before it ending does not stop it.
        let provider = Arc::new(provider());
        let upstream = Upstream::start(any_port(), trusting(&provider)).await;
        Self {
            provider,
            upstream,
            place,
        }
    }

    /// The SQLite file, for a SQLite world.
    pub(crate) fn db(&self) -> Option<PathBuf> {
        match &self.place {
            Place::File(dir) => Some(dir.path().join("data").join("sessions.db")),
            #[cfg(feature = "postgres")]
            Place::Database { .. } => None,
        }
    }

    /// A store of its own on the one file or database (as another
    /// process has).
    pub(crate) fn store(&self) -> TokenStore {
        match &self.place {
            Place::File(_) => TokenStore::new(self.db().unwrap(), key()),
            #[cfg(feature = "postgres")]
            Place::Database { config, .. } => TokenStore::postgres(config, key()),
        }
    }

    pub(crate) fn builder(&self, client: Option<&str>) -> McpPluginBuilder {
        builder(
            server(&self.upstream.url, &self.provider, client),
            &self.store(),
        )
    }

    /// Runs `sql` (no parameters) on the store's database.
    pub(crate) async fn execute(&self, sql: &str) {
        match &self.place {
            Place::File(_) => {
                let conn = rusqlite::Connection::open(self.db().unwrap()).unwrap();
                conn.execute_batch(sql).unwrap();
            }
            #[cfg(feature = "postgres")]
            Place::Database { config, .. } => {
                connect(config).await.batch_execute(sql).await.unwrap();
            }
        }
    }

    /// Every grant row of server `up`.
    pub(crate) async fn rows(&self) -> Vec<RawRow> {
        const SELECT: &str = "SELECT user_id, url, sealed FROM oscova_mcp_oauth_grants WHERE server = 'up' ORDER BY user_id";
        match &self.place {
            Place::File(_) => {
                let conn = rusqlite::Connection::open(self.db().unwrap()).unwrap();
                let mut statement = conn.prepare(SELECT).unwrap();
                statement
                    .query_map((), |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect()
            }
            #[cfg(feature = "postgres")]
            Place::Database { config, .. } => connect(config)
                .await
                .query(SELECT, &[])
                .await
                .unwrap()
                .iter()
                .map(|row| (row.get(0), row.get(1), row.get(2)))
                .collect(),
        }
    }

    /// `user`'s row of server `up`.
    pub(crate) async fn row(&self, user: &str) -> RawRow {
        self.rows()
            .await
            .into_iter()
            .find(|row| row.0 == user)
            .unwrap_or_else(|| panic!("no row for {user}"))
    }

    /// Puts `row` back as server `up`'s (it must be gone).
    pub(crate) async fn insert(&self, (user, url, sealed): RawRow) {
        const INSERT: &str = "INSERT INTO oscova_mcp_oauth_grants (server, user_id, url, sealed, updated_ms) VALUES ('up', $1, $2, $3, 0)";
        match &self.place {
            Place::File(_) => {
                let conn = rusqlite::Connection::open(self.db().unwrap()).unwrap();
                conn.execute(&INSERT.replace('$', "?"), (&user, &url, &sealed))
                    .unwrap();
            }
            #[cfg(feature = "postgres")]
            Place::Database { config, .. } => {
                connect(config)
                    .await
                    .execute(INSERT, &[&user, &url, &sealed])
                    .await
                    .unwrap();
            }
        }
    }
}

/// A connection to the store's database, its driver spawned.
#[cfg(feature = "postgres")]
async fn connect(config: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(config, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

/// The mode bits of `path`.
pub(crate) fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}
