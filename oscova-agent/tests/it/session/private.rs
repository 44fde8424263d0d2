//! The SQLite file is its owner's alone (issue 36): made 0600 in folders
//! made 0700 whatever the umask, its side files too, and a file or side
//! file open to others refused, not repaired.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use oscova_agent::session::store::SqliteFileError;
use oscova_agent::session::{Session, SessionError, SessionStore, SqliteStore};
use oscova_core::UserInfo;
use oscova_core::fs::{FileError, FileKind};
use oscova_core::provider::model::ChatMessage;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn side(db: &Path, suffix: &str) -> PathBuf {
    let mut side = db.as_os_str().to_owned();
    side.push(suffix);
    PathBuf::from(side)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The refusal inside a store's error.
fn refusal(error: &SessionError) -> (&Path, &FileError) {
    let SessionError::Backend { source, .. } = error else {
        panic!("not a back end error: {error:?}");
    };
    match source.downcast_ref::<SqliteFileError>() {
        Some(SqliteFileError::NotPrivate { path, source }) => (path, source),
        other => panic!("not refused as not private: {other:?}"),
    }
}

/// A store in `data/oscova/sessions.db` under a fresh folder, with a
/// session written, so the write-ahead log and its index exist; every
/// folder made, the file and its side files are private.
fn made_private_under_the_umask() {
    let base = tempfile::tempdir().unwrap();
    let db = base.path().join("data/oscova/sessions.db");
    runtime().block_on(async {
        let store = Arc::new(SqliteStore::open(&db).await.unwrap());
        let mut session = Session::open_or_create(store.clone(), UserInfo::new("alice"), "trip")
            .await
            .unwrap();
        session
            .append_chat(&[ChatMessage::user("my webhook's token is secret")])
            .await
            .unwrap();
        for dir in ["data", "data/oscova"] {
            assert_eq!(mode(&base.path().join(dir)), 0o700, "{dir}");
        }
        assert_eq!(mode(&db), 0o600);
        // SQLite made these while the store is open (WAL mode).
        for suffix in ["-wal", "-shm"] {
            assert_eq!(mode(&side(&db, suffix)), 0o600, "{suffix}");
        }
        drop(session);
        drop(store);
    });
}

#[test]
fn a_store_made_under_umask_022_is_private() {
    oscova_test_support::umask::run(
        "session::private::a_store_made_under_umask_022_is_private",
        0o022,
        made_private_under_the_umask,
    );
}

#[test]
fn a_store_made_under_umask_000_is_private() {
    oscova_test_support::umask::run(
        "session::private::a_store_made_under_umask_000_is_private",
        0o000,
        made_private_under_the_umask,
    );
}

/// `sessions.db` left 0644 by an earlier version: refused with the file
/// and the fix named, its mode untouched; once the operator ran the
/// `chmod`, it opens with what it held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_database_is_refused_not_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    let alice = UserInfo::new("alice");
    let store = SqliteStore::open(&db).await.unwrap();
    store.create(&alice, "kept").await.unwrap();
    drop(store);
    for open in [0o644, 0o640, 0o604, 0o660] {
        chmod(&db, open);
        let error = SqliteStore::open(&db).await.unwrap_err();
        let (path, why) = refusal(&error);
        assert_eq!(path, db);
        assert!(
            matches!(why, FileError::Exposed { path, mode } if *path == db && *mode == open),
            "{why:?}"
        );
        let text = error.to_string();
        assert!(
            text.contains(&db.display().to_string())
                && text.contains(&format!("mode {open:04o}"))
                && text.contains("chmod go-rwx"),
            "{text}"
        );
        assert_eq!(mode(&db), open, "refused, not repaired");
    }
    chmod(&db, 0o600);
    let store = SqliteStore::open(&db).await.unwrap();
    assert_eq!(store.list(&alice).await.unwrap()[0].name, "kept");
}

/// A `-wal`, `-shm` or `-journal` file open to others (left by a run
/// before the database was made private) is refused by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_side_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    // The database made by hand and never opened before the refusals: a
    // store's writer keeps `-shm` mapped while it lives (it outlives the
    // handle dropped here), and rewriting a mapped file under it is a
    // SIGBUS for the whole test binary, not the refusal under test.
    std::fs::write(&db, "").unwrap();
    chmod(&db, 0o600);
    for suffix in ["-wal", "-shm", "-journal"] {
        let leftover = side(&db, suffix);
        std::fs::write(&leftover, "").unwrap();
        chmod(&leftover, 0o644);
        let error = SqliteStore::open(&db).await.unwrap_err();
        let (path, why) = refusal(&error);
        assert_eq!(path, db);
        assert!(
            matches!(why, FileError::Exposed { path, mode: 0o644 } if *path == leftover),
            "{suffix}: {why:?}"
        );
        assert!(error.to_string().contains(&leftover.display().to_string()));
        std::fs::remove_file(&leftover).unwrap();
    }
    drop(SqliteStore::open(&db).await.unwrap());
}

/// A FIFO where the database should be is refused at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_as_the_database_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    let made = std::process::Command::new("mkfifo")
        .arg(&db)
        .status()
        .unwrap();
    assert!(made.success());
    chmod(&db, 0o600);
    // A hang detector, not a timing.
    let error = tokio::time::timeout(Duration::from_secs(30), SqliteStore::open(&db))
        .await
        .expect("opening a FIFO as the database hung")
        .unwrap_err();
    assert!(
        matches!(
            refusal(&error).1,
            FileError::NotRegular {
                kind: FileKind::Fifo
            }
        ),
        "{error}"
    );
}
