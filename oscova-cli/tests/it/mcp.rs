//! `oscova mcp` end to end: rmcp's client spawns the real binary.

use crate::support;

use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, JsonObject, ProgressNotificationParam,
    ProgressToken, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceError, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::timeout;

const ECHO: &str = "acme_search__example__example_echo";
const SEARCH: &str = "acme_search__example__search_records";
const COUNT: &str = "acme_search__example__slow_count";
const WAIT: Duration = Duration::from_secs(10);

/// A client that forwards every progress notification to the test.
struct Client {
    progress: mpsc::UnboundedSender<ProgressNotificationParam>,
}

impl ClientHandler for Client {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.progress.send(params);
    }
}

type Progress = mpsc::UnboundedReceiver<ProgressNotificationParam>;

async fn connect(flags: &[&str]) -> (RunningService<RoleClient, Client>, Progress) {
    let mut cmd = tokio::process::Command::new(support::BIN);
    cmd.arg("mcp").args(flags);
    support::clean_env(cmd.as_std_mut());
    let transport = TokioChildProcess::new(cmd).unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    let client = timeout(WAIT, Client { progress: tx }.serve(transport))
        .await
        .expect("the server answers initialize")
        .unwrap();
    (client, rx)
}

fn args(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn call(name: &'static str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name).with_arguments(args(arguments))
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    let content = serde_json::to_value(&result.content).unwrap();
    content[0]["text"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn lists_tools_with_schemas_and_hints() {
    let (client, _) = connect(&[]).await;
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "oscova");

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for name in [ECHO, SEARCH, COUNT] {
        assert!(names.contains(&name), "{names:?}");
    }
    let echo = tools.iter().find(|t| t.name == ECHO).unwrap();
    assert_eq!(
        echo.description.as_deref(),
        Some("Returns the supplied text unchanged.")
    );
    assert_eq!(echo.input_schema["type"], "object");
    assert_eq!(echo.input_schema["required"], json!(["text"]));
    let hints = echo.annotations.as_ref().unwrap();
    assert_eq!(
        hints.open_world_hint,
        Some(false),
        "a NetworkScope::None tool"
    );
    assert_eq!(hints.read_only_hint, None);
    assert_eq!(hints.destructive_hint, None);
    let fetch = tools
        .iter()
        .find(|t| t.name == "oscova_web__web__fetch")
        .unwrap();
    let hints = fetch.annotations.as_ref().unwrap();
    assert_eq!(
        hints.open_world_hint,
        Some(true),
        "a NetworkScope::Internet tool"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn calls_a_tool() {
    let (client, _) = connect(&["--allow-approval-required"]).await;
    let result = client
        .call_tool(call(ECHO, json!({"text": "hi"})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    assert_eq!(text(&result), "hi");
    assert_eq!(result.structured_content, None);

    let result = client
        .call_tool(call(SEARCH, json!({"query": "release"})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    assert_eq!(text(&result), r#"[{"id":2,"title":"Release notes"}]"#);
    // The tool returns `Vec<Record>`: its output schema and structured
    // content are wrapped in an object, as MCP wants.
    assert_eq!(
        result.structured_content,
        Some(json!({"result": [{"id": 2, "title": "Release notes"}]}))
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn failures_and_refusals_are_error_results() {
    let (client, _) = connect(&[]).await;
    let refused = client
        .call_tool(call(SEARCH, json!({"query": "plan"})))
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused).contains("--allow-approval-required"),
        "{refused:?}"
    );
    assert_eq!(refused.structured_content, Some(json!({"error": "denied"})));

    let bad = client
        .call_tool(call(ECHO, json!({"text": 5})))
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    assert!(text(&bad).contains("invalid arguments"), "{bad:?}");

    let unknown = client
        .call_tool(call("no_such__tool__x", json!({})))
        .await
        .unwrap_err();
    match unknown {
        ServiceError::McpError(e) => assert_eq!(e.code.0, -32602, "{e:?}"),
        other => panic!("{other:?}"),
    }
    client.cancel().await.unwrap();

    let (client, _) = connect(&["--allow-approval-required"]).await;
    let failed = client
        .call_tool(call(SEARCH, json!({"query": " "})))
        .await
        .unwrap();
    assert_eq!(failed.is_error, Some(true));
    assert!(text(&failed).contains("the query is empty"), "{failed:?}");
    client.cancel().await.unwrap();
}

/// Collects notifications for `token` until `count` arrived or time is up.
async fn collect(rx: &mut Progress, token: &ProgressToken, count: usize) -> Vec<f64> {
    let mut seen = Vec::new();
    while seen.len() < count {
        match timeout(WAIT, rx.recv()).await {
            Ok(Some(p)) if &p.progress_token == token => seen.push(p.progress),
            Ok(Some(_)) => {}
            _ => break,
        }
    }
    seen
}

#[tokio::test]
async fn progress_becomes_notifications() {
    let (client, mut rx) = connect(&[]).await;
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(call(
        COUNT,
        json!({"to": 3, "delay_ms": 1}),
    )));
    let handle = client
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    let token = handle.progress_token.clone();
    let response = timeout(WAIT, handle.await_response())
        .await
        .unwrap()
        .unwrap();
    let ServerResult::CallToolResult(result) = response else {
        panic!("{response:?}");
    };
    assert_eq!(text(&result), "3");
    assert_eq!(collect(&mut rx, &token, 3).await, [1.0, 2.0, 3.0]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_client_cancellation_cancels_the_call() {
    let (client, mut rx) = connect(&[]).await;
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(call(
        COUNT,
        json!({"to": 10000, "delay_ms": 20}),
    )));
    let handle = client
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    let token = handle.progress_token.clone();
    assert_eq!(collect(&mut rx, &token, 1).await, [1.0], "the call started");
    handle.cancel(Some("test".into())).await.unwrap();

    // Whatever was in flight arrives quickly; after that, silence.
    tokio::time::sleep(Duration::from_millis(300)).await;
    while rx.try_recv().is_ok() {}
    tokio::time::sleep(Duration::from_millis(500)).await;
    let late: Vec<f64> = std::iter::from_fn(|| rx.try_recv().ok())
        .filter(|p| p.progress_token == token)
        .map(|p| p.progress)
        .collect();
    assert!(late.is_empty(), "still counting after cancel: {late:?}");

    // The server is still serving.
    let result = client
        .call_tool(call(ECHO, json!({"text": "after"})))
        .await
        .unwrap();
    assert_eq!(text(&result), "after");
    client.cancel().await.unwrap();
}

/// `oscova mcp` driven with raw lines on stdin, answers read from stdout.
struct RawSession {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl RawSession {
    async fn start() -> Self {
        use tokio::io::AsyncBufReadExt;

        let mut cmd = tokio::process::Command::new(support::BIN);
        cmd.arg("mcp")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        support::clean_env(cmd.as_std_mut());
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let mut session = Self {
            child,
            stdin,
            stdout,
        };
        session
            .send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#)
            .await;
        assert_eq!(session.until(json!(0)).await.len(), 1);
        session
            .send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        session
    }

    async fn send(&mut self, line: &str) {
        use tokio::io::AsyncWriteExt;

        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        timeout(WAIT, self.stdin.write_all(&bytes))
            .await
            .expect("the server reads on")
            .unwrap();
    }

    /// Answers up to and including the one with `id`.
    async fn until(&mut self, id: Value) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let line = timeout(WAIT, self.stdout.next_line())
                .await
                .expect("the server answers")
                .unwrap()
                .expect("the server keeps stdout open");
            let value: Value = serde_json::from_str(&line).unwrap();
            let done = value["id"] == id;
            seen.push(value);
            if done {
                return seen;
            }
        }
    }
}

#[tokio::test]
async fn protocol_errors_on_stdin_are_answered_and_the_server_serves_on() {
    let mut session = RawSession::start().await;
    let deep = format!("{}{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
    for (n, line) in [
        "{garbage",
        r#"{"jsonrpc":"2.0","id":9,"method":"ping","params":{"s":"\udc00"}}"#,
        r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#,
        deep.as_str(),
    ]
    .into_iter()
    .enumerate()
    {
        session.send(line).await;
        let id = json!(format!("ping-{n}"));
        session
            .send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#))
            .await;
        let answers = session.until(id).await;
        assert_eq!(answers.len(), 2, "{line:.40}: {answers:?}");
        assert_eq!(answers[0]["error"]["code"], -32700, "{answers:?}");
        assert_eq!(
            answers[0].get("id"),
            Some(&Value::Null),
            "`id` is present and null: {answers:?}"
        );
    }

    session
        .send(r#"{"jsonrpc":"2.0","id":"no-params","method":"tools/call"}"#)
        .await;
    let answer = session.until(json!("no-params")).await.pop().unwrap();
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    session
        .send(r#"{"jsonrpc":"2.0","id":"bad-name","method":"tools/call","params":{"name":7}}"#)
        .await;
    let answer = session.until(json!("bad-name")).await.pop().unwrap();
    assert_eq!(answer["error"]["code"], -32602, "{answer}");

    // Still a working server.
    session
        .send(&format!(
            r#"{{"jsonrpc":"2.0","id":"echo","method":"tools/call","params":{{"name":"{ECHO}","arguments":{{"text":"still here"}}}}}}"#
        ))
        .await;
    let answer = session.until(json!("echo")).await.pop().unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "still here");
    drop(session.stdin);
    let status = timeout(WAIT, session.child.wait()).await.unwrap().unwrap();
    assert!(status.success(), "{status:?}");
}
