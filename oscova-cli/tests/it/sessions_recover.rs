//! A crash in the middle of a tool call: `oscova chat --session` killed
//! with SIGKILL while a tool with an effect outside the process runs, then
//! started again on the same session.
//!
//! The promise under test (issue 38, "each approved call runs at most
//! once"): the session agent commits a call's started mark before the
//! tool runs; a call found started without a result is never run again on
//! its own, the session says it was interrupted, and the model is told.
//!
//! The tool is the web fetch (linked into `oscova`), let reach a loopback
//! server by `[network] allow`; the server records each request and never
//! answers, so the fetch holds until the process is killed, and a second
//! run of the call would be a second request. Synchronisation is by what
//! the store and the server saw, not by sleeping a guessed time: the test
//! kills the process once the started mark is in the SQLite file and the
//! request reached the server.

use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use oscova_test_support::http::{Reply, Request, TestServer};
use serde_json::{Value, json};

use crate::sessions::{
    call_reply, chat, chat_process, config_with, json_of, pairs, sent, text_reply,
};

const FETCH: &str = "oscova_web__web__fetch";
const KEY: &str = "sk-sessions-recover-0123456789abcdef";
const ASK: &str = "pay the rent";

/// "pay the rent" gets a call of the fetch on `target`; anything after a
/// tool message gets "Told: <it>"; any other message "Answer to <it>".
fn model(request: &Request, target: &str) -> Reply {
    let last = request.json()["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .unwrap_or(Value::Null);
    let said = last["content"].as_str().unwrap_or_default();
    if last["role"] == "tool" {
        return text_reply(&format!("Told: {said}"));
    }
    if said != ASK {
        return text_reply(&format!("Answer to {said}"));
    }
    let arguments = json!({"url": target, "timeout_secs": 120}).to_string();
    call_reply(FETCH, &arguments)
}

/// Each stored entry's line, in append order (`PRAGMA integrity_check`
/// first).
fn stored(db: &Path) -> Vec<Value> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let mut statement = conn
        .prepare("SELECT body FROM oscova_session_entries ORDER BY seq")
        .unwrap();
    statement
        .query_map([], |row| row.get::<_, String>(0))
        .unwrap()
        .map(|body| serde_json::from_str(&body.unwrap()).unwrap())
        .collect()
}

/// `message user`, `message assistant`, `custom oscova.call_started`, ...
fn shapes(entries: &[Value]) -> Vec<String> {
    entries
        .iter()
        .map(|e| {
            let kind = e["type"].as_str().unwrap_or_default();
            let what = e["message"]["role"]
                .as_str()
                .or(e["customType"].as_str())
                .unwrap_or_default();
            format!("{kind} {what}")
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_killed_mid_call_does_not_run_it_again_and_says_it_was_interrupted() {
    let effect = TestServer::start(|_| Reply::silent()).await;
    let config = config_with(&format!(
        "path = \"sessions.db\"\n\n[network]\nallow = [\"127.0.0.1:{}\"]",
        effect.port()
    ));
    let db = config.parent().unwrap().join("sessions.db");
    let target = format!("{}/pay?amount=10", effect.url());
    let server = TestServer::start(move |request| model(request, &target)).await;
    let url = server.url();

    let mut first = chat_process(&config, &url, KEY, &["--session", "s", "-m", ASK]);
    first.stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = first.spawn().unwrap();

    // The fetch is under way: its request reached the server, and the
    // call's started mark was committed before it.
    let started = async {
        loop {
            if !effect.requests().is_empty() && db.exists() {
                let entries = stored(&db);
                if entries
                    .iter()
                    .any(|e| e["customType"] == "oscova.call_started")
                {
                    return entries;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let entries = tokio::time::timeout(Duration::from_secs(60), started)
        .await
        .expect("the call's started mark in the store within a minute");
    assert_eq!(
        shapes(&entries),
        [
            "message user",
            "message assistant",
            "custom oscova.call_started"
        ]
    );
    assert_eq!(
        entries[2]["data"],
        json!({"toolCallId": "call_1", "toolName": FETCH})
    );

    // SIGKILL: no handler runs, nothing is flushed or rolled back.
    child.start_kill().unwrap();
    let status = child.wait().await.unwrap();
    assert_eq!(status.signal(), Some(9), "{status:?}");
    assert!(
        effect.wait_dropped(Duration::from_secs(30)).await,
        "the killed process's fetch was dropped"
    );
    assert_eq!(shapes(&stored(&db)).len(), 3, "nothing kept after the kill");

    // Started again on the same session: the batch is settled before the
    // message, the fetch is not sent again.
    let (code, out, err) = chat(
        &config,
        &server,
        &["--session", "s", "-m", "did it go through?"],
    )
    .await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(effect.requests().len(), 1, "the call did not run again");
    let outcome: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(outcome["answer"], "Answer to did it go through?");
    let calls = outcome["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1, "{outcome}");
    assert_eq!(calls[0]["id"], "call_1");
    assert_eq!(calls[0]["name"], FETCH);
    assert_eq!(calls[0]["result"]["details"]["error"], "interrupted");

    // The session holds the interrupted answer, where the result belonged.
    let entries = stored(&db);
    assert_eq!(
        shapes(&entries),
        [
            "message user",
            "message assistant",
            "custom oscova.call_started",
            "message toolResult",
            "message user",
            "message assistant"
        ]
    );
    let answer = &entries[3]["message"];
    assert_eq!(answer["toolCallId"], "call_1");
    assert_eq!(answer["toolName"], FETCH);
    assert_eq!(answer["isError"], true);
    assert_eq!(answer["details"], json!({"error": "interrupted"}));
    let text = answer["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("interrupted:") && text.contains("not run again"),
        "{text}"
    );

    // And the model was told, before the new message.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        sent(&requests[1]),
        pairs(&[
            ("user", ASK),
            ("assistant", ""),
            ("tool", text),
            ("user", "did it go through?"),
        ])
    );
    let (code, shown) = json_of(&config, &["sessions", "show", "s"]);
    assert_eq!(code, 0, "{shown}");
    assert_eq!(shown["entries"].as_array().unwrap().len(), 6, "{shown}");
    assert!(!format!("{out}{err}{shown}").contains(KEY));
}
