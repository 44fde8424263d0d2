//! `oscova mcp` end to end: rmcp's client spawns the real binary.

mod support;

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
    assert_eq!(
        result.structured_content, None,
        "MCP structured content is an object"
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
