//! `oscova chat` end to end: the real binary against real HTTP servers on
//! 127.0.0.1 that speak Ollama's `/api/chat` (NDJSON) and the OpenAI chat
//! completions stream (SSE), split at awkward byte boundaries. Nothing
//! here connects anywhere but 127.0.0.1.

use crate::support;

use std::time::Duration;

use oscova_test_support::http::{Framing, Reply, Request, TestServer, awkward, closed_port_url};
use serde_json::{Value, json};
use support::{oscova, run_async, temp_dir};

const ECHO: &str = "acme_search__example__example_echo";
const SEARCH: &str = "acme_search__example__search_records";
const KEY: &str = "sk-cli-test-0123456789abcdef";

fn config_file(text: &str) -> String {
    let path = temp_dir("chat-config").join("config.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

fn last_message(request: &Request) -> Value {
    request.json()["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .unwrap_or(Value::Null)
}

// --- Ollama ---------------------------------------------------------------

fn ndjson_line(message: Value, done: bool) -> String {
    let mut line = json!({
        "model": "m1",
        "created_at": "2024-07-22T20:33:28.123648Z",
        "message": message,
        "done": done,
    });
    if done {
        line["done_reason"] = json!("stop");
    }
    format!("{line}\n")
}

fn ollama_stream(text: &[&str], calls: Value) -> Reply {
    let mut body = String::new();
    for piece in text {
        body += &ndjson_line(json!({"role": "assistant", "content": piece}), false);
    }
    if calls.as_array().is_some_and(|c| !c.is_empty()) {
        body += &ndjson_line(
            json!({"role": "assistant", "content": "", "tool_calls": calls}),
            false,
        );
    }
    body += &ndjson_line(json!({"role": "assistant", "content": ""}), true);
    Reply::stream(
        "application/x-ndjson",
        Framing::Chunked,
        awkward(body.as_bytes()),
    )
}

/// Round one asks for `tool` with `args`; once the last message is the
/// tool's result, the model answers with what the tool said.
async fn ollama_server(tool: &'static str, args: Value) -> TestServer {
    TestServer::start(move |request| {
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("POST", "/api/chat")
        );
        let last = last_message(request);
        if last["role"] == "tool" {
            let said = last["content"].as_str().unwrap_or_default().to_owned();
            let answer = format!("The tool said: {said}");
            ollama_stream(&["The tool ", &answer["The tool ".len()..]], json!([]))
        } else {
            ollama_stream(
                &["Let me check… "],
                json!([{"function": {"name": tool, "arguments": args}}]),
            )
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_round_tool_chat_with_ollama_streams_text_and_shows_the_call() {
    let server = ollama_server(ECHO, json!({"text": "héllo"})).await;
    let cmd = oscova(&[
        "chat",
        "--provider",
        "ollama",
        "--endpoint",
        &server.url(),
        "--model",
        "m1",
        "--offline",
        "--message",
        "Echo héllo please",
    ]);
    let (code, out, err) = run_async(cmd, None).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert_eq!(out, "Let me check… \nThe tool said: héllo\n");
    assert!(
        err.contains(&format!("→ {ECHO} {{\"text\":\"héllo\"}}")),
        "{err}"
    );
    assert!(err.contains(&format!("← {ECHO}: héllo")), "{err}");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].json();
    assert_eq!(first["model"], "m1");
    assert_eq!(first["stream"], true);
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&ECHO) && tools.contains(&"oscova_time__time__now"),
        "{tools:?}"
    );
    let told = last_message(&requests[1]);
    assert_eq!(
        (&told["role"], &told["content"]),
        (&json!("tool"), &json!("héllo"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_outcome_as_json_lists_the_tool_calls() {
    let server = ollama_server("oscova_time__time__now", json!({"zone": "UTC"})).await;
    let config = config_file(&format!(
        "[providers.ollama]\nendpoint = \"{}\"\nmodel = \"m1\"\n",
        server.url()
    ));
    let cmd = oscova(&[
        "--json",
        "--config",
        &config,
        "chat",
        "--provider",
        "ollama",
        "-m",
        "What time is it?",
    ]);
    let (code, out, err) = run_async(cmd, None).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["provider"], "ollama");
    assert_eq!(doc["model"], "m1");
    assert_eq!(doc["user"], "local");
    assert_eq!(doc["rounds"], 2);
    let call = &doc["tool_calls"][0];
    assert_eq!(call["name"], "oscova_time__time__now");
    assert_eq!(call["arguments"], json!({"zone": "UTC"}));
    assert_eq!(call["refused"], false);
    assert_eq!(call["result"]["is_error"], false);
    let said = call["result"]["content"].as_str().unwrap();
    assert!(said.contains("UTC"), "{said}");
    assert_eq!(doc["answer"], format!("The tool said: {said}"));
    assert!(!err.contains('→'), "--json prints no tool lines: {err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_needs_approval_is_refused_without_yes_and_runs_with_it() {
    let server = ollama_server(SEARCH, json!({"query": "quarterly"})).await;
    let url = server.url();
    let args = [
        "chat",
        "--provider",
        "ollama",
        "--endpoint",
        &url,
        "--model",
        "m1",
        "-m",
        "find reports",
    ];
    let (code, out, err) = run_async(oscova(&args), None).await;
    assert_eq!(code, 0, "the model is told and answers: {out}\n{err}");
    assert!(err.contains(&format!("← {SEARCH} refused:")), "{err}");
    let told = last_message(&server.requests()[1]);
    assert!(
        told["content"].as_str().unwrap().contains("--yes"),
        "{told}"
    );

    let mut with_yes = args.to_vec();
    with_yes.push("--yes");
    let (code, out, err) = run_async(oscova(&with_yes), None).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("Quarterly report"), "{out}");
    assert!(!err.contains("refused"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_round_bound_is_a_failure() {
    let server = ollama_server(ECHO, json!({"text": "again"})).await;
    let cmd = oscova(&[
        "chat",
        "--provider",
        "ollama",
        "--endpoint",
        &server.url(),
        "--model",
        "m1",
        "--max-rounds",
        "1",
        "-m",
        "hi",
    ]);
    let (code, _, err) = run_async(cmd, None).await;
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("round") && err.contains(ECHO), "{err}");
    assert_eq!(server.requests().len(), 1);
}

// --- OpenAI-compatible ----------------------------------------------------

fn sse_event(delta: Value, finish: Option<&str>) -> String {
    let chunk = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    format!("data: {chunk}\n\n")
}

fn sse(events: String) -> Reply {
    let body = format!("{events}data: [DONE]\n\n");
    Reply::stream(
        "text/event-stream",
        Framing::Chunked,
        awkward(body.as_bytes()),
    )
}

fn openai_reply(request: &Request) -> Reply {
    assert_eq!(request.path, "/v1/chat/completions");
    let last = last_message(request);
    if last["role"] == "tool" {
        let said = last["content"].as_str().unwrap_or_default();
        return sse(
            sse_event(json!({"content": format!("Echoed: {said}")}), None)
                + &sse_event(json!({}), Some("stop")),
        );
    }
    if last["content"] == "second" {
        return sse(sse_event(
            json!({"role": "assistant", "content": "Second answer"}),
            None,
        ) + &sse_event(json!({}), Some("stop")));
    }
    let mut events = sse_event(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                "function": {"name": ECHO, "arguments": ""}}]}),
        None,
    );
    let arguments: Vec<char> = r#"{"text": "from openai"}"#.chars().collect();
    for fragment in arguments.chunks(4) {
        let fragment: String = fragment.iter().collect();
        events += &sse_event(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]}),
            None,
        );
    }
    sse(events + &sse_event(json!({}), Some("tool_calls")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_repl_reads_one_message_a_line_and_keeps_the_conversation() {
    let server = TestServer::start(openai_reply).await;
    let mut cmd = oscova(&[
        "--json",
        "chat",
        "--provider",
        "openai",
        "--endpoint",
        &server.url(),
        "--model",
        "gpt-test",
    ]);
    cmd.env("OSCOVA_CREDENTIAL_OPENAI_API_KEY", KEY);
    let (code, out, err) = run_async(cmd, Some("first\n\nsecond\n")).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let docs: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(docs.len(), 2, "{out}");
    assert_eq!(docs[0]["rounds"], 2);
    assert_eq!(docs[0]["tool_calls"][0]["name"], ECHO);
    assert_eq!(docs[0]["tool_calls"][0]["result"]["content"], "from openai");
    assert_eq!(docs[0]["answer"], "Echoed: from openai");
    assert_eq!(docs[1]["rounds"], 1);
    assert_eq!(docs[1]["answer"], "Second answer");

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for r in &requests {
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
    }
    let roles: Vec<Value> = requests[2].json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].clone())
        .collect();
    assert_eq!(
        roles,
        [
            json!("user"),
            json!("assistant"),
            json!("tool"),
            json!("assistant"),
            json!("user")
        ]
    );
    assert!(
        !out.contains(KEY) && !err.contains(KEY),
        "the key is never printed"
    );
}

// --- Refusals and failures ------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offline_refuses_a_remote_scope_with_zero_connections() {
    let server = ollama_server(ECHO, json!({"text": "x"})).await;
    // The endpoint is loopback, but the saved scope says it leads elsewhere
    // (a tunnel): offline operation must refuse it.
    let config = config_file(&format!(
        "[providers.ollama]\nendpoint = \"{}\"\nmodel = \"m1\"\nendpoint_scope = \"remote\"\n",
        server.url()
    ));
    let cmd = oscova(&[
        "--config",
        &config,
        "chat",
        "--provider",
        "ollama",
        "--offline",
        "-m",
        "hi",
    ]);
    let (code, _, err) = run_async(cmd, None).await;
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("offline"), "{err}");

    // The REPL refuses before reading a line.
    let cmd = oscova(&[
        "--json",
        "--config",
        &config,
        "chat",
        "--provider",
        "ollama",
        "--offline",
    ]);
    let (code, out, _) = run_async(cmd, Some("hi\n")).await;
    assert_eq!(code, 3);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["error"]["kind"], "not_local");
    assert_eq!(server.connections(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_endpoint_fails_naming_the_url() {
    let url = closed_port_url().await;
    for provider in ["ollama", "openai"] {
        let cmd = oscova(&[
            "chat",
            "--provider",
            provider,
            "--endpoint",
            &url,
            "--model",
            "m",
            "-m",
            "hi",
        ]);
        let (code, _, err) = run_async(cmd, None).await;
        assert_eq!(code, 1, "{err}");
        assert!(err.contains(&url) && err.contains("cannot reach"), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_errors_make_no_request() {
    let server = ollama_server(ECHO, json!({"text": "x"})).await;
    let url = server.url();
    let (code, _, err) = run_async(
        oscova(&[
            "chat",
            "--provider",
            "ollama",
            "--endpoint",
            &url,
            "-m",
            "hi",
        ]),
        None,
    )
    .await;
    assert_eq!(code, 2, "no model: {err}");
    assert!(err.contains("--model"), "{err}");
    let cmd = oscova(&["chat", "--provider", "nope", "--model", "m", "-m", "hi"]);
    let (code, _, err) = run_async(cmd, None).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("ollama, openai"), "{err}");
    assert_eq!(server.connections(), 0);
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_cancels_the_message_and_drops_the_connection() {
    use tokio::io::AsyncReadExt;

    let server = TestServer::start(|_| {
        let body = ndjson_line(json!({"role": "assistant", "content": "Thinking"}), false);
        Reply::stream(
            "application/x-ndjson",
            Framing::Chunked,
            vec![body.into_bytes()],
        )
        .hanging()
    })
    .await;
    let cmd = oscova(&[
        "chat",
        "--provider",
        "ollama",
        "--endpoint",
        &server.url(),
        "--model",
        "m1",
        "-m",
        "hi",
    ]);
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = [0u8; 8];
    let n = tokio::time::timeout(Duration::from_secs(30), stdout.read(&mut seen))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&seen[..n], b"Thinking");
    support::interrupt(child.id().unwrap());
    let output = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{err}");
    assert!(err.contains("cancelled"), "{err}");
    assert!(server.wait_dropped(Duration::from_secs(10)).await);
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_in_the_repl_cancels_only_the_message_in_progress() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let calls = AtomicUsize::new(0);
    let server = TestServer::start(move |_| {
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            let body = ndjson_line(json!({"role": "assistant", "content": "Thinking"}), false);
            Reply::stream(
                "application/x-ndjson",
                Framing::Chunked,
                vec![body.into_bytes()],
            )
            .hanging()
        } else {
            ollama_stream(&["Still here."], json!([]))
        }
    })
    .await;
    let cmd = oscova(&[
        "chat",
        "--provider",
        "ollama",
        "--endpoint",
        &server.url(),
        "--model",
        "m1",
    ]);
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"first\n").await.unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = [0u8; 8];
    let n = tokio::time::timeout(Duration::from_secs(30), stdout.read(&mut seen))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&seen[..n], b"Thinking");
    support::interrupt(child.id().unwrap());
    assert!(server.wait_dropped(Duration::from_secs(10)).await);
    stdin.write_all(b"second\n").await.unwrap();
    drop(stdin);
    let mut rest = String::new();
    tokio::time::timeout(Duration::from_secs(30), stdout.read_to_string(&mut rest))
        .await
        .unwrap()
        .unwrap();
    let output = child.wait_with_output().await.unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(err.contains("cancelled"), "{err}");
    assert_eq!(rest, "\nStill here.\n");
    // The second message went out with the first one's (valid) history.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(last_message(&requests[1])["content"], "second");
}
