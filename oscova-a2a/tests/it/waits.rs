//! An approval waited for in one server, granted through another on the
//! same SQLite file (sessions and tasks, as `oscova serve` keeps them): a
//! session extension's `pay` tool requires approval, asked as a
//! confirmation in `INPUT_REQUIRED` before the tool starts; the yes sent to
//! the other server resumes the run there, which asks again, gets the kept
//! yes without asking, and runs the tool once. The server that asked gives
//! way and writes nothing over the result. Also: a server whose question
//! cannot be answered in time ends the task `FAILED` with `expired:`
//! (a confirmation and a scope tool's approval alike); the same tool as a plugin's scope tool is approved by the task's client
//! (`tasks/approve.rs`), or unasked by a server that approves itself.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use oscova_a2a::{SqliteTaskStore, TaskStore};
use oscova_agent::session::agent::{AgentError, Extension, ExtensionFactory, SessionApi};
use oscova_agent::session::{SessionStore, SqliteStore};
use oscova_core::prelude::*;
use serde_json::{Value, json};

use crate::support::{ALICE, BOB, SPEND, ScriptedPlugin, Server, Tweak, agent_host};

/// The extension's tools: `pay`, approval required, appends a line to its
/// ledger file for each run.
pub(crate) struct PayToolset {
    ledger: PathBuf,
}

#[allow(unreachable_pub)]
#[toolset]
impl PayToolset {
    /// Pays, once allowed.
    #[tool(approval = Required)]
    pub fn pay(
        &self,
        /// What the payment is for.
        memo: String,
    ) -> String {
        let _ = memo;
        use std::io::Write as _;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.ledger)
            .unwrap();
        writeln!(file, "paid").unwrap();
        "paid bob".to_owned()
    }
}

/// [`PayToolset`] as a plugin's: a scope tool, [`SPEND`].
#[plugin(id = "test.pay")]
#[derive(Default)]
struct PayPlugin {
    ledger: PathBuf,
}

impl AgentPlugin for PayPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        let ledger = self.ledger.clone();
        builder.add_toolset(move |_: &AgentPluginContext| PayToolset {
            ledger: ledger.clone(),
        });
    }
}

/// Registers [`PayToolset`] in each session.
struct PayExtension {
    ledger: PathBuf,
}

impl Extension for PayExtension {
    fn name(&self) -> &str {
        "pay"
    }

    fn activate(&mut self, api: &mut SessionApi) -> Result<(), AgentError> {
        api.register_toolset(PayToolset {
            ledger: self.ledger.clone(),
        });
        Ok(())
    }
}

/// A server on the SQLite file `db` with the pay extension writing to
/// `ledger`, leaving unfinished tasks alone (it shares the file), with
/// `tweak`'s settings.
async fn server(db: &std::path::Path, ledger: &std::path::Path, tweak: Option<Tweak>) -> Server {
    let sessions: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(db).await.unwrap());
    let tasks: Arc<dyn TaskStore> = Arc::new(SqliteTaskStore::open(db).await.unwrap());
    let ledger = ledger.to_owned();
    let extension: ExtensionFactory = Arc::new(move || {
        Box::new(PayExtension {
            ledger: ledger.clone(),
        }) as Box<dyn Extension>
    });
    let plugins = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(ScriptedPlugin);
    let agents = agent_host(plugins, sessions, Some(extension));
    agents.plugins().redactor().add(SECRET);
    Server::start_agents(agents, tasks, false, tweak, None, None).await
}

fn send(text: &str, task: Option<&str>) -> Value {
    let mut message = json!({
        "messageId": format!("m-{text}-{}", task.unwrap_or("new")),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    });
    if let Some(task) = task {
        message["taskId"] = json!(task);
    }
    json!({"message": message})
}

/// A host secret the model puts in the call's arguments.
const SECRET: &str = "sk-host-secret-0123456789";

/// The waits kept in the SQLite file `db`, as stored.
fn kept(db: &std::path::Path) -> Vec<Value> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut statement = conn.prepare("SELECT wait FROM a2a_waits").unwrap();
    statement
        .query_map([], |row| row.get::<_, String>(0))
        .unwrap()
        .map(|json| serde_json::from_str(&json.unwrap()).unwrap())
        .collect()
}

fn runs(ledger: &std::path::Path) -> usize {
    std::fs::read_to_string(ledger).map_or(0, |t| t.lines().count())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_asked_by_one_server_is_granted_through_another_and_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let (db, ledger) = (dir.path().join("sessions.db"), dir.path().join("paid.txt"));
    let a = server(&db, &ledger, None).await;
    let b = server(&db, &ledger, None).await;

    let said = format!("pay bob with {SECRET}");
    let asked = a.rpc(ALICE, "SendMessage", send(&said, None)).await;
    let task = &asked["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{asked}"
    );
    let question = task["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        question.starts_with("Allow the tool `pay` to run?"),
        "{asked}"
    );
    let id = task["id"].as_str().unwrap().to_owned();
    // Kept before it was asked: the call, its user, the question, an
    // expiry; the host's secret redacted.
    let waits = kept(&db);
    assert_eq!(waits.len(), 1, "{waits:?}");
    let wait = &waits[0];
    assert_eq!(wait["user"], "alice");
    assert_eq!(wait["tool"], "pay");
    assert_eq!(wait["asked"]["kind"], "confirm");
    assert_eq!(wait["arguments"]["memo"], "pay bob with [REDACTED]");
    assert!(!wait.to_string().contains(SECRET), "{wait}");
    assert!(wait["expiresAt"].as_i64().unwrap() > 0);

    // Bob's yes reaches no task, on either server.
    for server in [&a, &b] {
        let bobs = server.rpc(BOB, "SendMessage", send("yes", Some(&id))).await;
        assert_eq!(bobs["error"]["code"], -32001, "{bobs}");
    }
    assert_eq!(runs(&ledger), 0);

    let done = b.rpc(ALICE, "SendMessage", send("yes", Some(&id))).await;
    let finished = &done["result"]["task"];
    assert_eq!(
        finished["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    assert_eq!(
        finished["artifacts"][0]["parts"][0]["text"], "Tool said: paid bob",
        "{done}"
    );
    assert_eq!(runs(&ledger), 1, "{done}");
    assert!(kept(&db).is_empty());

    // One answer per question, on either server; the one that asked gave
    // way (it checks every two seconds) and wrote nothing over the result.
    for server in [&a, &b] {
        let again = server
            .rpc(ALICE, "SendMessage", send("yes", Some(&id)))
            .await;
        assert_eq!(again["error"]["code"], -32004, "{again}");
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let got = a.rpc(ALICE, "GetTask", json!({"id": id})).await;
    assert_eq!(
        got["result"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{got}"
    );
    assert_eq!(runs(&ledger), 1);
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_unanswered_past_its_wait_ends_the_task_failed_expired() {
    // The extension tool's confirmation, then the scope tool's approval.
    for (said, tool) in [
        ("pay bob", "`pay`".to_owned()),
        ("spend", format!("`{SPEND}`")),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (db, ledger) = (dir.path().join("sessions.db"), dir.path().join("paid.txt"));
        let short: Tweak = Box::new(|s| s.input_wait(Duration::from_millis(500)));
        let a = if said == "spend" {
            scope_server(&db, &ledger, Some(short)).await
        } else {
            server(&db, &ledger, Some(short)).await
        };

        let asked = a.rpc(ALICE, "SendMessage", send(said, None)).await;
        let id = asked["result"]["task"]["id"].as_str().unwrap().to_owned();
        let mut state = Value::Null;
        for _ in 0..50 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let got = a.rpc(ALICE, "GetTask", json!({"id": id})).await;
            state = got["result"]["status"].clone();
            if state["state"] == "TASK_STATE_FAILED" {
                break;
            }
        }
        assert_eq!(state["state"], "TASK_STATE_FAILED", "{state}");
        let text = state["message"]["parts"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.starts_with("expired:"), "{state}");
        assert!(text.contains(&tool), "{state}");
        // Too late: the answer finds nothing to answer, and nothing ran.
        let late = a.rpc(ALICE, "SendMessage", send("yes", Some(&id))).await;
        assert_eq!(late["error"]["code"], -32004, "{late}");
        assert_eq!(runs(&ledger), 0);
        assert!(kept(&db).is_empty());
        a.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_through_another_server_holds_and_the_asking_server_gives_way() {
    let dir = tempfile::tempdir().unwrap();
    let (db, ledger) = (dir.path().join("sessions.db"), dir.path().join("paid.txt"));
    // One running task per user on A: its next task starts only once the
    // waiting run gave way.
    let one: Tweak = Box::new(|s| {
        let mut limits = oscova_a2a::Limits::default();
        limits.max_tasks_per_user = 1;
        s.limits(limits)
    });
    let a = server(&db, &ledger, Some(one)).await;
    let b = server(&db, &ledger, None).await;
    let asked = a.rpc(ALICE, "SendMessage", send("pay bob", None)).await;
    let id = asked["result"]["task"]["id"].as_str().unwrap().to_owned();
    let canceled = b.rpc(ALICE, "CancelTask", json!({"id": id})).await;
    assert_eq!(
        canceled["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
    assert!(kept(&db).is_empty(), "the wait ended with the task");
    // The answer, on either server, finds nothing to answer; the server
    // that asked gave way and wrote nothing over the cancel.
    for server in [&a, &b] {
        let late = server
            .rpc(ALICE, "SendMessage", send("yes", Some(&id)))
            .await;
        assert_eq!(late["error"]["code"], -32004, "{late}");
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let got = a.rpc(ALICE, "GetTask", json!({"id": id})).await;
    assert_eq!(
        got["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{got}"
    );
    assert_eq!(runs(&ledger), 0);
    let next = a.rpc(ALICE, "SendMessage", send("hello", None)).await;
    assert_eq!(
        next["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "the run that asked no longer holds Alice's place: {next}"
    );
    a.stop().await;
    b.stop().await;
}

/// A server on the SQLite file `db` with [`PayPlugin`] writing to
/// `ledger` (no extension), with `tweak`'s settings.
async fn scope_server(
    db: &std::path::Path,
    ledger: &std::path::Path,
    tweak: Option<Tweak>,
) -> Server {
    let sessions: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(db).await.unwrap());
    let tasks: Arc<dyn TaskStore> = Arc::new(SqliteTaskStore::open(db).await.unwrap());
    let plugins = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(ScriptedPlugin)
        .plugin_instance(PayPlugin {
            ledger: ledger.to_owned(),
        });
    let agents = agent_host(plugins, sessions, None);
    agents.plugins().redactor().add(SECRET);
    Server::start_agents(agents, tasks, false, tweak, None, None).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scope_tools_approval_is_asked_of_the_client_unless_the_server_approves_itself() {
    let dir = tempfile::tempdir().unwrap();
    let (db, ledger) = (dir.path().join("sessions.db"), dir.path().join("paid.txt"));
    let a = scope_server(&db, &ledger, None).await;
    let b = scope_server(&db, &ledger, None).await;
    let said = format!("spend with {SECRET}");
    let asked = a.rpc(ALICE, "SendMessage", send(&said, None)).await;
    let task = &asked["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{asked}"
    );
    let question = task["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        question.starts_with(&format!(
            "Allow the tool `{SPEND}` to run with these arguments? {{\"memo\":\"spend with [REDACTED]\"}}"
        )),
        "{asked}"
    );
    let status = task["status"].to_string();
    assert!(!status.contains(SECRET), "{status}");
    let id = task["id"].as_str().unwrap().to_owned();
    let waits = kept(&db);
    assert_eq!(waits.len(), 1, "{waits:?}");
    assert_eq!(waits[0]["tool"], SPEND);
    assert_eq!(waits[0]["arguments"]["memo"], "spend with [REDACTED]");
    assert!(!waits[0].to_string().contains(SECRET), "{waits:?}");
    assert_eq!(runs(&ledger), 0, "not run before the yes");

    // Granted through the other server: run there, once.
    let done = b.rpc(ALICE, "SendMessage", send("yes", Some(&id))).await;
    let finished = &done["result"]["task"];
    assert_eq!(
        finished["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    assert_eq!(
        finished["artifacts"][0]["parts"][0]["text"], "Tool said: paid bob",
        "{done}"
    );
    assert_eq!(runs(&ledger), 1, "{done}");
    assert!(kept(&db).is_empty());
    a.stop().await;
    b.stop().await;

    // A server that approves such calls itself asks nothing.
    let (db, ledger) = (
        dir.path().join("approving.db"),
        dir.path().join("approved.txt"),
    );
    let approving: Tweak = Box::new(|server| server.allow_approval_required(true));
    let c = scope_server(&db, &ledger, Some(approving)).await;
    let done = c.rpc(ALICE, "SendMessage", send("spend now", None)).await;
    let finished = &done["result"]["task"];
    assert_eq!(
        finished["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    assert_eq!(runs(&ledger), 1, "{done}");
    assert!(kept(&db).is_empty());
    c.stop().await;
}
