//! Two real processes writing one session: this test binary runs itself
//! again as the second writer (`second_writer`, ignored unless asked for),
//! on SQLite (one file) and on Postgres (one throwaway cluster).
//!
//! First a planned conflict: both processes read the session, the parent
//! appends, then the child appends against the leaf it read and must be
//! refused, keep nothing, resume and append on top. Then both append
//! `ROUNDS` messages at once, each resuming whenever refused. In the end
//! the session is one unbroken chain holding every message of both.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;

use oscova_agent::session::{Session, SessionStore};
use oscova_core::UserInfo;
use oscova_core::provider::model::ChatMessage;

const ROUNDS: usize = 25;
const STORE_VAR: &str = "OSCOVA_SESSION_SECOND_WRITER";

async fn open_store(spec: &str) -> Arc<dyn SessionStore> {
    match spec.split_once(':') {
        Some(("sqlite", path)) => Arc::new(
            oscova_agent::session::SqliteStore::open(path)
                .await
                .unwrap(),
        ),
        #[cfg(feature = "postgres")]
        Some(("postgres", config)) => Arc::new(
            oscova_agent::session::PostgresStore::connect(config)
                .await
                .unwrap(),
        ),
        _ => panic!("unknown store {spec:?}"),
    }
}

/// Appends `text`, resuming and trying again whenever another writer came
/// first; returns how many times it was refused.
async fn append_until_kept(session: &mut Session, text: &str) -> usize {
    let mut refused = 0;
    loop {
        match session.append_chat(&[ChatMessage::user(text)]).await {
            Ok(_) => return refused,
            Err(e) if e.is_conflict() => {
                refused += 1;
                session.resume().await.unwrap();
            }
            Err(e) => panic!("{e}"),
        }
    }
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "WRITER {line}").unwrap();
    out.flush().unwrap();
}

async fn read_line() -> String {
    tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).unwrap();
        line.trim().to_owned()
    })
    .await
    .unwrap()
}

/// The second writer, run by the tests below in a process of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the second writer of the two-process tests; they run it"]
async fn second_writer() {
    let spec = std::env::var(STORE_VAR).expect("run by the two-process tests");
    let store = open_store(&spec).await;
    let mut session = Session::open(store, UserInfo::new("alice"), "shared")
        .await
        .unwrap();
    say("ready");
    assert_eq!(read_line().await, "go");
    match session
        .append_chat(&[ChatMessage::user("child first")])
        .await
    {
        Ok(_) => say("kept"),
        Err(e) if e.is_conflict() => {
            say("conflict");
            assert_eq!(
                session.entries().len(),
                2,
                "the refused write changed the handle"
            );
            session.resume().await.unwrap();
            session
                .append_chat(&[ChatMessage::user("child first")])
                .await
                .unwrap();
            say("kept after resume");
        }
        Err(e) => panic!("{e}"),
    }
    assert_eq!(read_line().await, "race");
    let mut refused = 0;
    for i in 0..ROUNDS {
        refused += append_until_kept(&mut session, &format!("child {i}")).await;
    }
    say(&format!("done {refused}"));
}

struct Writer {
    child: std::process::Child,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl Writer {
    fn start(spec: &str) -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "session::processes::second_writer",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(STORE_VAR, spec)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self { child, lines }
    }

    /// The next line the writer said (blocking: the child answers fast).
    fn heard(&mut self) -> String {
        for line in self.lines.by_ref() {
            // libtest may print `test name ... ` before it on the same line.
            if let Some((_, said)) = line.unwrap().split_once("WRITER ") {
                return said.to_owned();
            }
        }
        panic!("the second writer ended early: {:?}", self.child.wait());
    }

    fn tell(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }
}

async fn two_writers(spec: String) {
    let store = open_store(&spec).await;
    let alice = UserInfo::new("alice");
    let mut mine = Session::create(store.clone(), alice.clone(), "shared")
        .await
        .unwrap();
    mine.append_chat(&[ChatMessage::user("hello")])
        .await
        .unwrap();
    mine.append_chat(&[ChatMessage::assistant("hi", vec![])])
        .await
        .unwrap();

    let mut writer = tokio::task::spawn_blocking({
        let spec = spec.clone();
        move || {
            let mut writer = Writer::start(&spec);
            assert_eq!(writer.heard(), "ready");
            writer
        }
    })
    .await
    .unwrap();
    // Both read the session at the same leaf; this process writes first.
    mine.append_chat(&[ChatMessage::user("parent first")])
        .await
        .unwrap();
    let mut writer = tokio::task::spawn_blocking(move || {
        writer.tell("go");
        assert_eq!(writer.heard(), "conflict");
        assert_eq!(writer.heard(), "kept after resume");
        writer.tell("race");
        writer
    })
    .await
    .unwrap();

    mine.resume().await.unwrap();
    let mut refused = 0;
    for i in 0..ROUNDS {
        refused += append_until_kept(&mut mine, &format!("parent {i}")).await;
    }
    let (said, status) = tokio::task::spawn_blocking(move || {
        let said = writer.heard();
        (said, writer.child.wait().unwrap())
    })
    .await
    .unwrap();
    assert!(status.success(), "the second writer failed: {status}");
    let child_refused: usize = said.strip_prefix("done ").unwrap().parse().unwrap();
    println!("conflicts during the race: parent {refused}, child {child_refused}");

    // Read back through a fresh store: one unbroken chain, nothing lost.
    let store = open_store(&spec).await;
    let session = Session::open(store, alice, "shared").await.unwrap();
    let entries = session.entries();
    assert_eq!(entries.len(), 4 + 2 * ROUNDS);
    assert_eq!(session.info().entry_count, entries.len() as u64);
    assert!(entries[0].parent_id.is_none());
    for pair in entries.windows(2) {
        assert_eq!(
            pair[1].parent_id.as_ref(),
            Some(&pair[0].id),
            "a broken chain"
        );
    }
    assert_eq!(session.leaf(), Some(&entries[entries.len() - 1].id));
    assert_eq!(session.tree().branches().len(), 1);
    let texts: Vec<String> = session
        .context()
        .chat_messages()
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert_eq!(texts.len(), entries.len());
    assert_eq!(&texts[..4], ["hello", "hi", "parent first", "child first"]);
    for i in 0..ROUNDS {
        let (p, c) = (format!("parent {i}"), format!("child {i}"));
        assert_eq!(texts.iter().filter(|t| **t == p).count(), 1, "{p}");
        assert_eq!(texts.iter().filter(|t| **t == c).count(), 1, "{c}");
    }
    // Each writer's own messages stay in its order.
    let order = |prefix: &str| -> Vec<String> {
        texts
            .iter()
            .filter(|t| {
                t.strip_prefix(prefix)
                    .is_some_and(|n| n.parse::<usize>().is_ok())
            })
            .cloned()
            .collect()
    };
    let expected =
        |prefix: &str| -> Vec<String> { (0..ROUNDS).map(|i| format!("{prefix}{i}")).collect() };
    assert_eq!(order("parent "), expected("parent "));
    assert_eq!(order("child "), expected("child "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_write_one_sqlite_session() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    two_writers(format!("sqlite:{}", path.display())).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_write_one_postgres_session() {
    let cluster = oscova_test_support::postgres::Cluster::start();
    let config = cluster.create_database("two_writers");
    two_writers(format!("postgres:{config}")).await;
}
