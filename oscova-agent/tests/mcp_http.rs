//! The streamable HTTP server on 127.0.0.1 with an ephemeral port, driven
//! by rmcp's client, the official Python SDK's client (pip package `mcp`,
//! installed by `scripts/ensure-python-mcp.sh`) and raw HTTP for what no
//! client would send. Needs the `mcp-http` feature
//! (`cargo test -p oscova-agent --features mcp-http --test mcp_http`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use oscova_agent::mcp::http::{BoundMcpServer, McpHttpError, McpHttpServer, UserToken};
use oscova_agent::mcp::{SERVER_BUSY, ToolNames};
use oscova_core::prelude::*;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;
use tokio::time::timeout;

/// What the tools tell the test: a call has started, a call saw its
/// cancellation.
#[derive(Default)]
pub struct Gate {
    entered: Notify,
    cancelled: AtomicBool,
}

/// Tools for the tests, one instance per user.
pub struct PostToolset {
    user: String,
    gate: Option<Arc<Gate>>,
}

#[toolset]
impl PostToolset {
    /// Says whose scope serves the call.
    pub fn whoami(&self) -> String {
        self.user.clone()
    }

    /// Returns the text.
    pub fn echo(
        /// The text.
        text: String,
    ) -> String {
        text
    }

    /// Sleeps, then answers.
    pub async fn nap(
        &self,
        /// How long, in milliseconds.
        ms: u64,
    ) -> String {
        if let Some(gate) = &self.gate {
            gate.entered.notify_one();
        }
        tokio::time::sleep(Duration::from_millis(ms)).await;
        "rested".to_owned()
    }

    /// Asks the person to confirm, twice.
    pub async fn twice(&self, invocation: &ToolInvocation) -> Result<String, String> {
        let mut said = Vec::new();
        for question in ["First?", "Second?"] {
            let yes = invocation
                .confirm(question)
                .await
                .map_err(|e| e.to_string())?;
            said.push(if yes { "yes" } else { "no" });
        }
        Ok(format!("{} for {}", said.join(" "), self.user))
    }

    /// Waits until the call is cancelled.
    pub async fn hold(&self, invocation: &ToolInvocation) -> String {
        // The host stops awaiting a cancelled call at once, so the call
        // learns of it by being dropped.
        let _ended = self.gate.clone().map(Ended);
        if let Some(gate) = &self.gate {
            gate.entered.notify_one();
        }
        invocation.cancellation_token().cancelled().await;
        "cancelled".to_owned()
    }
}

/// Marks a call as ended, however it ended.
struct Ended(Arc<Gate>);

impl Drop for Ended {
    fn drop(&mut self) {
        self.0.cancelled.store(true, Ordering::SeqCst);
    }
}

/// The test plugin.
#[plugin(id = "test.post")]
pub struct PostPlugin;

impl AgentPlugin for PostPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|ctx: &AgentPluginContext| PostToolset {
            user: ctx.user().id().to_owned(),
            gate: ctx.service::<Gate>(),
        });
    }
}

/// A second toolset whose `echo` clashes with the first's short name.
pub struct OtherToolset;

#[toolset]
impl OtherToolset {
    /// Returns the text too.
    pub fn echo(
        /// The text.
        text: String,
    ) -> String {
        text
    }
}

/// The clashing plugin.
#[plugin(id = "test.other")]
pub struct OtherPlugin;

impl AgentPlugin for OtherPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_: &AgentPluginContext| OtherToolset);
    }
}

const ALICE: &str = "alice-token-1";
const BOB: &str = "bob-token-2";
const PATIENCE: Duration = Duration::from_secs(20);
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// A host with the test plugin, and the gate its tools report to.
fn host() -> (PluginHost, Arc<Gate>) {
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![PostPlugin])
        .service(Gate::default())
        .build()
        .unwrap();
    let gate = host.service::<Gate>().unwrap();
    (host, gate)
}

fn with_tokens(server: McpHttpServer) -> McpHttpServer {
    server.tokens([
        UserToken::from_token("alice", ALICE),
        UserToken::from_sha256_hex("bob", &oscova_agent::mcp::http::token_sha256_hex(BOB)).unwrap(),
    ])
}

/// A server being served, and how to stop it.
struct Running {
    addr: SocketAddr,
    url: String,
    stop: Option<oneshot::Sender<()>>,
    done: JoinHandle<Result<(), McpHttpError>>,
}

impl Running {
    async fn start(server: McpHttpServer) -> Self {
        let bound: BoundMcpServer = server.bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let addr = bound.local_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        let done = tokio::spawn(bound.serve_until(async {
            let _ = stopped.await;
        }));
        Self {
            addr,
            url: format!("http://{addr}/mcp"),
            stop: Some(stop),
            done,
        }
    }

    async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        timeout(PATIENCE, self.done)
            .await
            .expect("the server stops")
            .unwrap()
            .unwrap();
    }
}

async fn connect(url: &str, token: Option<&str>) -> RunningService<RoleClient, ()> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    timeout(PATIENCE, ().serve(transport))
        .await
        .expect("initialize answers")
        .unwrap()
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    name: &str,
    args: Value,
) -> Result<CallToolResult, rmcp::ServiceError> {
    let params = CallToolRequestParams::new(name.to_owned()).with_arguments(object(args));
    timeout(PATIENCE, client.call_tool(params))
        .await
        .expect("the call answers")
}

/// A raw POST to the server, with these extra headers.
async fn post(url: &str, body: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_owned());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

/// Runs the Python SDK's client: initialize, list, call `tool`.
fn python_client(url: &str, token: Option<&str>, tool: &str, args: Value) -> Value {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/python/mcp_http_client.py"
    );
    let output = std::process::Command::new(oscova_test_support::python::mcp_python())
        .arg(script)
        .arg(url)
        .arg(token.unwrap_or("-"))
        .arg(tool)
        .arg(args.to_string())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the Python client failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_choose_the_user_and_each_user_is_served_from_their_own_scope() {
    let server = Running::start(with_tokens(McpHttpServer::new(host().0))).await;

    let alice = connect(&server.url, Some(ALICE)).await;
    let bob = connect(&server.url, Some(BOB)).await;
    let whoami = "test_post__post__whoami";
    assert_eq!(
        text(&call(&alice, whoami, json!({})).await.unwrap()),
        "alice"
    );
    assert_eq!(text(&call(&bob, whoami, json!({})).await.unwrap()), "bob");
    assert_eq!(
        text(&call(&alice, whoami, json!({})).await.unwrap()),
        "alice"
    );

    // The official Python SDK's client, in the same process's server.
    let url = server.url.clone();
    let py = tokio::task::spawn_blocking(move || python_client(&url, Some(BOB), whoami, json!({})))
        .await
        .unwrap();
    assert_eq!(py["text"], "bob", "{py}");
    assert_eq!(py["is_error"], false, "{py}");

    // No token, an unknown one, another scheme: 401 with the challenge.
    for auth in [None, Some("Bearer nope"), Some("Basic YWxpY2U6eA==")] {
        let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("authorization", *a)).collect();
        let response = post(&server.url, INITIALIZE, &headers).await;
        assert_eq!(response.status(), 401, "{auth:?}");
        let challenge = response.headers()["www-authenticate"].to_str().unwrap();
        assert!(challenge.starts_with("Bearer"), "{challenge}");
    }
    let python_401 = std::process::Command::new(oscova_test_support::python::mcp_python())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/python/mcp_http_client.py"
        ))
        .args([server.url.as_str(), "wrong", whoami])
        .output()
        .unwrap();
    let refusal = String::from_utf8_lossy(&python_401.stdout);
    assert_eq!(
        python_401.status.code(),
        Some(3),
        "the SDK was refused: {refusal}"
    );
    assert!(refusal.contains("refused"), "{refusal}");

    // A session belongs to the user who opened it.
    let opened = post(
        &server.url,
        INITIALIZE,
        &[("authorization", &format!("Bearer {ALICE}"))],
    )
    .await;
    assert_eq!(opened.status(), 200);
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let as_bob = [
        ("authorization", format!("Bearer {BOB}")),
        ("mcp-session-id", session.clone()),
        ("mcp-protocol-version", "2025-06-18".to_owned()),
    ];
    let as_bob: Vec<(&str, &str)> = as_bob.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(post(&server.url, list, &as_bob).await.status(), 404);

    alice.cancel().await.unwrap();
    bob.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origins_other_than_loopback_and_the_allowed_ones_are_forbidden() {
    let server = Running::start(
        McpHttpServer::new(host().0)
            .default_user("carol")
            .allowed_origins(["https://app.example.com"]),
    )
    .await;
    for (origin, status) in [
        ("http://evil.example", 403),
        ("null", 403),
        ("http://localhost:3000", 200),
        ("http://127.0.0.1:9", 200),
        ("https://app.example.com", 200),
    ] {
        let response = post(&server.url, INITIALIZE, &[("origin", origin)]).await;
        assert_eq!(response.status(), status, "{origin}");
    }
    // Bound to loopback, a foreign Host is DNS rebinding.
    let response = post(&server.url, INITIALIZE, &[("host", "evil.example")]).await;
    assert_eq!(response.status(), 403);
    let elsewhere = format!("http://{}/other", server.addr);
    assert_eq!(post(&elsewhere, INITIALIZE, &[]).await.status(), 404);

    // Without tokens every request is the default user's.
    let url = server.url.clone();
    let py = tokio::task::spawn_blocking(move || {
        python_client(&url, None, "test_post__post__whoami", json!({}))
    })
    .await
    .unwrap();
    assert_eq!(py["text"], "carol", "{py}");
    server.shutdown().await;
}

#[tokio::test]
async fn without_tokens_only_loopback_addresses_are_served() {
    let refused = McpHttpServer::new(host().0)
        .bind("0.0.0.0:0".parse().unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(refused, McpHttpError::NoTokens { .. }),
        "{refused}"
    );
    assert!(refused.to_string().contains("[[mcp.tokens]]"), "{refused}");
    let with_tokens = with_tokens(McpHttpServer::new(host().0))
        .bind("0.0.0.0:0".parse().unwrap())
        .await;
    assert!(with_tokens.is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_and_calls_in_flight_are_bounded() {
    let (served, gate) = host();
    let server = Running::start(
        McpHttpServer::new(served)
            .max_body_bytes(4096)
            .max_in_flight(1)
            .max_in_flight_total(2),
    )
    .await;

    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"pad":"{}"}}}}"#,
        "x".repeat(8192)
    );
    assert_eq!(post(&server.url, &big, &[]).await.status(), 413);

    // One session: its second call past the bound of 1 is refused at once.
    let one = Arc::new(connect(&server.url, None).await);
    let first = {
        let one = one.clone();
        tokio::spawn(async move { call(&one, "test_post__post__nap", json!({"ms": 400})).await })
    };
    gate.entered.notified().await;
    let busy = call(&one, "test_post__post__echo", json!({"text": "x"}))
        .await
        .unwrap_err();
    match busy {
        rmcp::ServiceError::McpError(e) => {
            assert_eq!(e.code, SERVER_BUSY, "{e:?}");
            assert_eq!(e.data, Some(json!({"max_in_flight": 1})));
        }
        other => panic!("{other:?}"),
    }

    // Across sessions: two calls run, the third is refused by the server's bound.
    let two = Arc::new(connect(&server.url, None).await);
    let second = {
        let two = two.clone();
        tokio::spawn(async move { call(&two, "test_post__post__nap", json!({"ms": 400})).await })
    };
    gate.entered.notified().await;
    let three = connect(&server.url, None).await;
    match call(&three, "test_post__post__echo", json!({"text": "x"})).await {
        Err(rmcp::ServiceError::McpError(e)) => {
            assert_eq!(e.code, SERVER_BUSY, "{e:?}");
            assert_eq!(e.data, Some(json!({"max_in_flight_total": 2})));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(text(&first.await.unwrap().unwrap()), "rested");
    assert_eq!(text(&second.await.unwrap().unwrap()), "rested");
    // With the calls done, the same session is served again.
    assert_eq!(
        text(
            &call(&three, "test_post__post__echo", json!({"text": "y"}))
                .await
                .unwrap()
        ),
        "y"
    );

    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_left_idle_past_the_timeout_are_closed() {
    let server =
        Running::start(McpHttpServer::new(host().0).idle_timeout(Duration::from_millis(300))).await;
    let opened = post(&server.url, INITIALIZE, &[]).await;
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    drop(opened);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let response = post(
        &server.url,
        list,
        &[
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "2025-06-18"),
        ],
    )
    .await;
    assert_eq!(response.status(), 404, "the idle session expired");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_calls_finish_then_cancels_what_outlives_the_grace() {
    // A call shorter than the grace finishes with its result.
    let (served, gate) = host();
    let server =
        Running::start(McpHttpServer::new(served).shutdown_grace(Duration::from_secs(10))).await;
    let client = Arc::new(connect(&server.url, None).await);
    let napping = {
        let client = client.clone();
        tokio::spawn(async move { call(&client, "test_post__post__nap", json!({"ms": 300})).await })
    };
    gate.entered.notified().await;
    let (addr, url) = (server.addr, server.url.clone());
    server.shutdown().await;
    assert_eq!(text(&napping.await.unwrap().unwrap()), "rested");
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "the listener is closed"
    );
    drop(url);

    // A call that outlives the grace is cancelled, and the server stops.
    let (served, gate) = host();
    let server =
        Running::start(McpHttpServer::new(served).shutdown_grace(Duration::from_millis(200))).await;
    let client = Arc::new(connect(&server.url, None).await);
    let holding = {
        let client = client.clone();
        tokio::spawn(async move { call(&client, "test_post__post__hold", json!({})).await })
    };
    gate.entered.notified().await;
    server.shutdown().await;
    // The call ends in its own task, as soon as it hears of the cancel.
    let ended = timeout(PATIENCE, async {
        while !gate.cancelled.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "the call still running after the grace was cancelled"
    );
    holding.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_names_serve_tool_segments_and_refuse_clashes() {
    let server = Running::start(McpHttpServer::new(host().0).tool_names(ToolNames::Short)).await;
    let client = connect(&server.url, None).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["whoami", "echo", "nap", "twice", "hold"]);
    assert_eq!(
        text(
            &call(&client, "echo", json!({"text": "short"}))
                .await
                .unwrap()
        ),
        "short"
    );
    match call(&client, "test_post__post__echo", json!({"text": "x"})).await {
        Err(rmcp::ServiceError::McpError(e)) => assert_eq!(e.code.0, -32602, "{e:?}"),
        other => panic!("wire names are not served beside short ones: {other:?}"),
    }
    client.cancel().await.unwrap();
    server.shutdown().await;

    let clashing = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![PostPlugin, OtherPlugin])
        .build()
        .unwrap();
    let refused = McpHttpServer::new(clashing)
        .tool_names(ToolNames::Short)
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap_err();
    let message = refused.to_string();
    assert!(matches!(refused, McpHttpError::NameClash(_)), "{message}");
    assert!(
        message.contains("`echo`")
            && message.contains("test_post__post__echo")
            && message.contains("test_other__other__echo"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_2026_07_28_requests_are_each_served_from_their_users_scope() {
    let server = Running::start(with_tokens(McpHttpServer::new(host().0))).await;
    let body = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_post__post__whoami","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    for (token, user) in [(ALICE, "alice"), (BOB, "bob"), (ALICE, "alice")] {
        let auth = format!("Bearer {token}");
        let response = post(
            &server.url,
            body,
            &[
                ("authorization", &auth),
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "test_post__post__whoami"),
            ],
        )
        .await;
        assert_eq!(response.status(), 200);
        assert!(
            response.headers().get("mcp-session-id").is_none(),
            "no session in 2026-07-28"
        );
        let text = response.text().await.unwrap();
        let data = text
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .unwrap_or(&text);
        let answer: Value = serde_json::from_str(data).unwrap();
        assert_eq!(answer["id"], 7, "{answer}");
        assert_eq!(answer["result"]["content"][0]["text"], user, "{answer}");
    }
    let anonymous = post(&server.url, body, &[("mcp-protocol-version", "2026-07-28")]).await;
    assert_eq!(anonymous.status(), 401);
    server.shutdown().await;
}

/// One stateless 2026-07-28 `tools/call` of `twice` by `token`'s user, with
/// `extra` params (the answer and the state of an earlier round): the
/// JSON-RPC answer.
async fn round(url: &str, token: &str, extra: Value) -> Value {
    let mut params = json!({
        "name": "test_post__post__twice",
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        },
    });
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params});
    let auth = format!("Bearer {token}");
    let response = post(
        url,
        &body.to_string(),
        &[
            ("authorization", &auth),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "test_post__post__twice"),
        ],
    )
    .await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    let data = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or(&text);
    serde_json::from_str(data).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_07_28_question_waits_between_stateless_requests_for_its_own_user() {
    let server = Running::start(with_tokens(McpHttpServer::new(host().0))).await;
    let accept = |state: &Value| {
        json!({
            "requestState": state,
            "inputResponses": {"oscova.ask": {"action": "accept", "content": {}}},
        })
    };

    let first = round(&server.url, ALICE, json!({})).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let ask = &result["inputRequests"]["oscova.ask"];
    assert_eq!(ask["method"], "elicitation/create", "{first}");
    assert_eq!(ask["params"]["message"], "First?", "{first}");
    let state = result["requestState"].clone();

    // Bob cannot answer Alice's call, even with its state.
    let stolen = round(&server.url, BOB, accept(&state)).await;
    assert_eq!(stolen["error"]["code"], -32602, "{stolen}");

    // Each round is a request of its own; the call waits between them.
    let second = round(&server.url, ALICE, accept(&state)).await;
    assert_eq!(second["result"]["resultType"], "input_required", "{second}");
    assert_eq!(
        second["result"]["inputRequests"]["oscova.ask"]["params"]["message"],
        "Second?"
    );
    let next = second["result"]["requestState"].clone();
    assert_ne!(next, state, "a new handle for each round");
    let done = round(&server.url, ALICE, accept(&next)).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "yes yes for alice",
        "{done}"
    );

    // Each handle was good once.
    let replayed = round(&server.url, ALICE, accept(&state)).await;
    assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
    server.shutdown().await;
}
