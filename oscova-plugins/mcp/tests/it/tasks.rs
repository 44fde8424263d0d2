//! An upstream server's tasks (the MCP Tasks extension, SEP-2663)
//! followed by the plugin: the upstream is this workspace's own MCP
//! server over HTTP on 127.0.0.1, which (with `task_after` zero) answers
//! every call of a client declaring the extension with a task, kept in a
//! store that counts the tasks made. A task is polled to its result (its
//! status message as the call's progress), its question asked of the
//! person and answered with `tasks/update`, and cancelled with
//! `tasks/cancel` when our call is. With the server's default threshold,
//! a short call comes back as its result, no task made.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oscova_core::interaction::{Answer, AskError, InteractionRequest, Question};
use oscova_core::prelude::*;
use oscova_mcp::http::{McpHttpError, McpHttpServer};
use oscova_mcp::task::{MemoryTaskStore, StoredTask, TaskStore, TaskUpdate};
use oscova_mcp::wait::{KeptWait, WaitStore, WaitStoreError};
use oscova_plugin_mcp::{Elicitation, McpPlugin, ServerConfig};
use serde_json::json;
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;

use crate::support::{plugin, spawn_policy};

const PATIENCE: Duration = Duration::from_secs(20);

/// What the upstream's tools saw.
#[derive(Default)]
pub struct Seen {
    held: Notify,
    cancelled: AtomicUsize,
    paid: AtomicUsize,
}

/// The upstream's tools.
pub struct UpToolset {
    seen: Option<Arc<Seen>>,
}

#[toolset]
impl UpToolset {
    /// Works for a while, saying so, then answers.
    pub async fn slow(
        invocation: &ToolInvocation,
        /// How long, in milliseconds.
        ms: u64,
    ) -> String {
        invocation.report(ToolProgress::message("halfway there"));
        tokio::time::sleep(Duration::from_millis(ms)).await;
        format!("done after {ms} ms")
    }

    /// Waits until the call is cancelled.
    pub async fn hold(&self, invocation: &ToolInvocation) -> String {
        let token = invocation.cancellation_token().clone();
        let _ended = self.seen.clone().map(|seen| Ended(seen, token.clone()));
        if let Some(seen) = &self.seen {
            seen.held.notify_one();
        }
        token.cancelled().await;
        "cancelled".to_owned()
    }

    /// Pays someone: needs the person's approval.
    #[tool(approval = Required)]
    pub fn pay(
        &self,
        /// To whom.
        to: String,
    ) -> String {
        if let Some(seen) = &self.seen {
            seen.paid.fetch_add(1, Ordering::SeqCst);
        }
        format!("paid {to}")
    }
}

/// Counts a `hold` call that ended with its token cancelled.
struct Ended(Arc<Seen>, CancellationToken);

impl Drop for Ended {
    fn drop(&mut self) {
        if self.1.is_cancelled() {
            self.0.cancelled.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// The upstream's plugin.
#[plugin(id = "test.up")]
pub struct UpPlugin;

impl AgentPlugin for UpPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|ctx: &AgentPluginContext| UpToolset {
            seen: ctx.service::<Seen>(),
        });
    }
}

/// The upstream's store: tasks in memory, counted as they are made;
/// waits in memory.
#[derive(Debug, Default)]
struct Counting {
    tasks: MemoryTaskStore,
    made: AtomicUsize,
    waits: Mutex<Vec<KeptWait>>,
}

#[async_trait::async_trait]
impl TaskStore for Counting {
    async fn create(&self, task: &StoredTask) -> Result<(), WaitStoreError> {
        self.made.fetch_add(1, Ordering::SeqCst);
        self.tasks.create(task).await
    }

    async fn get(&self, id: &str, user: &str) -> Result<Option<StoredTask>, WaitStoreError> {
        self.tasks.get(id, user).await
    }

    async fn update(&self, id: &str, update: &TaskUpdate) -> Result<bool, WaitStoreError> {
        self.tasks.update(id, update).await
    }

    async fn alive(&self, id: &str) -> Result<(), WaitStoreError> {
        self.tasks.alive(id).await
    }

    async fn cancel(&self, id: &str, user: &str) -> Result<Option<StoredTask>, WaitStoreError> {
        self.tasks.cancel(id, user).await
    }

    async fn respond(
        &self,
        id: &str,
        user: &str,
        responses: &rmcp::model::JsonObject,
    ) -> Result<Option<StoredTask>, WaitStoreError> {
        self.tasks.respond(id, user, responses).await
    }
}

#[async_trait::async_trait]
impl WaitStore for Counting {
    async fn put(&self, wait: &KeptWait, _per_user: usize) -> Result<(), WaitStoreError> {
        self.waits.lock().unwrap().push(wait.clone());
        Ok(())
    }

    async fn take(
        &self,
        handle: &str,
        user: &str,
        tool: &str,
    ) -> Result<Option<KeptWait>, WaitStoreError> {
        let mut waits = self.waits.lock().unwrap();
        let at = waits
            .iter()
            .position(|w| w.handle == handle && w.user == user && w.tool == tool);
        Ok(at.map(|at| waits.remove(at)))
    }
}

/// The upstream MCP server, serving until stopped.
struct Upstream {
    url: String,
    seen: Arc<Seen>,
    store: Arc<Counting>,
    stop: Option<oneshot::Sender<()>>,
    done: JoinHandle<Result<(), McpHttpError>>,
}

impl Upstream {
    /// An upstream making every call of a tasks client a task at once.
    async fn start() -> Self {
        Self::start_after(Some(Duration::ZERO)).await
    }

    /// An upstream making a call a task after `after` (the server's
    /// default when `None`).
    async fn start_after(after: Option<Duration>) -> Self {
        let host = PluginHost::builder()
            .plugins(oscova_core::linked_plugins![UpPlugin])
            .service(Seen::default())
            .build()
            .expect("the upstream's host");
        let seen = host.service::<Seen>().unwrap();
        let store = Arc::new(Counting::default());
        let mut server = McpHttpServer::new(host).wait_store_arc(Some(store.clone()));
        if let Some(after) = after {
            server = server.task_after(after);
        }
        let bound = server
            .bind("127.0.0.1:0".parse().unwrap())
            .await
            .expect("the upstream binds");
        let url = format!("http://{}/mcp", bound.local_addr());
        let (stop, stopped) = oneshot::channel::<()>();
        let done = tokio::spawn(bound.serve_until(async {
            let _ = stopped.await;
        }));
        Self {
            url,
            seen,
            store,
            stop: Some(stop),
            done,
        }
    }

    fn tasks_made(&self) -> usize {
        self.store.made.load(Ordering::SeqCst)
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = tokio::time::timeout(PATIENCE, self.done).await;
    }
}

/// A host over the plugin, its server `up` the upstream, questions
/// forwarded to the person.
async fn host(upstream: &Upstream) -> PluginHost {
    let config = ServerConfig::url(&upstream.url)
        .network(NetworkScope::Local)
        .timeout(PATIENCE)
        .elicitation(Elicitation::Forward);
    let mcp = plugin(McpPlugin::builder().server("up", config)).await;
    assert!(
        mcp.start_diagnostics().is_empty(),
        "{:?}",
        mcp.start_diagnostics()
    );
    PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(mcp)
        .spawn_policy(spawn_policy())
        .build()
        .expect("host")
}

/// The wire name of the upstream tool ending in `name`.
fn tool(host: &PluginHost, name: &str) -> String {
    let scope = host.user_scope(UserInfo::new("alice"));
    let found = scope
        .tools()
        .map(|t| t.wire_name().to_owned())
        .find(|wire| wire.ends_with(name));
    found.unwrap_or_else(|| panic!("no tool ending in `{name}`"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_task_is_followed_to_its_result() {
    let upstream = Upstream::start().await;
    let host = host(&upstream).await;
    let slow = tool(&host, "slow");
    let reported = Arc::new(Mutex::new(Vec::new()));
    let sink = reported.clone();
    let result = tokio::time::timeout(
        PATIENCE,
        host.user_scope(UserInfo::new("alice"))
            .invoke(&slow, json!({"ms": 1200}))
            .progress(move |p: ToolProgress| sink.lock().unwrap().push(p.message)),
    )
    .await
    .unwrap();
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.content, "done after 1200 ms");
    assert_eq!(upstream.tasks_made(), 1, "the call was a task upstream");
    let reported = reported.lock().unwrap().clone();
    assert!(
        reported.iter().any(|m| m == "halfway there"),
        "the task's status message as progress: {reported:?}"
    );
    host.shutdown().await;
    upstream.stop().await;
}

/// The upstream decides per call: with its default threshold a short
/// call is answered with its result (its progress sent as notifications),
/// so the plugin gets it without a task or a poll.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_upstream_call_comes_back_without_a_task() {
    let upstream = Upstream::start_after(None).await;
    let host = host(&upstream).await;
    let slow = tool(&host, "slow");
    let reported = Arc::new(Mutex::new(Vec::new()));
    let sink = reported.clone();
    let result = tokio::time::timeout(
        PATIENCE,
        host.user_scope(UserInfo::new("alice"))
            .invoke(&slow, json!({"ms": 10}))
            .progress(move |p: ToolProgress| sink.lock().unwrap().push(p.message)),
    )
    .await
    .unwrap();
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.content, "done after 10 ms");
    assert_eq!(upstream.tasks_made(), 0, "no task upstream, so no poll");
    let reported = reported.lock().unwrap().clone();
    assert_eq!(reported, ["halfway there"], "progress as a notification");
    host.shutdown().await;
    upstream.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_tasks_question_is_asked_and_answered() {
    let upstream = Upstream::start().await;
    let host = host(&upstream).await;
    let pay = tool(&host, "pay");
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let person = move |request: InteractionRequest| {
        seen.lock().unwrap().push(request.question.clone());
        async move { Ok::<_, AskError>(Answer::Accept(Default::default())) }
    };
    let result = tokio::time::timeout(
        PATIENCE,
        host.user_scope(UserInfo::new("alice"))
            .invoke(&pay, json!({"to": "bob"}))
            .interaction_handler(person),
    )
    .await
    .unwrap();
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.content, "paid bob");
    assert_eq!(upstream.seen.paid.load(Ordering::SeqCst), 1);
    assert_eq!(upstream.tasks_made(), 1);
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "asked once: {asked:?}");
    let Question::Form { message, .. } = &asked[0] else {
        panic!("a form: {asked:?}");
    };
    assert!(
        message.starts_with("MCP server `up` asks:"),
        "attributed to the server: {message}"
    );
    host.shutdown().await;
    upstream.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_our_call_cancels_the_upstream_task() {
    let upstream = Upstream::start().await;
    let host = host(&upstream).await;
    let hold = tool(&host, "hold");
    let cancel = CancellationToken::new();
    let scope = host.user_scope(UserInfo::new("alice"));
    let call = scope.invoke(&hold, json!({})).cancellation(cancel.clone());
    let cancelling = async {
        upstream.seen.held.notified().await;
        cancel.cancel();
    };
    let (result, ()) = tokio::time::timeout(PATIENCE, async { tokio::join!(call, cancelling) })
        .await
        .unwrap();
    assert!(result.is_error, "{result:?}");
    assert_eq!(upstream.tasks_made(), 1);
    // The upstream's call sees its token cancelled (through tasks/cancel).
    let upstream_saw = async {
        while upstream.seen.cancelled.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(PATIENCE, upstream_saw).await.unwrap();
    host.shutdown().await;
    upstream.stop().await;
}
