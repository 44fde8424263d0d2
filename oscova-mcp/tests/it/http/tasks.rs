//! Tool calls served as MCP tasks (SEP-2663), driven by rmcp's client (a
//! real client of the extension: `call_tool_once`, `get_task`,
//! `update_task`, `cancel_task`) over HTTP on 127.0.0.1. The server
//! decides per call: one that ends within its `task_after` is answered
//! with its result and makes no task; a longer one, or one that asks
//! first, becomes a task then. Most tests here set `task_after` to zero
//! (a task at once) to follow the task itself. One server keeps its tasks
//! in memory; two servers on one store (SQLite, Postgres) stand for two
//! instances: a task made on one is polled, answered and cancelled
//! through the other, its call running (and cancelled) where it was
//! made. A task is its user's; a task whose instance stopped is reported
//! interrupted, never run again.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use oscova_core::prelude::*;
use oscova_mcp::http::McpHttpServer;
#[cfg(feature = "sqlite")]
use oscova_mcp::task::DEFAULT_TASK_AFTER;
#[cfg(feature = "sqlite")]
use oscova_mcp::task::{StoredTask, TaskStore, TaskUpdate};
use oscova_mcp::task::{TASK_POLL_INTERVAL, TASK_TTL};
use oscova_mcp::wait::WaitStore;
#[cfg(feature = "sqlite")]
use oscova_mcp::wait::{KeptWait, WaitStoreError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    ElicitationCapability, FormElicitationCapability, GetTaskParams, GetTaskResult, Implementation,
    InputRequest, InputResponses, TaskPayload, TaskStatus, UpdateTaskParams,
};
#[cfg(feature = "sqlite")]
use rmcp::model::{ProgressNotificationParam, ProgressToken, RequestMetaObject};
#[cfg(feature = "sqlite")]
use rmcp::service::NotificationContext;
use rmcp::service::{Peer, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::Notify;
#[cfg(feature = "sqlite")]
use tokio::sync::mpsc;
use tokio::time::timeout;

use super::{ALICE, BOB, PATIENCE, Running, object, tls_provider, with_tokens};

/// What the tools tell the test.
#[derive(Default)]
pub struct Seen {
    /// A `hold` call has started.
    held: Notify,
    /// `hold` calls that saw their cancellation.
    cancelled: AtomicUsize,
    /// `pay` bodies that ran.
    paid: AtomicUsize,
}

/// Tools that take their time.
pub struct TaskToolset {
    seen: Option<Arc<Seen>>,
}

#[toolset]
impl TaskToolset {
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
        // The host stops awaiting a cancelled call at once, so the call
        // learns of it by being dropped, its token cancelled.
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
struct Ended(Arc<Seen>, tokio_util::sync::CancellationToken);

impl Drop for Ended {
    fn drop(&mut self) {
        if self.1.is_cancelled() {
            self.0.cancelled.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// The plugin of the tools above.
#[plugin(id = "test.task")]
pub struct TaskPlugin;

impl AgentPlugin for TaskPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|ctx: &AgentPluginContext| TaskToolset {
            seen: ctx.service::<Seen>(),
        });
    }
}

const SLOW: &str = "test_task__task__slow";
const HOLD: &str = "test_task__task__hold";
const PAY: &str = "test_task__task__pay";

/// A server (an instance) over `store` (memory when `None`) making a
/// call a task at once, and what its tools saw.
async fn instance(store: Option<Arc<dyn WaitStore>>) -> (Running, Arc<Seen>) {
    instance_after(store, Some(Duration::ZERO)).await
}

/// [`instance`] making a call a task after `after` (the server's default
/// when `None`).
async fn instance_after(
    store: Option<Arc<dyn WaitStore>>,
    after: Option<Duration>,
) -> (Running, Arc<Seen>) {
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![TaskPlugin])
        .service(Seen::default())
        .build()
        .unwrap();
    let seen = host.service::<Seen>().unwrap();
    let mut server = with_tokens(McpHttpServer::new(host)).wait_store_arc(store);
    if let Some(after) = after {
        server = server.task_after(after);
    }
    (Running::start(server).await, seen)
}

type Client = RunningService<RoleClient, ClientConfig>;

/// rmcp's client as `token`'s user, declaring form elicitation and, when
/// `tasks`, the tasks extension.
async fn client(url: &str, token: &str, tasks: bool) -> Client {
    serve_client(url, token, config(tasks)).await
}

/// `handler` as a client of `url` as `token`'s user.
async fn serve_client<H: ClientHandler>(
    url: &str,
    token: &str,
    handler: H,
) -> RunningService<RoleClient, H> {
    tls_provider();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url).auth_header(token),
    );
    timeout(PATIENCE, handler.serve(transport))
        .await
        .expect("initialize answers")
        .unwrap()
}

/// What the client declares: form elicitation and, when `tasks`, the
/// tasks extension.
fn config(tasks: bool) -> ClientConfig {
    let mut elicitation = ElicitationCapability::new();
    elicitation.form = Some(FormElicitationCapability::default());
    let mut capabilities = ClientCapabilities::builder().build();
    capabilities.elicitation = Some(elicitation);
    if tasks {
        capabilities.extensions = ClientCapabilities::builder()
            .enable_tasks()
            .build()
            .extensions;
    }
    ClientConfig::new(capabilities, Implementation::new("tasks-test", "1"))
}

#[cfg(feature = "sqlite")]
/// A client of the tasks extension that hears the progress notifications
/// sent to it (their messages).
struct Hearing(ClientConfig, mpsc::UnboundedSender<String>);

#[cfg(feature = "sqlite")]
impl ClientHandler for Hearing {
    fn get_info(&self) -> ClientConfig {
        self.0.clone()
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.1.send(params.message.unwrap_or_default());
    }
}

/// Calls `tool` once; the task id it answers with, checking its seed.
async fn start(client: &Peer<RoleClient>, tool: &str, arguments: Value) -> String {
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(object(arguments));
    let response = timeout(PATIENCE, client.call_tool_once(params))
        .await
        .expect("the call is answered at once")
        .unwrap();
    let CallToolResponse::Task(created) = response else {
        panic!("not a task: {response:?}");
    };
    let task = created.task;
    assert_eq!(task.status, TaskStatus::Working);
    assert_eq!(task.task_id.len(), 32, "128 random bits in hex");
    let hint = u64::try_from(TASK_POLL_INTERVAL.as_millis()).unwrap();
    assert_eq!(task.poll_interval_ms, Some(hint));
    let ttl = u64::try_from(TASK_TTL.as_millis()).unwrap();
    assert_eq!(task.ttl_ms, Some(ttl));
    assert!(task.created_at.ends_with('Z'), "{}", task.created_at);
    task.task_id
}

async fn get(client: &Peer<RoleClient>, id: &str) -> Result<GetTaskResult, ServiceError> {
    timeout(PATIENCE, client.get_task(GetTaskParams::new(id)))
        .await
        .expect("tasks/get answers")
}

/// Polls task `id` at its hint until `done` says so; the last state.
async fn poll_until(
    client: &Peer<RoleClient>,
    id: &str,
    done: impl Fn(&GetTaskResult) -> bool,
) -> GetTaskResult {
    let polls = async {
        loop {
            let state = get(client, id).await.unwrap();
            if done(&state) {
                return state;
            }
            let hint = state.task.task.poll_interval_ms.unwrap_or(500);
            tokio::time::sleep(Duration::from_millis(hint)).await;
        }
    };
    timeout(PATIENCE, polls).await.expect("the task gets there")
}

fn ended(state: &GetTaskResult) -> bool {
    state.task.status().is_terminal()
}

/// The text of a completed task's result.
fn result_text(state: &GetTaskResult) -> String {
    let TaskPayload::Completed { result } = &state.task.payload else {
        panic!("not completed: {state:?}");
    };
    assert_eq!(result.get("isError"), Some(&json!(false)), "{result:?}");
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The JSON-RPC error code of a refused request.
fn code(error: ServiceError) -> i32 {
    match error {
        ServiceError::McpError(data) => data.code.0,
        other => panic!("not a JSON-RPC error: {other}"),
    }
}

/// The key and message of the one question an `input_required` task asks.
fn question(state: &GetTaskResult) -> (String, String) {
    let TaskPayload::InputRequired { input_requests } = &state.task.payload else {
        panic!("not input_required: {state:?}");
    };
    assert_eq!(input_requests.len(), 1, "{input_requests:?}");
    let (key, request) = input_requests.iter().next().unwrap();
    let InputRequest::Elicitation(elicit) = request else {
        panic!("not an elicitation: {request:?}");
    };
    let params = serde_json::to_value(&elicit.params).unwrap();
    (key.clone(), params["message"].as_str().unwrap().to_owned())
}

fn accept(key: &str) -> InputResponses {
    let mut responses = InputResponses::new();
    responses.insert(key.to_owned(), json!({"action": "accept", "content": {}}));
    responses
}

/// A long call made by a client of the extension is a task at once,
/// `working` (its progress message as the status message) until it
/// completes with the call's result; a client that did not declare the
/// extension gets the result itself; a task is its user's only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_call_is_a_task_polled_to_its_result() {
    let (server, _) = instance(None).await;
    let alice = client(&server.url, ALICE, true).await;
    let tasks = alice.peer_info().unwrap().capabilities.clone();
    assert!(
        tasks.supports_tasks(),
        "the server advertises the extension"
    );

    let id = start(&alice, SLOW, json!({"ms": 1500})).await;
    let working = poll_until(&alice, &id, |s| s.task.task.status_message.is_some()).await;
    assert_eq!(working.task.status(), TaskStatus::Working);
    assert_eq!(
        working.task.task.status_message.as_deref(),
        Some("halfway there")
    );
    let done = poll_until(&alice, &id, ended).await;
    assert_eq!(done.task.status(), TaskStatus::Completed);
    assert_eq!(result_text(&done), "done after 1500 ms");
    assert!(done.task.task.last_updated_at >= done.task.task.created_at);

    // Another user's task id names nothing for them, for each method.
    let bob = client(&server.url, BOB, true).await;
    assert_eq!(code(get(&bob, &id).await.unwrap_err()), -32602);
    let cancel = bob.cancel_task(CancelTaskParams::new(id.clone())).await;
    assert_eq!(code(cancel.unwrap_err()), -32602);
    let update = bob.update_task(UpdateTaskParams::new(id.clone(), accept("oscova.ask.1")));
    assert_eq!(code(update.await.unwrap_err()), -32602);
    assert_eq!(code(get(&alice, "0123").await.unwrap_err()), -32602);

    // Without the extension: the call's own result, no task.
    let plain = client(&server.url, ALICE, false).await;
    let params = CallToolRequestParams::new(SLOW).with_arguments(object(json!({"ms": 10})));
    let result = plain.call_tool(params).await.unwrap();
    assert_eq!(super::text(&result), "done after 10 ms");
    for client in [alice, bob, plain] {
        client.cancel().await.unwrap();
    }
    server.shutdown().await;
}

/// `tasks/cancel` cancels the call through its token and the task ends
/// `cancelled`; a task that ended cannot be cancelled again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_cancelled_through_its_calls_token() {
    let (server, seen) = instance(None).await;
    let alice = client(&server.url, ALICE, true).await;
    let id = start(&alice, HOLD, json!({})).await;
    timeout(PATIENCE, seen.held.notified()).await.unwrap();
    alice
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    let done = poll_until(&alice, &id, ended).await;
    assert_eq!(done.task.status(), TaskStatus::Cancelled);
    assert_eq!(seen.cancelled.load(Ordering::SeqCst), 1, "the tool saw it");
    let again = alice.cancel_task(CancelTaskParams::new(id)).await;
    assert_eq!(code(again.unwrap_err()), -32602);
    alice.cancel().await.unwrap();
    server.shutdown().await;
}

/// A question the call asks (its approval) makes the task
/// `input_required`; the answer through `tasks/update` lets it go on, and
/// a decline ends it with the refusal as its result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tasks_question_is_answered_through_tasks_update() {
    let (server, seen) = instance(None).await;
    let alice = client(&server.url, ALICE, true).await;
    let id = start(&alice, PAY, json!({"to": "bob"})).await;
    let asked = poll_until(&alice, &id, |s| {
        s.task.status() == TaskStatus::InputRequired
    })
    .await;
    let (key, message) = question(&asked);
    assert_eq!(key, "oscova.ask.1");
    assert!(message.contains("pay"), "{message}");
    assert_eq!(seen.paid.load(Ordering::SeqCst), 0, "not before the yes");
    // An answer under a key the task did not ask changes nothing.
    let stray = UpdateTaskParams::new(id.clone(), accept("oscova.ask.9"));
    alice.update_task(stray).await.unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    let still = get(&alice, &id).await.unwrap();
    assert_eq!(still.task.status(), TaskStatus::InputRequired);
    assert_eq!(question(&still).0, key, "still asking the same question");
    alice
        .update_task(UpdateTaskParams::new(id.clone(), accept(&key)))
        .await
        .unwrap();
    let done = poll_until(&alice, &id, ended).await;
    assert_eq!(result_text(&done), "paid bob");
    assert_eq!(seen.paid.load(Ordering::SeqCst), 1);

    let id = start(&alice, PAY, json!({"to": "eve"})).await;
    let asked = poll_until(&alice, &id, |s| {
        s.task.status() == TaskStatus::InputRequired
    })
    .await;
    let (key, _) = question(&asked);
    let mut decline = InputResponses::new();
    decline.insert(key, json!({"action": "decline"}));
    alice
        .update_task(UpdateTaskParams::new(id.clone(), decline))
        .await
        .unwrap();
    let done = poll_until(&alice, &id, ended).await;
    let TaskPayload::Completed { result } = &done.task.payload else {
        panic!("not completed: {done:?}");
    };
    assert_eq!(result.get("isError"), Some(&json!(true)), "{result:?}");
    assert_eq!(seen.paid.load(Ordering::SeqCst), 1, "declined: not paid");
    alice.cancel().await.unwrap();
    server.shutdown().await;
}

/// Two instances on one store: a task made on A is polled to its result
/// on B, its question answered through B, and cancelled through B (A's
/// call sees its token cancelled). A task whose instance stopped marking
/// it alive is `failed`, interrupted.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
async fn a_task_made_on_one_instance_is_followed_on_another(
    store_a: Arc<dyn WaitStore>,
    store_b: Arc<dyn WaitStore>,
) {
    let (a, seen_a) = instance(Some(store_a)).await;
    let (b, seen_b) = instance(Some(store_b.clone())).await;
    let on_a = client(&a.url, ALICE, true).await;
    let on_b = client(&b.url, ALICE, true).await;

    let id = start(&on_a, SLOW, json!({"ms": 800})).await;
    let done = poll_until(&on_b, &id, ended).await;
    assert_eq!(result_text(&done), "done after 800 ms");

    let id = start(&on_a, PAY, json!({"to": "carol"})).await;
    let asked = poll_until(&on_b, &id, |s| s.task.status() == TaskStatus::InputRequired).await;
    let (key, _) = question(&asked);
    // Answers under keys the task is not asking are not kept: a client
    // cannot grow a task in the store.
    let mut stray = accept("oscova.ask.9");
    stray.insert("x".repeat(64), json!("y".repeat(4096)));
    on_b.update_task(UpdateTaskParams::new(id.clone(), stray))
        .await
        .unwrap();
    let kept = store_b.get(&id, "alice").await.unwrap().unwrap();
    assert!(kept.responses.is_empty(), "{:?}", kept.responses);
    on_b.update_task(UpdateTaskParams::new(id.clone(), accept(&key)))
        .await
        .unwrap();
    let done = poll_until(&on_b, &id, ended).await;
    assert_eq!(result_text(&done), "paid carol");
    let paid = (
        seen_a.paid.load(Ordering::SeqCst),
        seen_b.paid.load(Ordering::SeqCst),
    );
    assert_eq!(paid, (1, 0), "run once, where it was made");

    let id = start(&on_a, HOLD, json!({})).await;
    timeout(PATIENCE, seen_a.held.notified()).await.unwrap();
    on_b.cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    let done = poll_until(&on_b, &id, ended).await;
    assert_eq!(done.task.status(), TaskStatus::Cancelled);
    assert_eq!(seen_a.cancelled.load(Ordering::SeqCst), 1);

    // An instance that died with a task running: nobody marks it alive.
    let mut lost = oscova_mcp::task::StoredTask::new("ab".repeat(16), "alice", SLOW);
    lost.alive_at -= 31_000;
    store_b.create(&lost).await.unwrap();
    let state = get(&on_b, &lost.id).await.unwrap();
    let TaskPayload::Failed { error } = &state.task.payload else {
        panic!("not failed: {state:?}");
    };
    assert_eq!(error["data"]["error"], "interrupted", "{error:?}");
    for client in [on_a, on_b] {
        client.cancel().await.unwrap();
    }
    a.shutdown().await;
    b.shutdown().await;
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_followed_on_another_instance_over_sqlite() {
    let path = std::env::temp_dir()
        .join(format!(
            "oscova-mcp-tasks-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
        ))
        .join("sessions.db");
    // One writer per file per process: both instances go through it.
    let store = oscova_mcp::wait::SqliteWaitStore::open(path).await.unwrap();
    let store: Arc<dyn WaitStore> = Arc::new(store);
    a_task_made_on_one_instance_is_followed_on_another(store.clone(), store).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_followed_on_another_instance_over_postgres() {
    let cluster = oscova_test_support::postgres::Cluster::start();
    let config = cluster.create_database("mcp_tasks");
    // Each instance its own connection, as two processes would have.
    let connect = || async {
        let store = oscova_mcp::wait::PostgresWaitStore::connect(&config).await;
        Arc::new(store.unwrap()) as Arc<dyn WaitStore>
    };
    a_task_made_on_one_instance_is_followed_on_another(connect().await, connect().await).await;
}

/// A call with a progress token for the notifications.
#[cfg(feature = "sqlite")]
fn heard_call(tool: &str, arguments: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(object(arguments));
    let token = ProgressToken(rmcp::model::NumberOrString::Number(7));
    params.meta = Some(RequestMetaObject::with_progress_token(token));
    params
}

/// The server decides per call (the extension's "server-directed"): with
/// its default threshold, a short call of a tasks client is answered with
/// its result, its progress sent as notifications, and no task is made
/// in the store; a call that outlasts the threshold is answered with a
/// task once it has (its progress so far sent, its last message the
/// task's first status message), polled to its result.
#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_call_that_outlasts_the_threshold_becomes_a_task() {
    let store = counted_sqlite_store("threshold").await;
    let (server, _) = instance_after(Some(store.clone()), None).await;
    let (heard, mut progress) = mpsc::unbounded_channel();
    let alice = serve_client(&server.url, ALICE, Hearing(config(true), heard)).await;

    let response = timeout(
        PATIENCE,
        alice.call_tool_once(heard_call(SLOW, json!({"ms": 10}))),
    )
    .await
    .expect("a short call is answered")
    .unwrap();
    let CallToolResponse::Complete(result) = response else {
        panic!("a short call is answered with its result: {response:?}");
    };
    assert_eq!(super::text(&result), "done after 10 ms");
    let message = timeout(PATIENCE, progress.recv()).await.unwrap().unwrap();
    assert_eq!(
        message, "halfway there",
        "progress goes out as for any call"
    );
    assert_eq!(store.made(), 0, "no task is made for a short call");

    let began = std::time::Instant::now();
    let params = heard_call(SLOW, json!({"ms": 2500}));
    let response = timeout(PATIENCE, alice.call_tool_once(params))
        .await
        .unwrap();
    let waited = began.elapsed();
    let CallToolResponse::Task(created) = response.unwrap() else {
        panic!("a long call is a task");
    };
    assert!(
        waited >= DEFAULT_TASK_AFTER,
        "a task only past the threshold: {waited:?}"
    );
    assert!(
        waited < Duration::from_millis(2500),
        "before the call ends: {waited:?}"
    );
    assert_eq!(created.task.status, TaskStatus::Working);
    assert_eq!(
        created.task.status_message.as_deref(),
        Some("halfway there")
    );
    let message = timeout(PATIENCE, progress.recv()).await.unwrap().unwrap();
    assert_eq!(message, "halfway there", "sent while the call ran as usual");
    assert_eq!(store.made(), 1);
    let done = poll_until(&alice, &created.task.task_id, ended).await;
    assert_eq!(result_text(&done), "done after 2500 ms");
    alice.cancel().await.unwrap();
    server.shutdown().await;
}

/// A call that asks the person before the threshold (its approval)
/// becomes a task as it asks, `input_required` in the answer itself, its
/// question there for the first `tasks/get`; answered, it runs once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_asks_first_is_an_input_required_task_at_once() {
    let after = Duration::from_secs(60);
    let (server, seen) = instance_after(None, Some(after)).await;
    let alice = client(&server.url, ALICE, true).await;
    let params = CallToolRequestParams::new(PAY).with_arguments(object(json!({"to": "bob"})));
    let began = std::time::Instant::now();
    let response = timeout(PATIENCE, alice.call_tool_once(params))
        .await
        .expect("answered as it asks, not at the threshold")
        .unwrap();
    assert!(began.elapsed() < after);
    let CallToolResponse::Task(created) = response else {
        panic!("a call that asks is a task: {response:?}");
    };
    assert_eq!(created.task.status, TaskStatus::InputRequired);
    let id = created.task.task_id;
    let asked = get(&alice, &id).await.unwrap();
    let (key, message) = question(&asked);
    assert_eq!(key, "oscova.ask.1");
    assert!(message.contains("pay"), "{message}");
    assert_eq!(seen.paid.load(Ordering::SeqCst), 0, "not before the yes");
    alice
        .update_task(UpdateTaskParams::new(id.clone(), accept(&key)))
        .await
        .unwrap();
    let done = poll_until(&alice, &id, ended).await;
    assert_eq!(result_text(&done), "paid bob");
    assert_eq!(seen.paid.load(Ordering::SeqCst), 1);
    alice.cancel().await.unwrap();
    server.shutdown().await;
}

/// A SQLite wait store that counts the tasks made in it.
#[cfg(feature = "sqlite")]
#[derive(Debug)]
struct Counted {
    inner: Arc<dyn WaitStore>,
    made: AtomicUsize,
}

#[cfg(feature = "sqlite")]
impl Counted {
    fn made(&self) -> usize {
        self.made.load(Ordering::SeqCst)
    }
}

#[cfg(feature = "sqlite")]
async fn counted_sqlite_store(name: &str) -> Arc<Counted> {
    let path = std::env::temp_dir()
        .join(format!(
            "oscova-mcp-tasks-{name}-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
        ))
        .join("sessions.db");
    let store = oscova_mcp::wait::SqliteWaitStore::open(path).await.unwrap();
    Arc::new(Counted {
        inner: Arc::new(store),
        made: AtomicUsize::new(0),
    })
}

#[cfg(feature = "sqlite")]
#[async_trait::async_trait]
impl TaskStore for Counted {
    async fn create(&self, task: &StoredTask) -> Result<(), WaitStoreError> {
        self.made.fetch_add(1, Ordering::SeqCst);
        self.inner.create(task).await
    }

    async fn get(&self, id: &str, user: &str) -> Result<Option<StoredTask>, WaitStoreError> {
        self.inner.get(id, user).await
    }

    async fn update(&self, id: &str, update: &TaskUpdate) -> Result<bool, WaitStoreError> {
        self.inner.update(id, update).await
    }

    async fn alive(&self, id: &str) -> Result<(), WaitStoreError> {
        self.inner.alive(id).await
    }

    async fn cancel(&self, id: &str, user: &str) -> Result<Option<StoredTask>, WaitStoreError> {
        self.inner.cancel(id, user).await
    }

    async fn respond(
        &self,
        id: &str,
        user: &str,
        responses: &rmcp::model::JsonObject,
    ) -> Result<Option<StoredTask>, WaitStoreError> {
        self.inner.respond(id, user, responses).await
    }
}

#[cfg(feature = "sqlite")]
#[async_trait::async_trait]
impl WaitStore for Counted {
    async fn put(&self, wait: &KeptWait, per_user: usize) -> Result<(), WaitStoreError> {
        self.inner.put(wait, per_user).await
    }

    async fn take(
        &self,
        handle: &str,
        user: &str,
        tool: &str,
    ) -> Result<Option<KeptWait>, WaitStoreError> {
        self.inner.take(handle, user, tool).await
    }
}
