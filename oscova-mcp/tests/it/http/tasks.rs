//! Tool calls served as MCP tasks (SEP-2663), driven by rmcp's client (a
//! real client of the extension: `call_tool_once`, `get_task`,
//! `update_task`, `cancel_task`) over HTTP on 127.0.0.1. One server keeps
//! its tasks in memory; two servers on one store (SQLite, Postgres) stand
//! for two instances: a task made on one is polled, answered and
//! cancelled through the other, its call running (and cancelled) where it
//! was made. A task is its user's; a task whose instance stopped is
//! reported interrupted, never run again.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use oscova_core::prelude::*;
use oscova_mcp::http::McpHttpServer;
use oscova_mcp::task::{TASK_POLL_INTERVAL, TASK_TTL};
use oscova_mcp::wait::WaitStore;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    ElicitationCapability, FormElicitationCapability, GetTaskParams, GetTaskResult, Implementation,
    InputRequest, InputResponses, TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::Notify;
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

/// A server (an instance) over `store` (memory when `None`), and what
/// its tools saw.
async fn instance(store: Option<Arc<dyn WaitStore>>) -> (Running, Arc<Seen>) {
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![TaskPlugin])
        .service(Seen::default())
        .build()
        .unwrap();
    let seen = host.service::<Seen>().unwrap();
    let server = with_tokens(McpHttpServer::new(host)).wait_store_arc(store);
    (Running::start(server).await, seen)
}

type Client = RunningService<RoleClient, ClientConfig>;

/// rmcp's client as `token`'s user, declaring form elicitation and, when
/// `tasks`, the tasks extension.
async fn client(url: &str, token: &str, tasks: bool) -> Client {
    tls_provider();
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
    let config = ClientConfig::new(capabilities, Implementation::new("tasks-test", "1"));
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url).auth_header(token),
    );
    timeout(PATIENCE, config.serve(transport))
        .await
        .expect("initialize answers")
        .unwrap()
}

/// Calls `tool` once; the task id it answers with, checking its seed.
async fn start(client: &Client, tool: &str, arguments: Value) -> String {
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

async fn get(client: &Client, id: &str) -> Result<GetTaskResult, ServiceError> {
    timeout(PATIENCE, client.get_task(GetTaskParams::new(id)))
        .await
        .expect("tasks/get answers")
}

/// Polls task `id` at its hint until `done` says so; the last state.
async fn poll_until(
    client: &Client,
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
