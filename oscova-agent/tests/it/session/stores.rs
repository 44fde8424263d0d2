//! Each store runs the conformance suite.

use std::sync::Arc;

use oscova_agent::session::{MemoryStore, SessionStore, SqliteStore};

use super::conformance;

#[tokio::test]
async fn memory_store_conforms() {
    conformance::run(|| async { Arc::new(MemoryStore::new()) as Arc<dyn SessionStore> }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_store_conforms() {
    let dir = tempfile::tempdir().unwrap();
    let counter = std::sync::atomic::AtomicUsize::new(0);
    conformance::run(|| {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir.path().join(format!("store-{n}/sessions.db"));
        async move { Arc::new(SqliteStore::open(path).await.unwrap()) as Arc<dyn SessionStore> }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_store_file_is_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data/oscova/sessions.db");
    let store = SqliteStore::open(&path).await.unwrap();
    assert!(path.exists());
    let conn = rusqlite_mode(&path);
    assert_eq!(conn, "wal");
    drop(store);
}

fn rusqlite_mode(path: &std::path::Path) -> String {
    // The journal mode is recorded in the file's header (bytes 18 and 19
    // are 2 in WAL mode).
    let bytes = std::fs::read(path).unwrap();
    if bytes[18] == 2 && bytes[19] == 2 {
        "wal".into()
    } else {
        "rollback".into()
    }
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_store_conforms() {
    use oscova_agent::session::PostgresStore;
    let cluster = oscova_test_support::postgres::Cluster::start();
    let counter = std::sync::atomic::AtomicUsize::new(0);
    conformance::run(|| {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let config = cluster.create_database(&format!("conformance_{n}"));
        async move {
            Arc::new(PostgresStore::connect(&config).await.unwrap()) as Arc<dyn SessionStore>
        }
    })
    .await;
}
