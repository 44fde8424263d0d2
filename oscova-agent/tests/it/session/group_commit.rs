//! Group commit in the SQLite file (`store/sqlite_file.rs`): writes queued
//! while one runs share the next transaction, a failing write fails alone,
//! and concurrent appends are all kept, in order, across a restart.

use std::sync::Arc;

use oscova_agent::session::store::{SqliteFile, SqliteFileError};
use oscova_agent::session::{Session, SessionStore, SqliteStore};
use oscova_core::UserInfo;
use oscova_core::provider::model::ChatMessage;

#[derive(Debug)]
enum Error {
    File(SqliteFileError),
    Sql(rusqlite::Error),
}

impl From<SqliteFileError> for Error {
    fn from(e: SqliteFileError) -> Self {
        Self::File(e)
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Self::Sql(e)
    }
}

async fn notes(path: &std::path::Path) -> SqliteFile {
    let file = SqliteFile::open(path).await.unwrap();
    file.write(|conn| {
        conn.execute_batch("CREATE TABLE IF NOT EXISTS notes (text TEXT PRIMARY KEY)")?;
        Ok::<_, Error>(())
    })
    .await
    .unwrap();
    file
}

fn insert(file: &SqliteFile, text: &str) -> tokio::task::JoinHandle<Result<(), Error>> {
    let (file, text) = (file.clone(), text.to_owned());
    tokio::spawn(async move {
        file.write(move |conn| {
            conn.execute("INSERT INTO notes (text) VALUES (?1)", [text])?;
            Ok(())
        })
        .await
    })
}

/// Starts a write that holds the writer until `release` is sent, and
/// returns once it runs: whatever is queued meanwhile is the next batch.
async fn hold(file: &SqliteFile) -> (std::sync::mpsc::Sender<()>, tokio::task::JoinHandle<()>) {
    let (release, held) = std::sync::mpsc::channel::<()>();
    let (running, started) = tokio::sync::oneshot::channel();
    let file = file.clone();
    let holder = tokio::spawn(async move {
        file.write(move |conn| {
            let _ = running.send(());
            let _ = held.recv();
            conn.execute("INSERT INTO notes (text) VALUES ('holder')", [])?;
            Ok::<_, Error>(())
        })
        .await
        .unwrap();
    });
    started.await.unwrap();
    (release, holder)
}

/// Lets every spawned task of this current-thread runtime run until it
/// waits (each `write` queues its work on its first poll).
async fn let_them_queue() {
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
}

fn kept(path: &std::path::Path) -> Vec<String> {
    // A connection of its own, as another process would read the file.
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut statement = conn
        .prepare("SELECT text FROM notes ORDER BY text")
        .unwrap();
    statement
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn writes_queued_while_one_commits_share_the_next_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.db");
    let file = notes(&path).await;
    let before = file.commits();
    let (release, holder) = hold(&file).await;
    let queued: Vec<_> = (0..20)
        .map(|n| insert(&file, &format!("n{n:02}")))
        .collect();
    let_them_queue().await;
    release.send(()).unwrap();
    holder.await.unwrap();
    for write in queued {
        write.await.unwrap().unwrap();
    }
    // The holder's transaction, then one for the twenty queued meanwhile.
    assert_eq!(file.commits() - before, 2);
    assert_eq!(kept(&path).len(), 21);
}

#[tokio::test(flavor = "current_thread")]
async fn a_failing_write_fails_alone_and_the_rest_of_its_batch_commits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.db");
    let file = notes(&path).await;
    insert(&file, "taken").await.unwrap().unwrap();
    let before = file.commits();
    let (release, holder) = hold(&file).await;
    let first = insert(&file, "first");
    // Inserts a row, then breaks the primary key: both are undone.
    let duplicate = {
        let file = file.clone();
        tokio::spawn(async move {
            file.write(|conn| {
                conn.execute("INSERT INTO notes (text) VALUES ('half')", [])?;
                conn.execute("INSERT INTO notes (text) VALUES ('taken')", [])?;
                Ok::<_, Error>(())
            })
            .await
        })
    };
    // A panicking write is undone too, and its caller hears of it.
    let panicking = {
        let file = file.clone();
        tokio::spawn(async move {
            file.write(|conn| -> Result<(), Error> {
                conn.execute("INSERT INTO notes (text) VALUES ('panicked')", [])?;
                panic!("a write's work panicked (on purpose)");
            })
            .await
        })
    };
    let last = insert(&file, "last");
    let_them_queue().await;
    release.send(()).unwrap();
    holder.await.unwrap();
    first.await.unwrap().unwrap();
    last.await.unwrap().unwrap();
    match duplicate.await.unwrap() {
        Err(Error::Sql(e)) => assert_eq!(
            e.sqlite_error_code(),
            Some(rusqlite::ErrorCode::ConstraintViolation)
        ),
        other => panic!("the duplicate's own error was expected, not {other:?}"),
    }
    assert!(
        matches!(
            panicking.await.unwrap(),
            Err(Error::File(SqliteFileError::Closed(_)))
        ),
        "the panicking write's caller hears that it ended"
    );
    assert_eq!(
        file.commits() - before,
        2,
        "the four shared one transaction"
    );
    assert_eq!(kept(&path), ["first", "holder", "last", "taken"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_appends_are_all_kept_in_order_across_a_restart() {
    const SESSIONS: usize = 40;
    const APPENDS: usize = 15;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let store = Arc::new(SqliteStore::open(&path).await.unwrap());
    let alice = UserInfo::new("alice");
    let mut writers = Vec::new();
    for s in 0..SESSIONS {
        let (store, alice) = (store.clone(), alice.clone());
        writers.push(tokio::spawn(async move {
            let shared: Arc<dyn SessionStore> = store;
            let mut session = Session::create(shared, alice, &format!("s{s:02}"))
                .await
                .unwrap();
            for n in 0..APPENDS {
                session
                    .append_chat(&[ChatMessage::user(format!("s{s:02} m{n:02}"))])
                    .await
                    .unwrap();
            }
        }));
    }
    for writer in writers {
        writer.await.unwrap();
    }
    let commits = store.file().commits();
    drop(store);

    // A new store on the file: the first one's writer has ended.
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).await.unwrap());
    let sessions = store.list(&alice).await.unwrap();
    assert_eq!(sessions.len(), SESSIONS);
    for s in 0..SESSIONS {
        let session = Session::open(store.clone(), alice.clone(), &format!("s{s:02}"))
            .await
            .unwrap();
        let texts: Vec<String> = session
            .context()
            .chat_messages()
            .into_iter()
            .map(|m| m.content)
            .collect();
        let expected: Vec<String> = (0..APPENDS).map(|n| format!("s{s:02} m{n:02}")).collect();
        assert_eq!(texts, expected, "session s{s:02}");
        assert_eq!(session.entries().len(), APPENDS);
    }
    // Every create and append was a write; each was answered after a
    // commit that held it.
    assert!(commits > 0 && commits <= (SESSIONS * (APPENDS + 1)) as u64);
}

#[tokio::test(flavor = "current_thread")]
async fn one_file_opened_twice_in_a_process_has_one_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let sessions = SqliteStore::open(&path).await.unwrap();
    // The same file by another spelling of its path.
    let again = notes(&dir.path().join(".").join("sessions.db")).await;
    let before = sessions.file().commits();
    insert(&again, "through the other handle")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(sessions.file().commits(), before + 1);
}
