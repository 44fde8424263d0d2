//! Calls waiting between 2026-07-28 rounds, kept in a store (features
//! `sqlite` and `postgres`): two servers on one store stand for two
//! instances behind a load balancer (or one before and after a restart).
//! A call's approval asked by one is granted through the other and the
//! tool runs once there; a handle is good for one retry on any of them and
//! for its own user only; a started call is not run again elsewhere unless
//! its tool is idempotent (then the recorded answers are given again); an
//! expired wait ends with a result saying so. The stores themselves: a
//! wait taken once, by its user and tool only, and a user's oldest waits
//! dropped past their bound.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use oscova_core::prelude::*;
use oscova_mcp::http::McpHttpServer;
use oscova_mcp::wait::{Answered, KeptWait, WaitStore};
use serde_json::{Value, json};

use super::{ALICE, BOB, Running, post, with_tokens};

/// How many times a tool body ran to its end.
#[derive(Default)]
pub struct Runs(AtomicUsize);

/// Tools that wait for the person.
pub struct WaitToolset {
    runs: Option<Arc<Runs>>,
}

impl WaitToolset {
    fn ran(&self) {
        if let Some(runs) = &self.runs {
            runs.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[toolset]
impl WaitToolset {
    /// Returns the text, asking nobody.
    pub fn echo(
        /// The text.
        text: String,
    ) -> String {
        text
    }

    /// Pays someone: needs the person's approval.
    #[tool(approval = Required)]
    pub fn pay(
        &self,
        /// To whom.
        to: String,
    ) -> String {
        self.ran();
        format!("paid {to}")
    }

    /// Asks twice inside its body; not safe to repeat.
    pub async fn confirm_twice(&self, invocation: &ToolInvocation) -> Result<String, String> {
        let mut said = Vec::new();
        for question in ["First?", "Second?"] {
            let yes = invocation
                .confirm(question)
                .await
                .map_err(|e| e.to_string())?;
            said.push(if yes { "yes" } else { "no" });
        }
        self.ran();
        Ok(said.join(" "))
    }

    /// Asks twice inside its body; safe to repeat.
    #[tool(idempotent)]
    pub async fn check_twice(&self, invocation: &ToolInvocation) -> Result<String, String> {
        self.confirm_twice(invocation).await
    }
}

/// The plugin of the tools above.
#[plugin(id = "test.wait")]
pub struct WaitPlugin;

impl AgentPlugin for WaitPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|ctx: &AgentPluginContext| WaitToolset {
            runs: ctx.service::<Runs>(),
        });
    }
}

const PAY: &str = "test_wait__wait__pay";
#[cfg(feature = "sqlite")]
const ECHO: &str = "test_wait__wait__echo";
const CONFIRM: &str = "test_wait__wait__confirm_twice";
const CHECK: &str = "test_wait__wait__check_twice";

/// Two servers ("instances") over one store, each host counting its own
/// runs.
struct Fleet {
    a: Running,
    b: Running,
    runs_a: Arc<Runs>,
    runs_b: Arc<Runs>,
}

impl Fleet {
    async fn start(store: Arc<dyn WaitStore>) -> Self {
        let (a, runs_a) = instance(store.clone()).await;
        let (b, runs_b) = instance(store).await;
        Self {
            a,
            b,
            runs_a,
            runs_b,
        }
    }

    fn runs(&self) -> (usize, usize) {
        (
            self.runs_a.0.load(Ordering::SeqCst),
            self.runs_b.0.load(Ordering::SeqCst),
        )
    }

    async fn shutdown(self) {
        self.a.shutdown().await;
        self.b.shutdown().await;
    }
}

async fn instance(store: Arc<dyn WaitStore>) -> (Running, Arc<Runs>) {
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![WaitPlugin])
        .service(Runs::default())
        .build()
        .unwrap();
    let runs = host.service::<Runs>().unwrap();
    let server = with_tokens(McpHttpServer::new(host)).wait_store_arc(Some(store));
    (Running::start(server).await, runs)
}

/// One stateless 2026-07-28 `tools/call` of `tool` with `arguments` by
/// `token`'s user, with `extra` params (an answer and a state): the
/// JSON-RPC answer.
async fn round(url: &str, token: &str, tool: &str, arguments: Value, extra: Value) -> Value {
    let mut params = json!({
        "name": tool,
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        },
    });
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params});
    let auth = format!("Bearer {token}");
    let response = post(
        url,
        &body.to_string(),
        &[
            ("authorization", &auth),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", tool),
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

fn accept(state: &Value) -> Value {
    json!({
        "requestState": state,
        "inputResponses": {"oscova.ask": {"action": "accept", "content": {}}},
    })
}

/// The `requestState` of an `input_required` answer asking `message`.
fn asked(answer: &Value, message: &str) -> Value {
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    let ask = &result["inputRequests"]["oscova.ask"]["params"]["message"];
    assert!(
        ask.as_str().unwrap_or_default().starts_with(message),
        "{answer}"
    );
    result["requestState"].clone()
}

fn refused(answer: &Value) {
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

async fn approval_asked_on_one_is_granted_through_the_other(store: Arc<dyn WaitStore>) {
    let fleet = Fleet::start(store).await;
    let to = json!({"to": "bob"});
    let first = round(&fleet.a.url, ALICE, PAY, to.clone(), json!({})).await;
    let state = asked(&first, "Allow the tool `test_wait__wait__pay`");
    assert_eq!(state.as_str().map(str::len), Some(32), "{first}");

    // Bob cannot take Alice's call on either instance, nor with another
    // tool; her handle stays good.
    refused(&round(&fleet.b.url, BOB, PAY, to.clone(), accept(&state)).await);
    refused(&round(&fleet.a.url, BOB, PAY, to.clone(), accept(&state)).await);
    refused(&round(&fleet.b.url, ALICE, CONFIRM, json!({}), accept(&state)).await);
    // A retry whose arguments are not the call's runs nothing.
    let other = round(
        &fleet.b.url,
        ALICE,
        PAY,
        json!({"to": "eve"}),
        accept(&state),
    )
    .await;
    refused(&other);
    assert_eq!(fleet.runs(), (0, 0));

    let first = round(&fleet.a.url, ALICE, PAY, to.clone(), json!({})).await;
    let state = asked(&first, "Allow the tool `test_wait__wait__pay`");
    let done = round(&fleet.b.url, ALICE, PAY, to.clone(), accept(&state)).await;
    assert_eq!(text(&done), "paid bob", "{done}");
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(fleet.runs(), (0, 1), "run once, where the yes came");

    // The handle was good for that one retry, on every instance.
    refused(&round(&fleet.a.url, ALICE, PAY, to.clone(), accept(&state)).await);
    refused(&round(&fleet.b.url, ALICE, PAY, to.clone(), accept(&state)).await);
    assert_eq!(fleet.runs(), (0, 1));

    // Answered where it is parked, the call goes on from memory, and the
    // other instance can no longer take its handle.
    let first = round(&fleet.a.url, ALICE, PAY, to.clone(), json!({})).await;
    let state = asked(&first, "Allow");
    let done = round(&fleet.a.url, ALICE, PAY, to.clone(), accept(&state)).await;
    assert_eq!(text(&done), "paid bob", "{done}");
    refused(&round(&fleet.b.url, ALICE, PAY, to.clone(), accept(&state)).await);
    assert_eq!(fleet.runs(), (1, 1));

    // A declined approval replayed elsewhere runs nothing either.
    let first = round(&fleet.a.url, ALICE, PAY, to.clone(), json!({})).await;
    let state = asked(&first, "Allow");
    let decline = json!({
        "requestState": state,
        "inputResponses": {"oscova.ask": {"action": "decline"}},
    });
    let denied = round(&fleet.b.url, ALICE, PAY, to, decline).await;
    assert_eq!(denied["result"]["isError"], true, "{denied}");
    assert_eq!(fleet.runs(), (1, 1));
    fleet.shutdown().await;
}

async fn started_calls_elsewhere_are_interrupted_unless_idempotent(store: Arc<dyn WaitStore>) {
    let fleet = Fleet::start(store).await;
    let first = round(&fleet.a.url, ALICE, CONFIRM, json!({}), json!({})).await;
    let state = asked(&first, "First?");
    let ended = round(&fleet.b.url, ALICE, CONFIRM, json!({}), accept(&state)).await;
    assert_eq!(ended["result"]["isError"], true, "{ended}");
    assert!(text(&ended).starts_with("interrupted:"), "{ended}");
    assert_eq!(
        ended["result"]["structuredContent"]["error"], "interrupted",
        "{ended}"
    );
    // Not run there, nor by its instance, which no longer gets the handle.
    refused(&round(&fleet.a.url, ALICE, CONFIRM, json!({}), accept(&state)).await);
    assert_eq!(fleet.runs(), (0, 0));

    // An idempotent tool runs again, the first answer given again, and
    // asks the second question from there.
    let first = round(&fleet.a.url, ALICE, CHECK, json!({}), json!({})).await;
    let state = asked(&first, "First?");
    let second = round(&fleet.b.url, ALICE, CHECK, json!({}), accept(&state)).await;
    let next = asked(&second, "Second?");
    let decline = json!({
        "requestState": next,
        "inputResponses": {"oscova.ask": {"action": "decline"}},
    });
    let done = round(&fleet.a.url, ALICE, CHECK, json!({}), decline).await;
    // Back on the first instance, the second run (parked on the other) is
    // run a third time: both answers given again.
    assert_eq!(text(&done), "yes no", "{done}");
    assert_eq!(fleet.runs(), (1, 0));
    fleet.shutdown().await;
}

async fn an_expired_wait_ends_with_a_result_saying_so(store: Arc<dyn WaitStore>) {
    let fleet = Fleet::start(store.clone()).await;
    let handle = "0123456789abcdef0123456789abcdef";
    let asked = json!({"message": "Allow?"});
    // A second ago: kept (expired waits go a day after), and expired.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let expired_at = i64::try_from(now).unwrap() - 1_000;
    let wait = KeptWait::new(
        handle,
        ("alice", PAY),
        json!({"to": "bob"}),
        asked,
        false,
        expired_at,
    );
    store.put(&wait, 64).await.unwrap();
    let ended = round(
        &fleet.b.url,
        ALICE,
        PAY,
        json!({"to": "bob"}),
        accept(&json!(handle)),
    )
    .await;
    assert_eq!(ended["result"]["isError"], true, "{ended}");
    assert!(text(&ended).starts_with("expired:"), "{ended}");
    assert!(text(&ended).contains("did not run"), "{ended}");
    assert_eq!(ended["result"]["structuredContent"]["error"], "expired");
    refused(
        &round(
            &fleet.a.url,
            ALICE,
            PAY,
            json!({"to": "bob"}),
            accept(&json!(handle)),
        )
        .await,
    );
    assert_eq!(fleet.runs(), (0, 0));
    fleet.shutdown().await;
}

/// A real store, counting what it is asked.
#[cfg(feature = "sqlite")]
#[derive(Debug)]
struct Counted {
    inner: Arc<dyn WaitStore>,
    puts: AtomicUsize,
    takes: AtomicUsize,
}

#[cfg(feature = "sqlite")]
impl Counted {
    fn counts(&self) -> (usize, usize) {
        (
            self.puts.load(Ordering::SeqCst),
            self.takes.load(Ordering::SeqCst),
        )
    }
}

#[cfg(feature = "sqlite")]
#[async_trait::async_trait]
impl WaitStore for Counted {
    async fn put(
        &self,
        wait: &KeptWait,
        per_user: usize,
    ) -> Result<(), oscova_mcp::wait::WaitStoreError> {
        self.puts.fetch_add(1, Ordering::SeqCst);
        self.inner.put(wait, per_user).await
    }

    async fn take(
        &self,
        handle: &str,
        user: &str,
        tool: &str,
    ) -> Result<Option<KeptWait>, oscova_mcp::wait::WaitStoreError> {
        self.takes.fetch_add(1, Ordering::SeqCst);
        self.inner.take(handle, user, tool).await
    }
}

/// Tasks pass through uncounted: the calls here are no tasks.
#[cfg(feature = "sqlite")]
#[async_trait::async_trait]
impl oscova_mcp::task::TaskStore for Counted {
    async fn create(
        &self,
        task: &oscova_mcp::task::StoredTask,
    ) -> Result<(), oscova_mcp::wait::WaitStoreError> {
        self.inner.create(task).await
    }

    async fn get(
        &self,
        id: &str,
        user: &str,
    ) -> Result<Option<oscova_mcp::task::StoredTask>, oscova_mcp::wait::WaitStoreError> {
        self.inner.get(id, user).await
    }

    async fn update(
        &self,
        id: &str,
        update: &oscova_mcp::task::TaskUpdate,
    ) -> Result<bool, oscova_mcp::wait::WaitStoreError> {
        self.inner.update(id, update).await
    }

    async fn alive(&self, id: &str) -> Result<(), oscova_mcp::wait::WaitStoreError> {
        self.inner.alive(id).await
    }

    async fn cancel(
        &self,
        id: &str,
        user: &str,
    ) -> Result<Option<oscova_mcp::task::StoredTask>, oscova_mcp::wait::WaitStoreError> {
        self.inner.cancel(id, user).await
    }

    async fn respond(
        &self,
        id: &str,
        user: &str,
        responses: &rmcp::model::JsonObject,
    ) -> Result<Option<oscova_mcp::task::StoredTask>, oscova_mcp::wait::WaitStoreError> {
        self.inner.respond(id, user, responses).await
    }
}

/// A call that never asks reads and writes no store; one that asks writes
/// its wait once and its retry takes it once.
#[cfg(feature = "sqlite")]
async fn a_call_that_never_asks_touches_no_store(store: Arc<dyn WaitStore>) {
    let counted = Arc::new(Counted {
        inner: store,
        puts: AtomicUsize::new(0),
        takes: AtomicUsize::new(0),
    });
    let (server, runs) = instance(counted.clone()).await;
    for _ in 0..3 {
        let echoed = round(&server.url, ALICE, ECHO, json!({"text": "hi"}), json!({})).await;
        assert_eq!(text(&echoed), "hi", "{echoed}");
    }
    assert_eq!(counted.counts(), (0, 0));
    let to = json!({"to": "bob"});
    let first = round(&server.url, ALICE, PAY, to.clone(), json!({})).await;
    let state = asked(&first, "Allow");
    assert_eq!(counted.counts(), (1, 0), "kept before the answer went out");
    let done = round(&server.url, ALICE, PAY, to, accept(&state)).await;
    assert_eq!(text(&done), "paid bob", "{done}");
    assert_eq!(counted.counts(), (1, 1));
    assert_eq!(runs.0.load(Ordering::SeqCst), 1);
    server.shutdown().await;
}

/// With the store gone, nobody is asked: the approval is denied, saying
/// why, and the tool does not run.
#[cfg(feature = "postgres")]
async fn a_question_whose_wait_cannot_be_kept_is_not_asked(
    store: Arc<dyn WaitStore>,
    stop_the_store: impl FnOnce(),
) {
    let (server, runs) = instance(store).await;
    stop_the_store();
    let denied = round(&server.url, ALICE, PAY, json!({"to": "bob"}), json!({})).await;
    assert_eq!(denied["result"]["isError"], true, "{denied}");
    assert!(
        text(&denied).contains("its wait could not be kept"),
        "{denied}"
    );
    assert_eq!(runs.0.load(Ordering::SeqCst), 0);
    server.shutdown().await;
}

/// A store's own promises: a wait taken once, by its user and tool only,
/// as it was kept; a user's oldest waits dropped past their bound.
async fn a_store_gives_a_wait_once_to_its_user(
    store: Arc<dyn WaitStore>,
    other: Arc<dyn WaitStore>,
) {
    let wait = KeptWait::new(
        "aa".repeat(16),
        ("alice", "t"),
        json!({"x": 1}),
        json!({"message": "Go?"}),
        true,
        i64::MAX,
    )
    .with_answered(vec![Answered::new(
        json!({"message": "Before?"}),
        json!({"action": "accept", "content": {"n": 2}}),
    )]);
    store.put(&wait, 64).await.unwrap();
    assert!(
        store
            .take(&wait.handle, "bob", "t")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .take(&wait.handle, "alice", "u")
            .await
            .unwrap()
            .is_none()
    );
    // Two takers at once, through two connections: one gets it.
    let (one, two) = tokio::join!(
        store.take(&wait.handle, "alice", "t"),
        other.take(&wait.handle, "alice", "t"),
    );
    let taken: Vec<KeptWait> = [one.unwrap(), two.unwrap()].into_iter().flatten().collect();
    assert_eq!(taken, vec![wait.clone()]);
    assert!(
        store
            .take(&wait.handle, "alice", "t")
            .await
            .unwrap()
            .is_none()
    );

    let handles: Vec<String> = (0..3).map(|i| format!("{i:032}")).collect();
    for handle in &handles {
        let mut next = wait.clone();
        next.handle = handle.clone();
        store.put(&next, 2).await.unwrap();
    }
    assert!(
        store
            .take(&handles[0], "alice", "t")
            .await
            .unwrap()
            .is_none(),
        "the oldest gave way"
    );
    for handle in &handles[1..] {
        assert!(store.take(handle, "alice", "t").await.unwrap().is_some());
    }
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use std::sync::Arc;

    use oscova_mcp::wait::{SqliteWaitStore, WaitStore};

    async fn store(name: &str) -> Arc<dyn WaitStore> {
        let path = std::env::temp_dir()
            .join(format!(
                "oscova-mcp-waits-{}-{name}-{:?}",
                std::process::id(),
                std::time::SystemTime::now()
            ))
            .join("sessions.db");
        Arc::new(SqliteWaitStore::open(path).await.unwrap())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn approval_asked_on_one_is_granted_through_the_other() {
        super::approval_asked_on_one_is_granted_through_the_other(store("approve").await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn started_calls_elsewhere_are_interrupted_unless_idempotent() {
        super::started_calls_elsewhere_are_interrupted_unless_idempotent(store("started").await)
            .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_expired_wait_ends_with_a_result_saying_so() {
        super::an_expired_wait_ends_with_a_result_saying_so(store("expired").await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_that_never_asks_touches_no_store() {
        super::a_call_that_never_asks_touches_no_store(store("untouched").await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_store_gives_a_wait_once_to_its_user() {
        // One writer per file per process: both takers go through it.
        let one = store("once").await;
        super::a_store_gives_a_wait_once_to_its_user(one.clone(), one).await;
    }
}

#[cfg(feature = "postgres")]
mod postgres {
    use std::sync::Arc;

    use oscova_mcp::wait::{KeptWait, PostgresWaitStore, WaitStore};
    use serde_json::json;

    async fn store(config: &str) -> Arc<dyn WaitStore> {
        Arc::new(PostgresWaitStore::connect(config).await.unwrap())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn approval_asked_on_one_is_granted_through_the_other() {
        let cluster = oscova_test_support::postgres::Cluster::start();
        let config = cluster.create_database("mcp_waits");
        super::approval_asked_on_one_is_granted_through_the_other(store(&config).await).await;
        let config = cluster.create_database("mcp_waits_started");
        super::started_calls_elsewhere_are_interrupted_unless_idempotent(store(&config).await)
            .await;
        let config = cluster.create_database("mcp_waits_expired");
        super::an_expired_wait_ends_with_a_result_saying_so(store(&config).await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_question_whose_wait_cannot_be_kept_is_not_asked() {
        let cluster = oscova_test_support::postgres::Cluster::start();
        let config = cluster.create_database("mcp_waits_gone");
        let store = store(&config).await;
        super::a_question_whose_wait_cannot_be_kept_is_not_asked(store, move || drop(cluster))
            .await;
    }

    /// The server ends the store's connection (a restart, a failover): the
    /// next use connects again, and the wait kept before is there.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_store_whose_connection_the_server_ended_connects_again() {
        let cluster = oscova_test_support::postgres::Cluster::start();
        let config = cluster.create_database("mcp_waits_again");
        let store = store(&config).await;
        let wait = KeptWait::new(
            "bb".repeat(16),
            ("alice", "t"),
            json!({}),
            json!({"message": "Go?"}),
            false,
            i64::MAX,
        );
        store.put(&wait, 64).await.unwrap();
        let (admin, connection) = tokio_postgres::connect(&config, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        // Waits (up to its timeout) until each backend has ended.
        let ended = admin
            .query(
                "SELECT pg_terminate_backend(pid, 60000) FROM pg_stat_activity \
                 WHERE datname = current_database() AND pid <> pg_backend_pid()",
                &[],
            )
            .await
            .unwrap();
        assert_eq!(ended.len(), 1, "the store's one connection");
        assert!(ended[0].get::<_, bool>(0));
        let taken = store.take(&wait.handle, "alice", "t").await.unwrap();
        assert_eq!(taken, Some(wait.clone()));
        store.put(&wait, 64).await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_store_gives_a_wait_once_to_its_user() {
        let cluster = oscova_test_support::postgres::Cluster::start();
        let config = cluster.create_database("mcp_waits_once");
        super::a_store_gives_a_wait_once_to_its_user(store(&config).await, store(&config).await)
            .await;
    }
}
