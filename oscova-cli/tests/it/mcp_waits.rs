//! A 2026-07-28 tool call waiting for the person, kept in the `[sessions]`
//! store (`[mcp] waits`, default): real `oscova serve` processes on
//! 127.0.0.1, the files plugin's `write` (approval required) appending a
//! line per run, so the file counts the runs. Two instances on one
//! throwaway Postgres: the approval asked by one is granted through the
//! other and the tool runs once; the handle is refused afterwards on both,
//! and before, to another user. One SQLite file across a `kill -9`: the
//! next process runs the approved call once; a wait past its expiry is
//! answered `expired` and nothing runs. Plain HTTP JSON-RPC, as the
//! stateless rounds are.

use std::path::{Path, PathBuf};
use std::process::Child;

use serde_json::{Value, json};

use crate::support;

const ALICE: &str = "alice-waits-token";
const BOB: &str = "bob-waits-token";
const KEY: &str = "sk-waits-test-0123456789abcdef";
const WRITE: &str = "oscova_files__files__write";

/// A config for `oscova serve` in `dir` with Alice's and Bob's tokens and
/// `sessions` as its `[sessions]` table.
fn write_config(dir: &Path, sessions: &str) -> String {
    let hash = oscova_mcp::http::token_sha256_hex;
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[[mcp.tokens]]\nuser = \"alice\"\nsha256 = \"{}\"\n\n\
             [[mcp.tokens]]\nuser = \"bob\"\nsha256 = \"{}\"\n\n\
             [providers.openai]\nendpoint = \"http://127.0.0.1:9/v1\"\nmodel = \"gpt-test\"\n\n\
             [a2a]\nprovider = \"openai\"\n\n\
             [sessions]\n{sessions}\n",
            hash(ALICE),
            hash(BOB),
        ),
    )
    .unwrap();
    config.to_str().unwrap().to_owned()
}

/// A running `oscova serve`, killed (SIGKILL) when dropped (the
/// `a2a_waits` tests run it too).
pub(crate) struct Serve {
    child: Child,
    /// Its MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub(crate) url: String,
}

impl Serve {
    /// Starts `oscova serve` on `config`, the files root at `files`.
    pub(crate) fn start(config: &str, files: &Path) -> Self {
        let mut cmd = support::oscova(&["--config", config, "serve", "--listen", "127.0.0.1:0"]);
        cmd.env("OSCOVA_CREDENTIAL_OPENAI_API_KEY", KEY)
            .env("OSCOVA_FILES_ROOT", files);
        let (child, base) = support::listening(&mut cmd, "serve");
        Self {
            child,
            url: format!("{base}/mcp"),
        }
    }

    /// `kill -9`: no shutdown of any kind.
    pub(crate) fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One stateless 2026-07-28 `tools/call` of `write` (append a line to
/// `paid.txt`) by `token`'s user, with `extra` params: the JSON-RPC answer.
async fn round(url: &str, token: &str, extra: Value) -> Value {
    let mut params = json!({
        "name": WRITE,
        "arguments": {"path": "paid.txt", "content": "paid\n", "mode": "append"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        },
    });
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params});
    let response = reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", WRITE)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    let data = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or(&text);
    serde_json::from_str(data).unwrap()
}

/// The `requestState` of an `input_required` answer asking approval.
fn approval_asked(answer: &Value) -> Value {
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    let message = result["inputRequests"]["oscova.ask"]["params"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.starts_with(&format!("Allow the tool `{WRITE}`")),
        "{answer}"
    );
    result["requestState"].clone()
}

fn accept(state: &Value) -> Value {
    json!({
        "requestState": state,
        "inputResponses": {"oscova.ask": {"action": "accept", "content": {}}},
    })
}

fn refused(answer: &Value) {
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
}

/// How many times `write` ran for Alice: the lines of her file.
fn runs(files: &Path) -> usize {
    std::fs::read_to_string(files.join("alice/paid.txt")).map_or(0, |t| t.lines().count())
}

fn files_root(dir: &Path) -> PathBuf {
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    files
}

/// [`Serve::start`] off the test's runtime.
pub(crate) async fn start(config: &str, files: &Path) -> Serve {
    let (config, files) = (config.to_owned(), files.to_owned());
    tokio::task::spawn_blocking(move || Serve::start(&config, &files))
        .await
        .unwrap()
}

#[cfg(feature = "sessions-postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_asked_by_one_instance_is_granted_through_another_and_runs_once() {
    let cluster = oscova_test_support::postgres::Cluster::start();
    cluster.create_database("mcp_waits");
    let dir = support::temp_dir("mcp-waits-fleet");
    let files = files_root(&dir);
    let config = write_config(
        &dir,
        &format!(
            "store = \"postgres\"\nurl = \"postgres://postgres@127.0.0.1:{}/mcp_waits\"",
            cluster.port()
        ),
    );
    let a = start(&config, &files).await;
    let b = start(&config, &files).await;

    let state = approval_asked(&round(&a.url, ALICE, json!({})).await);
    // Bob's token with Alice's handle is refused, on either instance, and
    // leaves her call waiting.
    refused(&round(&b.url, BOB, accept(&state)).await);
    refused(&round(&a.url, BOB, accept(&state)).await);
    assert_eq!(runs(&files), 0);

    let done = round(&b.url, ALICE, accept(&state)).await;
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(runs(&files), 1, "{done}");

    // One retry per handle, across the fleet.
    refused(&round(&a.url, ALICE, accept(&state)).await);
    refused(&round(&b.url, ALICE, accept(&state)).await);
    assert_eq!(runs(&files), 1);
    drop((a, b));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_asked_before_a_kill_runs_once_in_the_next_process() {
    let dir = support::temp_dir("mcp-waits-restart");
    let files = files_root(&dir);
    let db = dir.join("sessions.db");
    let config = write_config(&dir, &format!("path = \"{}\"", db.display()));
    let first = start(&config, &files).await;
    let state = approval_asked(&round(&first.url, ALICE, json!({})).await);
    first.kill();

    let next = start(&config, &files).await;
    let done = round(&next.url, ALICE, accept(&state)).await;
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(runs(&files), 1, "{done}");
    refused(&round(&next.url, ALICE, accept(&state)).await);
    assert_eq!(runs(&files), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_past_its_expiry_is_answered_expired_and_nothing_runs() {
    let dir = support::temp_dir("mcp-waits-expired");
    let files = files_root(&dir);
    let db = dir.join("sessions.db");
    let config = write_config(&dir, &format!("path = \"{}\"", db.display()));
    let first = start(&config, &files).await;
    let state = approval_asked(&round(&first.url, ALICE, json!({})).await);
    first.kill();

    // The wait's expiry moved to a minute ago, as if nobody had answered
    // for ten minutes.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let moved = conn
        .execute(
            "UPDATE mcp_waits SET expires_at = CAST(strftime('%s','now') AS INTEGER) * 1000 - 60000 \
             WHERE handle = ?1",
            [state.as_str().unwrap()],
        )
        .unwrap();
    assert_eq!(moved, 1, "the wait was kept before the answer went out");
    drop(conn);

    let next = start(&config, &files).await;
    let ended = round(&next.url, ALICE, accept(&state)).await;
    let result = &ended["result"];
    assert_eq!(result["isError"], true, "{ended}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("expired:"), "{ended}");
    assert!(text.contains("did not run"), "{ended}");
    assert_eq!(runs(&files), 0);
}
