//! A crash in the middle of an answer: `oscova chat --session` killed
//! with SIGKILL while the model's response is in flight, then resumed by
//! a second process.
//!
//! The promise under test (ARCHITECTURE.md, "Boundaries"): an entry is
//! durable once appended, a killed process loses at most the model
//! response in flight, and the store is never left corrupt. The user's
//! message is appended before the model is asked, so it survives; the
//! half-streamed answer was never final, so nothing of it is stored.
//!
//! Synchronisation is by what the process printed, not by sleeping: the
//! loopback model streams the first piece of its answer and then holds
//! the connection open without ending the body; the chat prints answer
//! text as it arrives, so once that text is on the child's stdout the
//! response is in flight in the process, and the test kills it there.

use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use oscova_test_support::http::{Framing, Reply, Request, TestServer};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt as _;

use crate::sessions::{
    chat, chat_process, json_of, pairs, sent, sqlite_config, sse_event, text_reply,
};

const KEY: &str = "sk-sessions-crash-0123456789abcdef";
const PARTIAL: &str = "Partial answer that the crash cuts short";

/// The first question gets a stream that starts and never ends; any other
/// message gets "Answer to <message>".
fn model(request: &Request) -> Reply {
    let said = request.json()["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    if said == "first question" {
        let piece = sse_event(json!({"role": "assistant", "content": PARTIAL}), None);
        return Reply::stream(
            "text/event-stream",
            Framing::Chunked,
            vec![piece.into_bytes()],
        )
        .hanging();
    }
    text_reply(&format!("Answer to {said}"))
}

/// Reads the child's stdout until `needle` appears; what was read.
async fn read_until(out: &mut tokio::process::ChildStdout, needle: &str) -> String {
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    let read = async {
        loop {
            let n = out.read(&mut buf).await.unwrap();
            assert!(
                n > 0,
                "stdout ended early: {:?}",
                String::from_utf8_lossy(&seen)
            );
            seen.extend_from_slice(&buf[..n]);
            if String::from_utf8_lossy(&seen).contains(needle) {
                return;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(60), read)
        .await
        .expect("the first piece of the answer within a minute");
    String::from_utf8(seen).unwrap()
}

/// `PRAGMA integrity_check`, and each stored entry's (type, role).
fn inspect(db: &Path) -> (String, Vec<(String, String)>) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    let mut statement = conn
        .prepare("SELECT body FROM oscova_session_entries ORDER BY seq")
        .unwrap();
    let entries = statement
        .query_map([], |row| row.get::<_, String>(0))
        .unwrap()
        .map(|body| {
            let entry: Value = serde_json::from_str(&body.unwrap()).unwrap();
            (
                entry["type"].as_str().unwrap_or_default().to_owned(),
                entry["message"]["role"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    (check, entries)
}

fn pair(kind: &str, role: &str) -> (String, String) {
    (kind.to_owned(), role.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_killed_mid_answer_keeps_the_question_and_resumes() {
    let config = sqlite_config();
    let db = config.parent().unwrap().join("sessions.db");
    let server = TestServer::start(model).await;
    let url = server.url();

    let mut first = chat_process(
        &config,
        &url,
        KEY,
        &["--session", "s", "-m", "first question"],
    );
    first.stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = first.spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let printed = read_until(&mut stdout, "Partial answer").await;
    assert_eq!(server.requests().len(), 1, "{printed}");

    // SIGKILL: no handler runs, nothing is flushed or rolled back.
    child.start_kill().unwrap();
    let status = child.wait().await.unwrap();
    assert_eq!(status.signal(), Some(9), "{status:?}");
    assert!(
        server.wait_dropped(Duration::from_secs(30)).await,
        "the killed process's connection was closed"
    );

    // The file opens whole; the question is there, no part of the answer.
    let (check, entries) = inspect(&db);
    assert_eq!(check, "ok");
    assert_eq!(entries, [pair("message", "user")]);
    let (code, shown) = json_of(&config, &["sessions", "show", "s"]);
    assert_eq!(code, 0, "{shown}");
    let stored = shown["entries"].as_array().unwrap();
    assert_eq!(stored.len(), 1, "{shown}");
    assert_eq!(shown["leaf"], stored[0]["id"]);
    assert!(!shown.to_string().contains(PARTIAL), "{shown}");

    // A second process resumes: the model is sent the first question, and
    // the answer to the second is appended after it.
    let (code, out, err) = chat(
        &config,
        &server,
        &["--session", "s", "-m", "second question"],
    )
    .await;
    assert_eq!(code, 0, "{out}\n{err}");
    let outcome: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(outcome["answer"], "Answer to second question");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        sent(&requests[1]),
        pairs(&[("user", "first question"), ("user", "second question")])
    );

    let (check, entries) = inspect(&db);
    assert_eq!(check, "ok");
    assert_eq!(
        entries,
        [
            pair("message", "user"),
            pair("message", "user"),
            pair("message", "assistant")
        ]
    );
    let (_, shown) = json_of(&config, &["sessions", "show", "s"]);
    let stored = shown["entries"].as_array().unwrap();
    assert_eq!(stored.len(), 3, "{shown}");
    for link in stored.windows(2) {
        assert_eq!(link[1]["parent_id"], link[0]["id"], "{shown}");
    }
    assert_eq!(shown["leaf"], stored[2]["id"]);
    assert!(!format!("{out}{err}{shown}").contains(KEY));
}
