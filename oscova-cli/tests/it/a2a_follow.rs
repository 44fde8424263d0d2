//! `oscova serve` following a long A2A task end to end: an A2A client's
//! message runs a session whose model (a scripted OpenAI-compatible
//! server on loopback) calls `[a2a]`'s slow agent (the official Python
//! SDK's server, `scripts/a2a/agents.py`) with `send`; the task outlives
//! the call; the SDK pushes its updates to `[serve] public_url`'s
//! follow-up route; the follower fetches the task and delivers its result
//! into that A2A session, whose next task sees it.

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use oscova_test_support::http::{Framing, Reply, Request, TestServer};
use serde_json::{Value, json};

const TOKEN: &str = "alice-token";
/// `printf %s alice-token | sha256sum`
const TOKEN_SHA256: &str = "9c220f200955d76c0a38d308225e0ef10c5f971acaf2f8d1d8f732affa5bd1dc";
const SEND: &str = "oscova_a2a__a2a__send";

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let chunk = json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    format!("data: {chunk}\n\n")
}

/// `go long` → a `send` to the slow agent; a tool result → `Sent.`;
/// anything else → `Served: <the last message>`.
fn openai_reply(request: &Request) -> Reply {
    let last = request.json()["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .unwrap_or(Value::Null);
    let content = last["content"].as_str().unwrap_or_default();
    let body = if last["role"] == "user" && content == "go long" {
        let arguments = json!({"agent": "slow", "message": "the report", "wait_secs": 0});
        let call = json!({"index": 0, "id": "call_1", "type": "function",
            "function": {"name": SEND, "arguments": arguments.to_string()}});
        chunk(json!({"role": "assistant", "tool_calls": [call]}), None)
            + &chunk(json!({}), Some("tool_calls"))
    } else if last["role"] == "tool" {
        chunk(json!({"role": "assistant", "content": "Sent."}), None)
            + &chunk(json!({}), Some("stop"))
    } else {
        let text = format!("Served: {content}");
        chunk(json!({"role": "assistant", "content": text}), None) + &chunk(json!({}), Some("stop"))
    };
    Reply::stream(
        "text/event-stream",
        Framing::Chunked,
        vec![(body + "data: [DONE]\n\n").into_bytes()],
    )
}

/// The SDK's agents with `args`, and the port they print.
fn agents(args: &[&str]) -> (Child, u16) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/a2a/agents.py");
    let mut child = std::process::Command::new(crate::serve::a2a_python())
        .arg(script)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let port = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(port) = line.strip_prefix("PORT ") {
                    break port.trim().parse().unwrap();
                }
            }
            _ => panic!("agents.py ended without printing its port"),
        }
    };
    (child, port)
}

fn write_config(dir: &Path, model_url: &str, agents_port: u16, port: u16) -> String {
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[[mcp.tokens]]\nuser = \"alice\"\nsha256 = \"{TOKEN_SHA256}\"\n\n\
             [providers.openai]\nendpoint = \"{model_url}\"\nmodel = \"gpt-test\"\n\n\
             [sessions]\npath = \"{}\"\n\n\
             [serve]\npublic_url = \"http://127.0.0.1:{port}\"\n\n\
             [serve.a2a]\nprovider = \"openai\"\n\n\
             [a2a]\npending_dir = \"{}\"\n\n\
             [a2a.agents.slow]\nurl = \"http://127.0.0.1:{agents_port}/slow\"\n",
            dir.join("sessions.db").display(),
            pending(dir).display(),
        ),
    )
    .unwrap();
    config.to_str().unwrap().to_owned()
}

fn pending(dir: &Path) -> PathBuf {
    dir.join("a2a")
}

/// The tasks in alice's pending file.
fn pending_tasks(dir: &Path) -> Vec<Value> {
    std::fs::read(pending(dir).join("alice.json"))
        .ok()
        .map(|b| serde_json::from_slice(&b).unwrap())
        .unwrap_or_default()
}

async fn send(base: &str, text: &str, context: Option<&str>) -> Value {
    let mut message = json!({"messageId": format!("m-{text}"), "role": "ROLE_USER",
        "parts": [{"text": text}]});
    if let Some(context) = context {
        message["contextId"] = json!(context);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": message}});
    reqwest::Client::new()
        .post(format!("{base}/"))
        .bearer_auth(TOKEN)
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_delivers_a_pushed_long_task_into_the_a2a_session_that_sent_it() {
    // The slow task completes 8 s after it started. The follower reads
    // the lists every 5 s and polls a pushed task once, then only on its
    // webhook (or after 5 minutes): a delivery within a minute is the push.
    let (mut agent, agents_port) = agents(&["--polls", "100000", "--after", "8", "--push"]);
    let model = TestServer::start(openai_reply).await;
    let dir = support::temp_dir("a2a-follow");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = write_config(&dir, &model.url(), agents_port, port);
    let listen = format!("127.0.0.1:{port}");
    let mut cmd = support::oscova(&["--config", &config, "serve", "--listen", &listen]);
    cmd.env("OSCOVA_CREDENTIAL_OPENAI_API_KEY", "sk-follow-test");
    let (mut server, base) = support::listening(&mut cmd, "serve");

    let first = send(&base, "go long", None).await;
    let task = &first["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{first}");
    let context = task["contextId"].as_str().unwrap().to_owned();
    let listed = pending_tasks(&dir);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["agent"], "slow");
    assert!(!listed[0]["session"].as_str().unwrap().is_empty());
    assert_eq!(listed[0]["push_id"].as_str().unwrap().len(), 32);

    // A forged webhook (the task's id, a wrong token) is refused, and a
    // made-up one too, alike: the answer does not say which id exists.
    let at = base.as_str();
    let answer = |id: String, token: Option<&'static str>| async move {
        let mut request = reqwest::Client::new().post(format!("{at}/a2a/followups/{id}"));
        if let Some(token) = token {
            request = request.header("X-A2A-Notification-Token", token);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let mut headers: Vec<(String, String)> = response
            .headers()
            .iter()
            .filter(|(name, _)| *name != "date")
            .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_owned()))
            .collect();
        headers.sort();
        (status, headers, response.text().await.unwrap())
    };
    let id = listed[0]["push_id"].as_str().unwrap().to_owned();
    let forged = answer(id.clone(), Some("forged")).await;
    assert_eq!(forged.0, 401);
    assert_eq!(answer(id, None).await, forged);
    assert_eq!(answer("0".repeat(32), Some("forged")).await, forged);
    assert_eq!(answer("nothing".to_owned(), None).await, forged);

    let deadline = Instant::now() + Duration::from_secs(60);
    while !pending_tasks(&dir).is_empty() {
        assert!(Instant::now() < deadline, "the task was not delivered");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The session's next task sees the follow-up.
    let second = send(&base, "what came back?", Some(&context)).await;
    assert_eq!(
        second["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{second}"
    );
    let seen = model.requests().pop().unwrap().json();
    let messages = seen["messages"].as_array().unwrap();
    assert!(
        messages.iter().any(|m| m["content"]
            .as_str()
            .is_some_and(|c| c.contains("done: the report") && c.contains("A2A agent `slow`"))),
        "{seen}"
    );
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status();
    let _ = server.wait();
    let _ = agent.kill();
    let _ = agent.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_answers_a_long_tasks_result_as_it_arrives() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    // Completes 2 s after it started; `chat` follows it while it waits
    // for the next line, and the model answers the follow-up at once.
    let (mut agent, agents_port) = agents(&["--polls", "100000", "--after", "2"]);
    let model = TestServer::start(openai_reply).await;
    let dir = support::temp_dir("a2a-follow-chat");
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[sessions]\npath = \"{}\"\n\n[a2a]\npending_dir = \"{}\"\n\n\
             [a2a.agents.slow]\nurl = \"http://127.0.0.1:{agents_port}/slow\"\n",
            dir.join("sessions.db").display(),
            pending(&dir).display(),
        ),
    )
    .unwrap();
    let url = model.url();
    let cmd = support::oscova(&[
        "--config",
        config.to_str().unwrap(),
        "chat",
        "--provider",
        "openai",
        "--endpoint",
        &url,
        "--model",
        "gpt-test",
        "--session",
        "research",
    ]);
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.env("OSCOVA_CREDENTIAL_OPENAI_API_KEY", "sk-follow-test")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"go long\n").await.unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = String::new();
    let read = async {
        let mut buf = [0u8; 1024];
        while !seen.contains("done: the report") {
            let n = stdout.read(&mut buf).await.unwrap();
            assert!(n > 0, "chat ended before the follow-up: {seen:?}");
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    };
    tokio::time::timeout(Duration::from_secs(60), read)
        .await
        .expect("the follow-up's answer within 60 s");
    assert!(seen.starts_with("Sent."), "{seen:?}");
    assert!(
        seen.contains("Served: A2A agent `slow` finished task"),
        "{seen:?}"
    );
    assert!(pending_tasks(&dir).is_empty());
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let _ = agent.kill();
    let _ = agent.wait();
}
