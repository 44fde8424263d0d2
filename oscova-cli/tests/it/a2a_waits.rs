//! An A2A task in `INPUT_REQUIRED` kept in the `[sessions]` store (issue
//! 38): real `oscova serve` processes on 127.0.0.1 (`mcp_waits`'s
//! [`Serve`]), an OpenAI-compatible model on 127.0.0.1 that calls a tool of
//! `[mcp.servers.ledger]` (`a2a_waits_server.py`, the MCP Python SDK),
//! whose question (an elicitation, forwarded) puts the task in
//! `INPUT_REQUIRED`; the tool appends a line to a file once confirmed, so
//! the file counts the runs that took effect. The client is plain HTTP
//! JSON-RPC (A2A 1.0), as the SDK tests' scenarios are.
//!
//! One SQLite file across a `kill -9`: the answer sent to the next process
//! completes the task, the idempotent `settle` running once; the
//! non-idempotent `pay`, which had started when its process died, is
//! reported interrupted and never runs; Bob's message cannot reach
//! Alice's task; a second answer finds nothing to answer. Two instances on
//! one throwaway Postgres: asked on one, answered through the other, run
//! once. A wait past its expiry when its process died is swept by the
//! next process: the task ends `FAILED` with `expired:`, nothing run, and
//! a late answer finds nothing to answer.
//!
//! A scope tool that requires approval (the files plugin's `write`,
//! appending a line to Alice's `paid.txt`, so the file counts its runs)
//! is approved by the A2A client: its approval is the task's
//! `INPUT_REQUIRED` question, kept in the session and the store; across a
//! `kill -9`, the client's yes to the next process runs it exactly once,
//! and a no refuses it, nothing written. With `[serve.a2a] input_wait_secs
//! = 1` an approval nobody answers ends the task `FAILED`, `expired:`, a
//! second later, the tool unrun; a value outside 1 to 2592000 stops
//! `oscova serve` with exit code 2, naming the key.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use oscova_test_support::http::{Reply, Request, TestServer};
use serde_json::{Value, json};

use crate::mcp_waits::{Serve, start};
use crate::sessions::{call_reply, text_reply};
use crate::support;

const ALICE: &str = "alice-a2a-waits-token";
const BOB: &str = "bob-a2a-waits-token";
const SETTLE: &str = "oscova_mcp__ledger__settle";
const PAY: &str = "oscova_mcp__ledger__pay";
const WRITE: &str = "oscova_files__files__write";

/// "settle inv-7" calls `settle`, "pay bob" calls `pay`, "write paid"
/// calls the files plugin's `write` (appending to `paid.txt`); after a
/// tool message the answer is "Told: <it>".
fn model(request: &Request) -> Reply {
    let last = request.json()["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .unwrap_or(Value::Null);
    let said = last["content"].as_str().unwrap_or_default();
    if last["role"] == "tool" {
        return text_reply(&format!("Told: {said}"));
    }
    match said {
        "settle inv-7" => call_reply(SETTLE, r#"{"invoice": "inv-7"}"#),
        "pay bob" => call_reply(PAY, r#"{"to": "bob"}"#),
        "write paid" => call_reply(
            WRITE,
            r#"{"path": "paid.txt", "content": "paid\n", "mode": "append"}"#,
        ),
        other => text_reply(&format!("Answer to {other}")),
    }
}

/// A directory with the config for `oscova serve` (Alice's and Bob's
/// tokens, the model at `model`, the ledger server writing to
/// `ledger/`, `sessions` as `[sessions]`): (config path, ledger dir).
fn setup(name: &str, model: &str, sessions: &str) -> (String, PathBuf, PathBuf) {
    let dir = support::temp_dir(name);
    let ledger = dir.join("ledger");
    let files = dir.join("files");
    std::fs::create_dir_all(&ledger).unwrap();
    std::fs::create_dir_all(&files).unwrap();
    let python = oscova_test_support::python::mcp_python();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/a2a_waits_server.py");
    let hash = oscova_mcp::http::token_sha256_hex;
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[[mcp.tokens]]\nuser = \"alice\"\nsha256 = \"{}\"\n\n\
             [[mcp.tokens]]\nuser = \"bob\"\nsha256 = \"{}\"\n\n\
             [providers.openai]\nendpoint = \"{model}\"\nmodel = \"gpt-test\"\n\n\
             [a2a]\nprovider = \"openai\"\n\n\
             [mcp.servers.ledger]\ncommand = {python:?}\nargs = [{script:?}, {ledger:?}]\n\
             elicitation = \"forward\"\napproval = \"not_required\"\n\n\
             [sessions]\n{sessions}\n",
            hash(ALICE),
            hash(BOB),
            python = python.display().to_string(),
            script = script.display().to_string(),
            ledger = ledger.display().to_string(),
        ),
    )
    .unwrap();
    (config.to_str().unwrap().to_owned(), ledger, files)
}

/// The A2A JSON-RPC endpoint of `serve`.
fn a2a(serve: &Serve) -> String {
    serve.url.trim_end_matches("/mcp").to_owned() + "/"
}

/// One A2A 1.0 JSON-RPC call by `token`'s user: the JSON-RPC answer.
async fn rpc(url: &str, token: &str, method: &str, params: Value) -> Value {
    static ID: AtomicUsize = AtomicUsize::new(1);
    let body = json!({
        "jsonrpc": "2.0",
        "id": ID.fetch_add(1, Ordering::Relaxed),
        "method": method,
        "params": params,
    });
    let response = reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// A blocking `SendMessage` of `text` (naming `task` when it answers one).
async fn send(url: &str, token: &str, text: &str, task: Option<&str>) -> Value {
    static N: AtomicUsize = AtomicUsize::new(1);
    let mut message = json!({
        "messageId": format!("m-{}", N.fetch_add(1, Ordering::Relaxed)),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    });
    if let Some(task) = task {
        message["taskId"] = json!(task);
    }
    rpc(url, token, "SendMessage", json!({"message": message})).await
}

/// The task of an answer that asks `question`: its id.
fn asked(answer: &Value, question: &str) -> String {
    let task = &answer["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{answer}"
    );
    let text = task["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains(question), "{answer}");
    task["id"].as_str().unwrap().to_owned()
}

/// The form's answer: confirmed.
const YES: &str = r#"{"confirm": true}"#;

/// The lines of `name` in the ledger: the runs that took effect.
fn runs(ledger: &Path, name: &str) -> usize {
    std::fs::read_to_string(ledger.join(name)).map_or(0, |t| t.lines().count())
}

/// The waits kept in the SQLite file `db`.
fn kept(db: &Path) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("SELECT COUNT(*) FROM a2a_waits", [], |row| row.get(0))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_input_required_task_survives_a_kill_and_its_answer_completes_it_once() {
    let model = TestServer::start(model).await;
    let dir = support::temp_dir("a2a-waits-db");
    let db = dir.join("sessions.db");
    let (config, ledger, files) = setup(
        "a2a-waits-restart",
        &model.url(),
        &format!("path = \"{}\"", db.display()),
    );
    let first = start(&config, &files).await;
    let task = asked(
        &send(&a2a(&first), ALICE, "settle inv-7", None).await,
        "Settle invoice inv-7?",
    );
    assert_eq!(
        kept(&db),
        1,
        "the wait was kept before the question went out"
    );
    first.kill();

    let next = start(&config, &files).await;
    let url = a2a(&next);
    // Bob's answer reaches no task, and leaves Alice's waiting.
    let bobs = send(&url, BOB, YES, Some(&task)).await;
    assert_eq!(bobs["error"]["code"], -32001, "{bobs}");
    assert_eq!(kept(&db), 1);

    let done = send(&url, ALICE, YES, Some(&task)).await;
    let finished = &done["result"]["task"];
    assert_eq!(
        finished["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    assert_eq!(
        finished["artifacts"][0]["parts"][0]["text"], "Told: settled inv-7",
        "{done}"
    );
    assert_eq!(runs(&ledger, "settled.txt"), 1, "{done}");
    assert_eq!(kept(&db), 0);

    // One answer per question.
    let again = send(&url, ALICE, YES, Some(&task)).await;
    assert_eq!(again["error"]["code"], -32004, "{again}");
    assert_eq!(runs(&ledger, "settled.txt"), 1);
    let got = rpc(&url, ALICE, "GetTask", json!({"id": task})).await;
    assert_eq!(got["result"]["status"]["state"], "TASK_STATE_COMPLETED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_started_call_that_is_not_idempotent_is_reported_interrupted_after_a_kill() {
    let model = TestServer::start(model).await;
    let dir = support::temp_dir("a2a-waits-db");
    let db = dir.join("sessions.db");
    let (config, ledger, files) = setup(
        "a2a-waits-interrupted",
        &model.url(),
        &format!("path = \"{}\"", db.display()),
    );
    let first = start(&config, &files).await;
    let task = asked(
        &send(&a2a(&first), ALICE, "pay bob", None).await,
        "Pay bob?",
    );
    first.kill();

    let next = start(&config, &files).await;
    let done = send(&a2a(&next), ALICE, YES, Some(&task)).await;
    let finished = &done["result"]["task"];
    assert_eq!(
        finished["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    let report = finished["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        report.starts_with(&format!("`{PAY}`: interrupted:")),
        "{done}"
    );
    let told = finished["artifacts"][0]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(told.starts_with("Told: interrupted:"), "{done}");
    assert_eq!(runs(&ledger, "paid.txt"), 0, "never run again: {done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_past_its_expiry_is_swept_at_start_and_the_task_ends_failed() {
    let model = TestServer::start(model).await;
    let dir = support::temp_dir("a2a-waits-db");
    let db = dir.join("sessions.db");
    let (config, ledger, files) = setup(
        "a2a-waits-expired",
        &model.url(),
        &format!("path = \"{}\"", db.display()),
    );
    let first = start(&config, &files).await;
    let task = asked(
        &send(&a2a(&first), ALICE, "settle inv-7", None).await,
        "Settle invoice inv-7?",
    );
    first.kill();

    // The wait's expiry moved to a minute ago, as if nobody had answered
    // for a day.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let moved = conn
        .execute(
            "UPDATE a2a_waits SET expires_at = CAST(strftime('%s','now') AS INTEGER) * 1000 - 60000, \
             wait = json_set(wait, '$.expiresAt', CAST(strftime('%s','now') AS INTEGER) * 1000 - 60000) \
             WHERE task_id = ?1",
            [&task],
        )
        .unwrap();
    assert_eq!(moved, 1);
    drop(conn);

    // The next process sweeps the expired wait as it starts: the task
    // ends FAILED, saying so, before anyone answers.
    let next = start(&config, &files).await;
    let url = a2a(&next);
    let mut status = Value::Null;
    for _ in 0..100 {
        let got = rpc(&url, ALICE, "GetTask", json!({"id": task})).await;
        status = got["result"]["status"].clone();
        if status["state"] != "TASK_STATE_INPUT_REQUIRED" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status["state"], "TASK_STATE_FAILED", "{status}");
    let text = status["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.starts_with("expired:"), "{status}");
    assert!(text.contains(SETTLE), "{status}");
    assert_eq!(kept(&db), 0);
    // Too late: the answer finds nothing to answer, and nothing ran.
    let late = send(&url, ALICE, YES, Some(&task)).await;
    assert_eq!(late["error"]["code"], -32004, "{late}");
    assert_eq!(runs(&ledger, "settled.txt"), 0);
}

#[cfg(feature = "sessions-postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_asked_on_one_instance_is_answered_through_another_and_runs_once() {
    let cluster = oscova_test_support::postgres::Cluster::start();
    cluster.create_database("a2a_waits");
    let model = TestServer::start(model).await;
    let (config, ledger, files) = setup(
        "a2a-waits-fleet",
        &model.url(),
        &format!(
            "store = \"postgres\"\nurl = \"postgres://postgres@127.0.0.1:{}/a2a_waits\"",
            cluster.port()
        ),
    );
    let a = start(&config, &files).await;
    let b = start(&config, &files).await;
    let task = asked(
        &send(&a2a(&a), ALICE, "settle inv-7", None).await,
        "Settle invoice inv-7?",
    );
    // Bob, on either instance, reaches no task.
    for serve in [&a, &b] {
        let bobs = send(&a2a(serve), BOB, YES, Some(&task)).await;
        assert_eq!(bobs["error"]["code"], -32001, "{bobs}");
    }

    let done = send(&a2a(&b), ALICE, YES, Some(&task)).await;
    let finished = &done["result"]["task"];
    assert_eq!(
        finished["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    assert_eq!(
        finished["artifacts"][0]["parts"][0]["text"], "Told: settled inv-7",
        "{done}"
    );
    assert_eq!(runs(&ledger, "settled.txt"), 1, "{done}");

    // One answer per question, across the fleet; the instance that asked
    // gave way and wrote nothing over the answer's result.
    for serve in [&a, &b] {
        let again = send(&a2a(serve), ALICE, YES, Some(&task)).await;
        assert_eq!(again["error"]["code"], -32004, "{again}");
    }
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let got = rpc(&a2a(&a), ALICE, "GetTask", json!({"id": task})).await;
    assert_eq!(
        got["result"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{got}"
    );
    assert_eq!(
        got["result"]["artifacts"][0]["parts"][0]["text"], "Told: settled inv-7",
        "{got}"
    );
    assert_eq!(runs(&ledger, "settled.txt"), 1);
    drop((a, b));
}

/// How many times `write` ran for Alice: the lines of her `paid.txt`.
fn writes(files: &Path) -> usize {
    std::fs::read_to_string(files.join("alice/paid.txt")).map_or(0, |t| t.lines().count())
}

/// Asks `first` (then killed) for "write paid": the task, waiting for the
/// approval of `write`, with its wait kept in `db`; nothing written.
async fn approval_asked_then_killed(config: &str, files: &Path, db: &Path) -> String {
    let first = start(config, files).await;
    let answer = send(&a2a(&first), ALICE, "write paid", None).await;
    let task = asked(&answer, &format!("Allow the tool `{WRITE}` to run"));
    let question = answer["result"]["task"]["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(question.contains(r#""path":"paid.txt""#), "{question}");
    assert!(question.ends_with("Answer yes or no."), "{question}");
    assert_eq!(
        kept(db),
        1,
        "the wait was kept before the question went out"
    );
    assert_eq!(writes(files), 0, "nothing runs before the yes");
    first.kill();
    task
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_required_scope_tool_approved_over_a2a_after_a_kill_runs_exactly_once() {
    let model = TestServer::start(model).await;
    let dir = support::temp_dir("a2a-waits-db");
    let db = dir.join("sessions.db");
    let (config, _, files) = setup(
        "a2a-waits-approval",
        &model.url(),
        &format!("path = \"{}\"", db.display()),
    );
    let task = approval_asked_then_killed(&config, &files, &db).await;

    let next = start(&config, &files).await;
    let url = a2a(&next);
    // Bob cannot approve Alice's call.
    let bobs = send(&url, BOB, "yes", Some(&task)).await;
    assert_eq!(bobs["error"]["code"], -32001, "{bobs}");
    assert_eq!((kept(&db), writes(&files)), (1, 0));

    let done = send(&url, ALICE, "yes", Some(&task)).await;
    let finished = &done["result"]["task"];
    assert_eq!(
        finished["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    let told = finished["artifacts"][0]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(told.starts_with("Told: "), "{done}");
    assert!(!told.contains("did not run"), "{done}");
    assert_eq!(writes(&files), 1, "run once: {done}");
    assert_eq!(kept(&db), 0);

    // One answer per question: a second yes runs nothing.
    let again = send(&url, ALICE, "yes", Some(&task)).await;
    assert_eq!(again["error"]["code"], -32004, "{again}");
    drop(next);
    // Nor does a third process, finding nothing left to settle.
    let third = start(&config, &files).await;
    let got = rpc(&a2a(&third), ALICE, "GetTask", json!({"id": task})).await;
    assert_eq!(
        got["result"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{got}"
    );
    let again = send(&a2a(&third), ALICE, "yes", Some(&task)).await;
    assert_eq!(again["error"]["code"], -32004, "{again}");
    assert_eq!(writes(&files), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_required_scope_tool_refused_over_a2a_after_a_kill_never_runs() {
    let model = TestServer::start(model).await;
    let dir = support::temp_dir("a2a-waits-db");
    let db = dir.join("sessions.db");
    let (config, _, files) = setup(
        "a2a-waits-refusal",
        &model.url(),
        &format!("path = \"{}\"", db.display()),
    );
    let task = approval_asked_then_killed(&config, &files, &db).await;

    let next = start(&config, &files).await;
    let done = send(&a2a(&next), ALICE, "no", Some(&task)).await;
    let finished = &done["result"]["task"];
    assert_eq!(
        finished["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    let told = finished["artifacts"][0]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        told.starts_with("Told: ") && told.contains("declined"),
        "the model reads the refusal: {done}"
    );
    assert_eq!(writes(&files), 0, "refused, never run: {done}");
    assert_eq!(kept(&db), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_a2a_input_wait_secs_ends_an_unanswered_approval_expired() {
    let model = TestServer::start(model).await;
    let dir = support::temp_dir("a2a-waits-db");
    let db = dir.join("sessions.db");
    let (config, _, files) = setup(
        "a2a-waits-input-wait",
        &model.url(),
        &format!("path = \"{}\"", db.display()),
    );
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[serve.a2a]\ninput_wait_secs = 1\n");
    std::fs::write(&config, text).unwrap();

    let serve = start(&config, &files).await;
    let url = a2a(&serve);
    let answer = send(&url, ALICE, "write paid", None).await;
    let task = asked(&answer, &format!("Allow the tool `{WRITE}` to run"));
    // Nobody answers: a second later (not a day) the task ends expired.
    let mut status = Value::Null;
    for _ in 0..100 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let got = rpc(&url, ALICE, "GetTask", json!({"id": task})).await;
        status = got["result"]["status"].clone();
        if status["state"] != "TASK_STATE_INPUT_REQUIRED" {
            break;
        }
    }
    assert_eq!(status["state"], "TASK_STATE_FAILED", "{status}");
    let said = status["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(said.starts_with("expired:"), "{status}");
    let late = send(&url, ALICE, "yes", Some(&task)).await;
    assert_eq!(late["error"]["code"], -32004, "{late}");
    assert_eq!(writes(&files), 0, "expired, never run");
    assert_eq!(kept(&db), 0);
}

#[test]
fn serve_a2a_input_wait_secs_outside_its_range_stops_serve_with_exit_2() {
    let dir = support::temp_dir("a2a-waits-input-wait-range");
    let config = dir.join("config.toml");
    for value in ["0", "2592001"] {
        std::fs::write(&config, format!("[serve.a2a]\ninput_wait_secs = {value}\n")).unwrap();
        let (code, _, err) = support::run(&mut support::oscova(&[
            "--config",
            config.to_str().unwrap(),
            "serve",
            "--listen",
            "127.0.0.1:0",
        ]));
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("serve.a2a.input_wait_secs") && err.contains("1 to 2592000"),
            "{err}"
        );
    }
}
