//! A server for one test: a plugin host whose model provider is
//! scripted, users `alice` and `bob` by token, and the Python SDK's
//! client as [`sdk`].

use std::sync::Arc;
use std::time::Duration;

use oscova_a2a::model::AgentSkill;
use oscova_a2a::{A2aServer, CardConfig, MemoryTaskStore, TaskStore};
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

use crate::clients::Client;

/// A change to the server's settings before it binds.
pub(crate) type Tweak = Box<dyn FnOnce(A2aServer) -> A2aServer + Send>;

pub(crate) const ALICE: &str = "alice-token";
pub(crate) const BOB: &str = "bob-token";
/// The wire name of `waits.rs`'s `pay` as a plugin's scope tool.
pub(crate) const SPEND: &str = "test_pay__pay__pay";

/// Answers `You said: <the last user text>`; a text starting with `slow`
/// waits a minute (the run's cancellation ends it sooner); a text
/// `gate:NAME ...` waits until the test opens [`gate`] `NAME`, then
/// streams its answer a word at a time.
struct ScriptedModel;

/// The gate `name` a `gate:NAME` run waits on (opened with
/// `add_permits(1)`).
pub(crate) fn gate(name: &str) -> Arc<tokio::sync::Semaphore> {
    static GATES: std::sync::LazyLock<
        std::sync::Mutex<std::collections::HashMap<String, Arc<tokio::sync::Semaphore>>>,
    > = std::sync::LazyLock::new(Default::default);
    GATES
        .lock()
        .unwrap()
        .entry(name.to_owned())
        .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(0)))
        .clone()
}

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
            if last.starts_with("chain") {
                // Forward the message to this same server (`hops.rs`).
                let call = ToolCallRequest {
                    id: "call-1".into(),
                    name: "oscova_a2a__a2a__send".into(),
                    arguments: serde_json::json!({"agent": "self", "message": last}),
                };
                return Ok(ChatResponse {
                    message: ChatMessage::assistant("", vec![call]),
                    finish_reason: Some("tool_calls".into()),
                    usage: None,
                });
            }
            let tool = if last.starts_with("ask") {
                Some(GREET)
            } else if last.starts_with("pay") {
                // A session extension's tool (`waits.rs`).
                Some("pay")
            } else if last.starts_with("spend") {
                // The same tool as a plugin's, in the scope (`waits.rs`).
                Some(SPEND)
            } else if last.starts_with("key") {
                Some(LOOKUP)
            } else {
                None
            };
            if let Some(tool) = tool {
                let arguments = if tool == "pay" || tool == SPEND {
                    serde_json::json!({"memo": last})
                } else {
                    serde_json::json!({})
                };
                let call = ToolCallRequest {
                    id: "call-1".into(),
                    name: tool.into(),
                    arguments,
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
            if let Some(name) = last.strip_prefix("gate:") {
                let name = name.split_whitespace().next().unwrap_or_default();
                gate(name).acquire().await.unwrap().forget();
                if let Some(sink) = request.stream {
                    for word in text.split_inclusive(' ') {
                        sink(ChatStreamEvent::Text(word.to_owned()));
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                }
            } else if let Some(sink) = request.stream {
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

/// The agent host of a test server: `plugins` with the scripted model,
/// sessions in `sessions`, and `extension` in every session.
pub(crate) fn agent_host(
    plugins: oscova_core::PluginHostBuilder,
    sessions: Arc<dyn SessionStore>,
    extension: Option<oscova_agent::session::agent::ExtensionFactory>,
) -> AgentHost {
    let plugins = plugins.build().unwrap();
    let mut model = ModelProviderConfig::new("scripted");
    model.model = Some("m1".into());
    let mut agents = AgentHost::builder(plugins, sessions).model(model);
    if let Some(extension) = extension {
        agents = agents.add_extension_factory(extension);
    }
    agents.build().unwrap()
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
    pub(crate) async fn start_fleet(
        store: Arc<dyn TaskStore>,
        http: Option<oscova_core::HttpClient>,
    ) -> Self {
        Self::start_options(store, http, false, None, None).await
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
            None,
        )
        .await
    }

    /// A server whose host links `oscova.a2a` with one agent, `self`: this
    /// same server, called as alice, at most `max_hops` hops.
    pub(crate) async fn start_chain(max_hops: u32) -> Self {
        // The port first: the plugin's configuration names it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut config = oscova_plugin_a2a::A2aConfig {
            max_hops,
            ..Default::default()
        };
        config.agents.insert(
            "self".into(),
            oscova_plugin_a2a::AgentConfig::new(format!("http://127.0.0.1:{port}"))
                .credential_header("Authorization", "self.token"),
        );
        let resolver = |user: &UserInfo, key: &str| {
            (user.id() == "alice" && key == "self.token").then(|| SecretString::from(ALICE))
        };
        let plugins = PluginHost::builder()
            .no_linked_plugins()
            .plugin_instance(ScriptedPlugin)
            .plugin_instance(oscova_plugin_a2a::A2aPlugin::new(config).unwrap())
            .credentials(resolver);
        let addr = format!("127.0.0.1:{port}").parse().unwrap();
        Self::start_host(
            plugins,
            Arc::new(MemoryStore::new()),
            Arc::new(MemoryTaskStore::new()),
            true,
            None,
            None,
            Some(addr),
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
            None,
        )
        .await
    }

    /// A server whose streams close after `idle` without an event.
    pub(crate) async fn start_idle(idle: Duration) -> Self {
        let mut limits = oscova_a2a::Limits::default();
        limits.stream_idle_timeout = idle;
        Self::start_tweaked(Box::new(move |s| s.limits(limits)), None).await
    }

    /// A server with `tweak`'s settings, its host calling out through
    /// `http`.
    pub(crate) async fn start_tweaked(tweak: Tweak, http: Option<oscova_core::HttpClient>) -> Self {
        let store = Arc::new(MemoryTaskStore::new());
        Self::start_options(store, http, true, Some(tweak), None).await
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
        tweak: Option<Tweak>,
        oauth: Option<(OAuthConfig, String)>,
    ) -> Self {
        let mut plugins = PluginHost::builder()
            .no_linked_plugins()
            .plugin_instance(ScriptedPlugin);
        if let Some(http) = http {
            plugins = plugins.http_client(http);
        }
        let sessions = Arc::new(MemoryStore::new());
        Self::start_host(
            plugins,
            sessions,
            store,
            fail_unfinished,
            tweak,
            oauth,
            None,
        )
        .await
    }

    async fn start_host(
        plugins: oscova_core::PluginHostBuilder,
        sessions: Arc<dyn SessionStore>,
        store: Arc<dyn TaskStore>,
        fail_unfinished: bool,
        tweak: Option<Tweak>,
        oauth: Option<(OAuthConfig, String)>,
        addr: Option<std::net::SocketAddr>,
    ) -> Self {
        let agents = agent_host(plugins, sessions, None);
        Self::start_agents(agents, store, fail_unfinished, tweak, oauth, addr).await
    }

    /// A server for `agents`' sessions (see [`agent_host`]).
    pub(crate) async fn start_agents(
        agents: AgentHost,
        store: Arc<dyn TaskStore>,
        fail_unfinished: bool,
        tweak: Option<Tweak>,
        oauth: Option<(OAuthConfig, String)>,
        addr: Option<std::net::SocketAddr>,
    ) -> Self {
        let mut card = CardConfig::default();
        card.name = "test agent".into();
        card.skills = vec![AgentSkill::new("chat", "Chat", "Answers what you say")];
        let mut server = A2aServer::new(agents, store);
        if let Some((config, resource)) = oauth {
            server = server.oauth(config, Some(resource));
        }
        if let Some(tweak) = tweak {
            server = tweak(server);
        }
        let server = server
            .tokens([
                UserToken::from_token("alice", ALICE),
                UserToken::from_token("bob", BOB),
            ])
            .card(card)
            .model("scripted", Some("m1".into()))
            .fail_unfinished_at_start(fail_unfinished)
            .bind(addr.unwrap_or_else(|| "127.0.0.1:0".parse().unwrap()))
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

/// Runs `scripts/a2a/client.py` against `base` and returns its answer
/// (`{"ok": ...}` or `{"error": ..., "message": ...}`): for the tests run
/// with the Python SDK's client only (`push`, an operation `client.mjs`
/// lacks; `auth_required`). The scenarios of both SDKs are in `sdk`.
pub(crate) async fn sdk(base: &str, token: Option<&str>, binding: &str, op: &[&str]) -> Value {
    Client::Python.run(base, token, binding, op).await
}
