//! The streamable HTTP server on 127.0.0.1 with an ephemeral port, driven
//! by rmcp's client, the official Python SDK's client (pip package `mcp`,
//! installed by `scripts/ensure-python-mcp.sh`) and raw HTTP for what no
//! client would send. Needs the `http` feature (on by default). The
//! fixtures are here; the tests are in [`users`], [`sessions`],
//! [`connections`] and [`limits`].

mod connections;
mod limits;
mod oauth;
mod sessions;
mod tasks;
mod users;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod waits;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use oscova_core::prelude::*;
use oscova_mcp::http::{BoundMcpServer, McpHttpError, McpHttpServer, UserToken};
use oscova_mcp::{SERVER_BUSY, ToolNames};
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
        UserToken::from_sha256_hex("bob", &oscova_mcp::http::token_sha256_hex(BOB)).unwrap(),
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

/// rmcp's reqwest has TLS without a provider when a build unifies
/// oscova.mcp's features in; its `Client::new()` then needs a process
/// default, which `ring` is.
pub(crate) fn tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

async fn connect(url: &str, token: Option<&str>) -> RunningService<RoleClient, ()> {
    tls_provider();
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
