//! Traces over OTLP/HTTP: the real `oscova` binary exports its spans to a
//! loopback collector that records what it receives.

use crate::support;

use oscova_test_support::http::{Reply, TestServer};
use serde_json::{Value, json};

const ECHO: &str = "acme_search__example__example_echo";

/// `oscova tools call ECHO` with traces exported to `collector`.
async fn call_with_traces(collector: &TestServer, protocol: &str) -> (i32, String) {
    let mut cmd = support::oscova(&["tools", "call", ECHO, "--args", r#"{"text":"hi"}"#]);
    for (name, _) in std::env::vars_os() {
        if name.as_encoded_bytes().starts_with(b"OTEL_") {
            cmd.env_remove(name);
        }
    }
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", protocol);
    let (code, stdout, stderr) = support::run_async(cmd, None).await;
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    (code, stderr)
}

/// Every span in every OTLP/JSON export the collector received, with the
/// resource's attributes beside it.
fn spans(collector: &TestServer) -> Vec<(Value, Value)> {
    let mut all = Vec::new();
    for request in collector.requests() {
        assert_eq!(request.path, "/v1/traces", "{request:?}");
        let body = request.json();
        for resource in body["resourceSpans"].as_array().unwrap() {
            for scope in resource["scopeSpans"].as_array().unwrap() {
                for span in scope["spans"].as_array().unwrap() {
                    all.push((resource["resource"].clone(), span.clone()));
                }
            }
        }
    }
    all
}

/// The attribute `key` of an OTLP span or resource, as a string.
fn attribute(item: &Value, key: &str) -> Option<String> {
    let attributes = item["attributes"].as_array()?;
    let value = &attributes.iter().find(|a| a["key"] == key)?["value"];
    value
        .get("stringValue")
        .or_else(|| value.get("intValue"))
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
}

#[tokio::test]
async fn a_tool_call_arrives_as_an_execute_tool_span_in_otlp_json() {
    let collector = TestServer::start(|_| Reply::json(200, json!({}))).await;
    call_with_traces(&collector, "http/json").await;
    let spans = spans(&collector);
    let name = format!("execute_tool {ECHO}");
    let (resource, span) = spans
        .iter()
        .find(|(_, span)| span["name"] == name.as_str())
        .unwrap_or_else(|| panic!("no {name} span in {spans:#?}"));
    assert_eq!(
        attribute(resource, "service.name").as_deref(),
        Some("oscova")
    );
    assert_eq!(
        attribute(span, "gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(attribute(span, "gen_ai.tool.name").as_deref(), Some(ECHO));
    assert_eq!(
        attribute(span, "oscova.plugin.id").as_deref(),
        Some("acme.search")
    );
    assert!(
        attribute(span, "user.id").is_some_and(|u| !u.is_empty()),
        "{span:#}"
    );
    let call_id: u64 = attribute(span, "gen_ai.tool.call.id")
        .unwrap()
        .parse()
        .unwrap();
    assert!(call_id > 0);
    assert_eq!(attribute(span, "error.type"), None, "{span:#}");
    assert_eq!(span["traceId"].as_str().unwrap().len(), 32, "{span:#}");
    // The arguments never enter a span.
    assert!(!span.to_string().contains("\"hi\""), "{span:#}");
}

#[tokio::test]
async fn the_default_protocol_is_protobuf() {
    let collector = TestServer::start(|_| Reply::new(200)).await;
    call_with_traces(&collector, "http/protobuf").await;
    let requests = collector.requests();
    let request = requests.first().expect("one export");
    assert_eq!(request.path, "/v1/traces");
    assert_eq!(
        request.header("content-type"),
        Some("application/x-protobuf")
    );
    // The span's name is a string field of the protobuf message.
    let name = format!("execute_tool {ECHO}");
    assert!(
        request
            .body
            .windows(name.len())
            .any(|w| w == name.as_bytes()),
        "{} bytes without the span's name",
        request.body.len()
    );
}

#[tokio::test]
async fn an_unreachable_collector_does_not_fail_the_command() {
    let url = oscova_test_support::http::closed_port_url().await;
    let mut cmd = support::oscova(&["tools", "call", ECHO, "--args", r#"{"text":"hi"}"#]);
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", url);
    let (code, stdout, _) = support::run_async(cmd, None).await;
    assert_eq!(code, 0);
    assert!(stdout.contains("hi"), "{stdout}");
}

/// A trace id and span id a client would send.
const CLIENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";

#[tokio::test]
async fn an_mcp_request_continues_the_clients_trace() {
    use rmcp::ServiceExt as _;
    use rmcp::model::CallToolRequestParams;
    use std::process::Stdio;

    let collector = TestServer::start(|_| Reply::json(200, json!({}))).await;
    let mut cmd = tokio::process::Command::new(support::BIN);
    cmd.arg("mcp");
    support::clean_env(cmd.as_std_mut());
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let client = ().serve(transport).await.unwrap();
    let params: CallToolRequestParams = serde_json::from_value(json!({
        "name": ECHO,
        "arguments": {"text": "hi"},
        "_meta": {"traceparent": format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01")},
    }))
    .unwrap();
    let result = client.call_tool(params).await.unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    // Closing stdin ends the server, which flushes its traces as it exits.
    client.cancel().await.unwrap();
    let status = tokio::time::timeout(std::time::Duration::from_secs(20), child.wait())
        .await
        .expect("the server exits once its client is gone")
        .unwrap();
    assert!(status.success(), "{status:?}");

    let spans = spans(&collector);
    let request_name = format!("tools/call {ECHO}");
    let (_, request) = spans
        .iter()
        .find(|(_, s)| s["name"] == request_name.as_str())
        .unwrap_or_else(|| panic!("no {request_name} span in {spans:#?}"));
    assert_eq!(request["traceId"], CLIENT_TRACE, "{request:#}");
    assert_eq!(request["parentSpanId"], CLIENT_SPAN, "{request:#}");
    assert_eq!(request["kind"], 2, "a server span: {request:#}");
    assert_eq!(
        attribute(request, "mcp.method.name").as_deref(),
        Some("tools/call")
    );
    assert_eq!(
        attribute(request, "gen_ai.tool.name").as_deref(),
        Some(ECHO)
    );
    let tool_name = format!("execute_tool {ECHO}");
    let (_, tool) = spans
        .iter()
        .find(|(_, s)| s["name"] == tool_name.as_str())
        .unwrap_or_else(|| panic!("no {tool_name} span in {spans:#?}"));
    assert_eq!(tool["traceId"], CLIENT_TRACE);
    assert_eq!(tool["parentSpanId"], request["spanId"], "{tool:#}");
}

#[tokio::test]
async fn a_clients_trace_state_reaches_the_collector_redacted() {
    use rmcp::ServiceExt as _;
    use rmcp::model::CallToolRequestParams;
    use std::process::Stdio;

    // A secret the host knows (a configured credential), sent back by a
    // client inside its trace state, as a key and as a value.
    const KEY: &str = "sk-trace-0123456789abcdef";
    let config = support::temp_dir("trace-state").join("config.toml");
    std::fs::write(
        &config,
        format!("[credentials]\n\"acme.api_key\" = \"{KEY}\"\n"),
    )
    .unwrap();
    let collector = TestServer::start(|_| Reply::json(200, json!({}))).await;
    let mut cmd = tokio::process::Command::new(support::BIN);
    cmd.arg("--config").arg(&config).arg("mcp");
    support::clean_env(cmd.as_std_mut());
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let client = ().serve(transport).await.unwrap();
    let params: CallToolRequestParams = serde_json::from_value(json!({
        "name": ECHO,
        "arguments": {"text": "hi"},
        "_meta": {
            "traceparent": format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"),
            "tracestate": format!("vendor=token-{KEY},{KEY}=v,plain=kept"),
        },
    }))
    .unwrap();
    let result = client.call_tool(params).await.unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    client.cancel().await.unwrap();
    let status = tokio::time::timeout(std::time::Duration::from_secs(20), child.wait())
        .await
        .expect("the server exits once its client is gone")
        .unwrap();
    assert!(status.success(), "{status:?}");

    let requests = collector.requests();
    assert!(!requests.is_empty(), "no export");
    for request in &requests {
        let body = String::from_utf8_lossy(&request.body);
        assert!(
            !body.contains(KEY),
            "the secret reached the collector: {body}"
        );
    }
    let spans = spans(&collector);
    let request_name = format!("tools/call {ECHO}");
    let (_, request) = spans
        .iter()
        .find(|(_, s)| s["name"] == request_name.as_str())
        .unwrap_or_else(|| panic!("no {request_name} span in {spans:#?}"));
    // The client's trace goes on, with its trace state less the secret.
    assert_eq!(request["traceId"], CLIENT_TRACE, "{request:#}");
    assert_eq!(
        request["traceState"], "vendor=token-[REDACTED],plain=kept",
        "{request:#}"
    );
}
