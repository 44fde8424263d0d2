//! The MCP server over an in-memory duplex: rmcp's own client for the
//! protocol, raw lines for the protocol errors.

use std::time::Duration;

use oscova_core::prelude::*;
use oscova_mcp::{McpServer, SERVER_BUSY};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, JsonObject};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::time::timeout;

/// Tools for the tests.
pub struct DeskToolset;

#[toolset]
impl DeskToolset {
    /// Returns the text.
    pub fn echo(
        /// The text.
        text: String,
    ) -> String {
        text
    }

    /// Counts to `to`, reporting each step.
    pub async fn count(
        /// Where to stop.
        to: u32,
        invocation: &ToolInvocation,
    ) -> u32 {
        for step in 1..=to {
            invocation.report(ToolProgress::ratio(
                format!("at {step}"),
                f64::from(step),
                Some(f64::from(to)),
            ));
            tokio::task::yield_now().await;
        }
        to
    }

    /// Waits until the call is cancelled.
    pub async fn wait(&self, invocation: &ToolInvocation) -> String {
        invocation.cancellation_token().cancelled().await;
        "cancelled".to_owned()
    }

    /// Clears the desk.
    #[tool(approval = Required)]
    pub fn clear() -> String {
        "cleared".to_owned()
    }
}

/// The test plugin.
#[plugin(id = "test.desk")]
pub struct DeskPlugin;

impl AgentPlugin for DeskPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_: &AgentPluginContext| DeskToolset);
    }
}

const ECHO: &str = "test_desk__desk__echo";
const COUNT: &str = "test_desk__desk__count";
const WAIT: &str = "test_desk__desk__wait";
const CLEAR: &str = "test_desk__desk__clear";
const PATIENCE: Duration = Duration::from_secs(10);

fn server() -> McpServer {
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![DeskPlugin])
        .build()
        .unwrap();
    McpServer::new(host.user_scope(UserInfo::new("alice")))
}

/// Serves `server` on one end of a duplex; the other end is returned.
fn serve(server: McpServer) -> DuplexStream {
    let (client, served) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(served);
    tokio::spawn(server.serve_io(read, write));
    client
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

#[tokio::test]
async fn rmcp_clients_list_and_call_tools_over_a_duplex() {
    let client = ().serve(serve(server())).await.unwrap();
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "oscova");

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, [ECHO, COUNT, WAIT, CLEAR]);

    let result = client
        .call_tool(CallToolRequestParams::new(ECHO).with_arguments(object(json!({"text": "hi"}))))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    assert_eq!(
        serde_json::to_value(&result.content).unwrap()[0]["text"],
        "hi"
    );

    let bad = client
        .call_tool(CallToolRequestParams::new(ECHO).with_arguments(object(json!({"text": 5}))))
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true), "bad arguments are a tool error");

    let unknown = client
        .call_tool(CallToolRequestParams::new("no__such__tool"))
        .await
        .unwrap_err();
    match unknown {
        rmcp::ServiceError::McpError(e) => assert_eq!(e.code.0, -32602, "{e:?}"),
        other => panic!("{other:?}"),
    }
    client.cancel().await.unwrap();
}

/// A client that writes raw lines and reads the server's lines.
struct Raw {
    read: BufReader<ReadHalf<DuplexStream>>,
    write: WriteHalf<DuplexStream>,
}

impl Raw {
    /// Connects and goes through `initialize`.
    async fn start(server: McpServer) -> Self {
        let (read, write) = tokio::io::split(serve(server));
        let mut raw = Self {
            read: BufReader::new(read),
            write,
        };
        raw.send(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
        )
        .await;
        let answer = raw.next().await;
        assert_eq!(answer["id"], 0, "{answer}");
        assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
        raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        raw
    }

    async fn send(&mut self, line: &str) {
        self.write_bytes(line.as_bytes()).await;
        self.write_bytes(b"\n").await;
    }

    async fn write_bytes(&mut self, bytes: &[u8]) {
        timeout(PATIENCE, self.write.write_all(bytes))
            .await
            .expect("the server reads on")
            .unwrap();
    }

    /// The next line from the server, as JSON.
    async fn next(&mut self) -> Value {
        let mut line = String::new();
        let read = timeout(PATIENCE, self.read.read_line(&mut line))
            .await
            .expect("the server answers")
            .unwrap();
        assert!(read > 0, "the server closed the stream");
        serde_json::from_str(&line).unwrap()
    }

    /// Sends a ping with `id` and returns the answer to it, with the
    /// lines that came before it.
    async fn ping(&mut self, id: u64) -> Vec<Value> {
        self.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#))
            .await;
        self.until(id).await
    }

    /// Lines up to and including the answer to `id`.
    async fn until(&mut self, id: u64) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let line = self.next().await;
            let done = line["id"] == id;
            seen.push(line);
            if done {
                return seen;
            }
        }
    }
}

/// Asserts that `lines` are a -32700 answer with `"id": null` and then
/// the answer to the ping that followed.
fn assert_parse_error_then_pong(lines: &[Value], case: &str) {
    let [error, pong] = lines else {
        panic!("{case}: expected two answers, got {lines:?}");
    };
    assert_eq!(error["error"]["code"], -32700, "{case}: {error}");
    assert_eq!(error["jsonrpc"], "2.0", "{case}: {error}");
    let members = error.as_object().unwrap();
    assert!(
        members.get("id") == Some(&Value::Null),
        "{case}: `id` must be present and null: {error}"
    );
    assert_eq!(pong["result"], json!({}), "{case}: still serving: {pong}");
}

#[tokio::test]
async fn every_unparsable_line_gets_a_parse_error_and_the_server_serves_on() {
    let mut raw = Raw::start(server()).await;
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let cases: [(&str, &str); 5] = [
        ("not json", "{this is not json"),
        (
            "a lone surrogate",
            r#"{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"test_desk__desk__echo","arguments":{"text":"\ud800"}}}"#,
        ),
        (
            "an id of 1e400",
            r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#,
        ),
        ("100k-deep nesting", &deep),
        ("control characters", "\u{1}\u{2}"),
    ];
    for (n, (case, line)) in (1u64..).zip(cases) {
        raw.send(line).await;
        assert_parse_error_then_pong(&raw.ping(n).await, case);
    }

    // Invalid UTF-8 bytes, then a 20 MB line: no memory for it is kept,
    // and the answer comes as soon as the limit is passed.
    raw.write_bytes(b"{\"a\":\"\xff\xfe\"}\n").await;
    assert_parse_error_then_pong(&raw.ping(10).await, "invalid UTF-8");
    let big = vec![b'x'; 20 * 1024 * 1024];
    raw.write_bytes(&big).await;
    raw.write_bytes(b"\n").await;
    assert_parse_error_then_pong(&raw.ping(11).await, "a 20 MB line");
}

#[tokio::test]
async fn wrong_shapes_are_invalid_requests_and_bad_notifications_get_no_answer() {
    let mut raw = Raw::start(server()).await;
    raw.send(r#"{"jsonrpc":"2.0","id":"x7"}"#).await;
    let lines = raw.ping(1).await;
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["error"]["code"], -32600, "{lines:?}");
    assert_eq!(lines[0]["id"], "x7", "the id is kept when readable");

    // A notification is never answered, even one that fails to parse.
    raw.send(r#"{"jsonrpc":"1.0","method":"notifications/whatever"}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/unknown"}"#)
        .await;
    raw.send("").await;
    let lines = raw.ping(2).await;
    assert_eq!(lines.len(), 1, "{lines:?}");
}

#[tokio::test]
async fn tools_call_with_missing_or_ill_typed_params_is_invalid_params() {
    let mut raw = Raw::start(server()).await;
    for (id, params) in [
        (1, String::new()),
        (2, r#","params":{"arguments":{}}"#.to_owned()),
        (3, r#","params":{"name":5}"#.to_owned()),
        (
            4,
            format!(r#","params":{{"name":"{ECHO}","arguments":"text"}}"#),
        ),
        (5, r#","params":[1,2]"#.to_owned()),
    ] {
        raw.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call"{params}}}"#
        ))
        .await;
        let lines = raw.until(id).await;
        let answer = lines.last().unwrap();
        assert_eq!(answer["error"]["code"], -32602, "params {params}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("tools/call"), "{message}");
    }
    raw.send(r#"{"jsonrpc":"2.0","id":6,"method":"no/such/method"}"#)
        .await;
    let answer = raw.until(6).await.pop().unwrap();
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    assert_eq!(raw.ping(7).await.len(), 1);
}

#[tokio::test]
async fn calls_past_the_bound_are_refused_at_once_until_one_finishes() {
    let mut raw = Raw::start(server().max_in_flight(2).unwrap()).await;
    let wait = |id: u64| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{WAIT}","arguments":{{}}}}}}"#
        )
    };
    raw.send(&wait(1)).await;
    raw.send(&wait(2)).await;
    // The two waiting calls may start in either order; give them a moment.
    tokio::time::sleep(Duration::from_millis(100)).await;
    raw.send(&wait(3)).await;
    let lines = raw.until(3).await;
    assert_eq!(lines.len(), 1, "nothing else finished: {lines:?}");
    let busy = &lines[0]["error"];
    assert_eq!(busy["code"], SERVER_BUSY.0, "{busy}");
    assert_eq!(busy["data"]["max_in_flight"], 2, "{busy}");
    assert!(busy["message"].as_str().unwrap().contains("busy"), "{busy}");

    // Pings still go through, and a cancelled call frees its place.
    assert_eq!(raw.ping(4).await.len(), 1);
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#)
        .await;
    let mut echoed = None;
    for attempt in 0..50u64 {
        let id = 100 + attempt;
        raw.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{ECHO}","arguments":{{"text":"in"}}}}}}"#
        ))
        .await;
        let answer = raw.until(id).await.pop().unwrap();
        if answer["error"]["code"] == SERVER_BUSY.0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        }
        echoed = Some(answer);
        break;
    }
    let echoed = echoed.expect("a place was freed");
    assert_eq!(echoed["result"]["content"][0]["text"], "in", "{echoed}");
}

#[tokio::test]
async fn progress_goes_before_the_answer() {
    let mut raw = Raw::start(server()).await;
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{COUNT}","arguments":{{"to":3}},"_meta":{{"progressToken":"p1"}}}}}}"#
    ))
    .await;
    let lines = raw.until(1).await;
    let progress: Vec<f64> = lines
        .iter()
        .filter(|l| l["method"] == "notifications/progress")
        .map(|l| l["params"]["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0], "{lines:?}");
    assert_eq!(lines.last().unwrap()["result"]["content"][0]["text"], "3");
}

#[tokio::test]
async fn approval_is_the_hosts_unless_the_server_approves_itself() {
    let call = || CallToolRequestParams::new(CLEAR);
    // No approval handler on the host: nobody can say yes.
    let client = ().serve(serve(server())).await.unwrap();
    let refused = client.call_tool(call()).await.unwrap();
    assert_eq!(refused.is_error, Some(true), "{refused:?}");
    assert_eq!(refused.structured_content, Some(json!({"error": "denied"})));
    client.cancel().await.unwrap();

    let client = ().serve(serve(server().allow_approval_required(true))).await.unwrap();
    let ran = client.call_tool(call()).await.unwrap();
    assert_eq!(ran.is_error, Some(false), "{ran:?}");
    assert_eq!(
        serde_json::to_value(&ran.content).unwrap()[0]["text"],
        "cleared"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn nesting_just_under_the_parser_limit_is_served_not_a_crash() {
    let mut raw = Raw::start(server()).await;
    // serde_json stops at 128 levels; the envelope and `params` take three.
    let depth = 124;
    let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{ECHO}","arguments":{{"text":{nested}}}}}}}"#
    ))
    .await;
    let answer = raw.until(1).await.pop().unwrap();
    assert_eq!(
        answer["result"]["isError"], true,
        "a bad argument: {answer}"
    );
    assert_eq!(raw.ping(2).await.len(), 1);
}
