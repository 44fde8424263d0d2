//! A server for one test: a plugin host whose model provider is
//! scripted, users `alice` and `bob` by token, and the SDK's client.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use oscova_a2a::{A2aServer, CardConfig, MemoryTaskStore, Skill, TaskStore};
use oscova_agent::session::agent::AgentHost;
use oscova_agent::session::{MemoryStore, SessionStore};
use oscova_core::context::Credentials;
use oscova_core::prelude::*;
use oscova_core::provider::model::{
    ChatMessage, ChatRequest, ChatResponse, ChatRole, ChatStreamEvent, ModelError, ModelProvider,
    ModelProviderConfig, ToolCallRequest,
};
use oscova_core::provider::{BoxFuture, ProviderTypeKey};
use oscova_serve::{OAuthConfig, UserToken};
use serde_json::Value;

pub(crate) const ALICE: &str = "alice-token";
pub(crate) const BOB: &str = "bob-token";

/// Answers `You said: <the last user text>`; a text starting with `slow`
/// waits a minute (the run's cancellation ends it sooner).
struct ScriptedModel;

impl ModelProvider for ScriptedModel {
    fn type_key(&self) -> ProviderTypeKey {
        "scripted".into()
    }

    fn display_name(&self) -> &str {
        "Scripted"
    }

    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            if let Some(result) = request.messages.last().filter(|m| m.role == ChatRole::Tool) {
                let text = format!("Tool said: {}", result.content);
                return Ok(ChatResponse {
                    message: ChatMessage::assistant(text, Vec::new()),
                    finish_reason: Some("stop".into()),
                    usage: None,
                });
            }
            let last = request
                .messages
                .iter()
                .rev()
                .find(|m| m.role == ChatRole::User)
                .map(|m| m.content.clone())
                .unwrap_or_default();
            let tool = if last.starts_with("ask") {
                Some(GREET)
            } else if last.starts_with("key") {
                Some(LOOKUP)
            } else {
                None
            };
            if let Some(tool) = tool {
                let call = ToolCallRequest {
                    id: "call-1".into(),
                    name: tool.into(),
                    arguments: serde_json::json!({}),
                };
                return Ok(ChatResponse {
                    message: ChatMessage::assistant("", vec![call]),
                    finish_reason: Some("tool_calls".into()),
                    usage: None,
                });
            }
            if last.starts_with("slow") {
                tokio::time::sleep(Duration::from_secs(60)).await;
            }
            let users = request
                .messages
                .iter()
                .filter(|m| m.role == ChatRole::User)
                .count();
            let text = format!("You said: {last} ({users} user messages)");
            if let Some(sink) = request.stream {
                sink(ChatStreamEvent::Text(text.clone()));
            }
            Ok(ChatResponse {
                message: ChatMessage::assistant(text, Vec::new()),
                finish_reason: Some("stop".into()),
                usage: None,
            })
        })
    }
}

/// The wire name of [`GreeterToolset::greet`].
const GREET: &str = "test_a2a__greeter__greet";

/// A tool that asks the person.
pub(crate) struct GreeterToolset;

// `#[toolset]` serves the `pub fn`s of the block; the type is the crate's.
#[allow(unreachable_pub)]
#[toolset]
impl GreeterToolset {
    /// Asks the person's name and greets them.
    pub async fn greet(invocation: &ToolInvocation) -> Result<String, String> {
        let name = invocation
            .ask_text("What is your name?", None)
            .await
            .map_err(|e| e.to_string())?;
        Ok(format!("Hello, {name}"))
    }
}

/// The wire name of [`KeyedToolset::lookup`].
const LOOKUP: &str = "test_a2a__keyed__lookup";

/// The credential [`KeyedToolset::lookup`] needs.
pub(crate) const KEY: &str = "test.key";

/// A tool that needs the user's credential [`KEY`].
pub(crate) struct KeyedToolset {
    credentials: Credentials,
}

#[allow(unreachable_pub)]
#[toolset]
impl KeyedToolset {
    /// Looks the answer up with the user's key.
    pub fn lookup(&self) -> ToolResult {
        match self.credentials.get(KEY) {
            Some(_) => ToolResult::text("the key opened it"),
            None => ToolResult::missing_credential(
                format!("`{KEY}` is not set for you; set it under [users.<you>.credentials]"),
                [KEY],
            ),
        }
    }
}

#[plugin(id = "test.a2a")]
#[derive(Default)]
pub(crate) struct ScriptedPlugin;

impl AgentPlugin for ScriptedPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_: &AgentPluginContext| GreeterToolset);
        builder.add_toolset(|context: &AgentPluginContext| KeyedToolset {
            credentials: context.credentials().clone(),
        });
        builder.add_model_provider(|_: &oscova_core::ProviderContext| ScriptedModel);
    }
}

/// A running server; stopped when dropped.
pub(crate) struct Server {
    pub(crate) base: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: Option<tokio::task::JoinHandle<()>>,
}

impl Server {
    /// A server over a memory task store.
    pub(crate) async fn start() -> Self {
        Self::start_with(Arc::new(MemoryTaskStore::new())).await
    }

    /// A server over `store`.
    pub(crate) async fn start_with(store: Arc<dyn TaskStore>) -> Self {
        Self::start_full(store, None).await
    }

    /// One of a fleet on `store`: it leaves unfinished tasks alone.
    #[cfg(feature = "postgres")]
    pub(crate) async fn start_fleet(store: Arc<dyn TaskStore>) -> Self {
        Self::start_options(store, None, false, None, None).await
    }

    /// A server over `store` whose host calls out through `http`.
    pub(crate) async fn start_full(
        store: Arc<dyn TaskStore>,
        http: Option<oscova_core::HttpClient>,
    ) -> Self {
        Self::start_options(store, http, true, None, None).await
    }

    /// A server whose host resolves `KEY` for every user from `key`, as
    /// it is when the tool runs.
    pub(crate) async fn start_keyed(key: Arc<std::sync::Mutex<Option<String>>>) -> Self {
        let resolver = move |_: &UserInfo, name: &str| {
            let key = key.lock().unwrap().clone();
            key.filter(|_| name == KEY).map(SecretString::from)
        };
        let plugins = PluginHost::builder()
            .no_linked_plugins()
            .plugin_instance(ScriptedPlugin)
            .credentials(resolver);
        Self::start_host(
            plugins,
            Arc::new(MemoryStore::new()),
            Arc::new(MemoryTaskStore::new()),
            true,
            None,
            None,
        )
        .await
    }

    /// A server keeping sessions and tasks in the SQLite file at `path`,
    /// as `oscova serve` does by default.
    #[cfg(feature = "sqlite")]
    pub(crate) async fn start_sqlite(path: &std::path::Path) -> Self {
        let sessions = oscova_agent::session::SqliteStore::open(path)
            .await
            .unwrap();
        let tasks = oscova_a2a::SqliteTaskStore::open(path).await.unwrap();
        let plugins = PluginHost::builder()
            .no_linked_plugins()
            .plugin_instance(ScriptedPlugin);
        Self::start_host(
            plugins,
            Arc::new(sessions),
            Arc::new(tasks),
            true,
            None,
            None,
        )
        .await
    }

    /// A server whose streams close after `idle` without an event.
    pub(crate) async fn start_idle(idle: Duration) -> Self {
        Self::start_options(
            Arc::new(MemoryTaskStore::new()),
            None,
            true,
            Some(idle),
            None,
        )
        .await
    }

    /// A server that also accepts OAuth access tokens checked by `oauth`,
    /// for the resource `resource`.
    pub(crate) async fn start_oauth(oauth: OAuthConfig, resource: String) -> Self {
        Self::start_options(
            Arc::new(MemoryTaskStore::new()),
            None,
            true,
            None,
            Some((oauth, resource)),
        )
        .await
    }

    async fn start_options(
        store: Arc<dyn TaskStore>,
        http: Option<oscova_core::HttpClient>,
        fail_unfinished: bool,
        idle: Option<Duration>,
        oauth: Option<(OAuthConfig, String)>,
    ) -> Self {
        let mut plugins = PluginHost::builder()
            .no_linked_plugins()
            .plugin_instance(ScriptedPlugin);
        if let Some(http) = http {
            plugins = plugins.http_client(http);
        }
        let sessions = Arc::new(MemoryStore::new());
        Self::start_host(plugins, sessions, store, fail_unfinished, idle, oauth).await
    }

    async fn start_host(
        plugins: oscova_core::PluginHostBuilder,
        sessions: Arc<dyn SessionStore>,
        store: Arc<dyn TaskStore>,
        fail_unfinished: bool,
        idle: Option<Duration>,
        oauth: Option<(OAuthConfig, String)>,
    ) -> Self {
        let plugins = plugins.build().unwrap();
        let mut model = ModelProviderConfig::new("scripted");
        model.model = Some("m1".into());
        let agents = AgentHost::builder(plugins, sessions).model(model).build();
        let mut card = CardConfig::default();
        card.name = "test agent".into();
        card.skills = vec![Skill::new("chat", "Chat", "Answers what you say")];
        let mut server = A2aServer::new(agents, store);
        if let Some((config, resource)) = oauth {
            server = server.oauth(config, Some(resource));
        }
        let server = server
            .tokens([
                UserToken::from_token("alice", ALICE),
                UserToken::from_token("bob", BOB),
            ])
            .card(card)
            .model("scripted", Some("m1".into()))
            .fail_unfinished_at_start(fail_unfinished)
            .stream_idle_timeout(idle.unwrap_or(oscova_a2a::DEFAULT_STREAM_IDLE_TIMEOUT))
            .bind("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let base = format!("http://{}", server.local_addr());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let done = tokio::spawn(async move {
            server
                .serve_until(async {
                    stopped.await.ok();
                })
                .await
                .unwrap();
        });
        Self {
            base,
            stop: Some(stop),
            done: Some(done),
        }
    }

    /// Stops the server and waits for it.
    pub(crate) async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            stop.send(()).ok();
        }
        if let Some(done) = self.done.take() {
            done.await.unwrap();
        }
    }

    /// A JSON-RPC call with `token` and `A2A-Version: 1.0`.
    pub(crate) async fn rpc(&self, token: &str, method: &str, params: Value) -> Value {
        let body =
            serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        reqwest::Client::new()
            .post(format!("{}/", self.base))
            .bearer_auth(token)
            .header("A2A-Version", "1.0")
            .json(&body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop.send(()).ok();
        }
    }
}

/// The interpreter that has the pip package `a2a-sdk`: `$OSCOVA_A2A_PYTHON`,
/// else the install script's default place. Panics, naming the script,
/// when neither has it: a test of the real peer fails rather than skips.
fn python() -> PathBuf {
    if let Some(path) = std::env::var_os("OSCOVA_A2A_PYTHON") {
        return PathBuf::from(path);
    }
    let venv = std::env::var_os("OSCOVA_A2A_VENV")
        .map(PathBuf::from)
        .or_else(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            Some(cache.join("oscova").join("python-a2a"))
        });
    match venv.map(|v| v.join("bin").join("python")) {
        Some(python) if python.is_file() => python,
        _ => panic!(
            "the A2A Python SDK is not installed: run scripts/ensure-python-a2a.sh \
             (or set OSCOVA_A2A_PYTHON to a python that has `a2a-sdk`)"
        ),
    }
}

/// Runs `scripts/a2a/client.py` against `base` and returns its answer
/// (`{"ok": ...}` or `{"error": ..., "message": ...}`).
pub(crate) async fn sdk(base: &str, token: Option<&str>, binding: &str, op: &[&str]) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/a2a/client.py");
    let mut command = tokio::process::Command::new(python());
    command
        .arg(script)
        .args(["--url", base, "--binding", binding]);
    if let Some(token) = token {
        command.args(["--token", token]);
    }
    let output = command.args(op).kill_on_drop(true).output().await.unwrap();
    assert!(
        output.status.success(),
        "client.py {op:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "client.py printed no JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}
