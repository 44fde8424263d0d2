//! Each call runs at most once, across crashes: the started mark is
//! committed before a tool runs, and the next run settles a batch a
//! stopped process left (`recover.rs`).
//!
//! The crash is the first "process"'s run dropped while a tool's body, or
//! a person's approval, holds: nothing after that point reaches the store,
//! as when the process is killed (the CLI's `chat_recover` kills a real
//! one). A second agent host over the same store file plays the process
//! started again. The stores are SQLite files (and a Postgres cluster for
//! the mid-batch case with the `postgres` feature).

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oscova_agent::session::agent::*;
use oscova_agent::session::{
    AgentMessage, EntryKind, Session, SessionEntry, SessionStore, SqliteStore,
};
use oscova_core::host::ApprovalHandler;
use oscova_core::prelude::*;
use oscova_core::provider::BoxFuture;
use oscova_core::provider::model::{ChatMessage, ChatRole};
use serde_json::json;

use super::*;

const CHARGE: &str = "test_recover__recover__charge";
const REFRESH: &str = "test_recover__recover__refresh";
pub(super) const SEND: &str = "test_recover__recover__send";
const STEP: &str = "test_recover__recover__step";

/// What the tools did, and which of their bodies hold (the crash point).
#[derive(Default)]
pub struct Effects {
    /// One line per body entered, such as `charge rent`.
    ran: Mutex<Vec<String>>,
    /// Bodies (or approvals) to hold, once each, by their line.
    hold: Mutex<HashSet<String>>,
    /// Told when a held body or approval is reached.
    pub(super) entered: tokio::sync::Notify,
}

impl Effects {
    pub(super) fn holding(lines: &[&str]) -> Arc<Self> {
        let effects = Self::default();
        effects
            .hold
            .lock()
            .unwrap()
            .extend(lines.iter().map(|l| (*l).to_owned()));
        Arc::new(effects)
    }

    pub(super) fn ran(&self) -> Vec<String> {
        self.ran.lock().unwrap().clone()
    }

    /// Holds forever when `line` is to be held (once).
    async fn maybe_hold(&self, line: &str) {
        if self.hold.lock().unwrap().remove(line) {
            self.entered.notify_one();
            std::future::pending::<()>().await;
        }
    }

    async fn body(&self, line: String) -> String {
        self.ran.lock().unwrap().push(line.clone());
        self.maybe_hold(&line).await;
        format!("done: {line}")
    }
}

/// Tools with an effect a test can count.
pub struct RecoverToolset {
    effects: Arc<Effects>,
}

#[toolset]
impl RecoverToolset {
    /// Charges money (not safe to repeat).
    pub async fn charge(
        &self,
        /// What for.
        what: String,
    ) -> String {
        self.effects.body(format!("charge {what}")).await
    }

    /// Refreshes a cache (safe to repeat).
    #[tool(idempotent)]
    pub async fn refresh(
        &self,
        /// Which cache.
        what: String,
    ) -> String {
        self.effects.body(format!("refresh {what}")).await
    }

    /// Sends a document, once a person approved.
    #[tool(approval = Required)]
    pub async fn send(
        &self,
        /// Which document.
        what: String,
    ) -> String {
        self.effects.body(format!("send {what}")).await
    }

    /// One step of a procedure, one at a time.
    #[tool(sequential)]
    pub async fn step(
        &self,
        /// Which step.
        what: String,
    ) -> String {
        self.effects.body(format!("step {what}")).await
    }
}

/// The tools and the scripted model of one "process".
#[plugin(id = "test.recover")]
#[derive(Default)]
pub struct RecoverPlugin {
    script: Arc<Script>,
    effects: Arc<Effects>,
}

impl AgentPlugin for RecoverPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        let effects = self.effects.clone();
        builder.add_toolset(move |_: &AgentPluginContext| RecoverToolset {
            effects: effects.clone(),
        });
        let script = self.script.clone();
        builder.add_model_provider(move |_: &oscova_core::ProviderContext| {
            ScriptedModel(script.clone())
        });
    }
}

/// Approves every call, counting; holds the approval of a call whose
/// line (`send invoice`) is held.
struct Approver {
    effects: Arc<Effects>,
    asked: Arc<Mutex<usize>>,
}

impl ApprovalHandler for Approver {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            *self.asked.lock().unwrap() += 1;
            let what = request.arguments["what"].as_str().unwrap_or_default();
            self.effects
                .maybe_hold(&format!("approve send {what}"))
                .await;
            ApprovalDecision::Approve
        })
    }
}

/// One "process": an agent host over `store` with its own script.
pub(super) fn process(
    store: Arc<dyn SessionStore>,
    script: &Arc<Script>,
    effects: &Arc<Effects>,
    asked: &Arc<Mutex<usize>>,
) -> AgentHost {
    let plugins = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(RecoverPlugin {
            script: script.clone(),
            effects: effects.clone(),
        })
        .approval_handler(Approver {
            effects: effects.clone(),
            asked: asked.clone(),
        })
        .build()
        .unwrap();
    AgentHost::builder(plugins, store)
        .model(model())
        .build()
        .unwrap()
}

pub(super) async fn sqlite(dir: &Path) -> Arc<dyn SessionStore> {
    Arc::new(SqliteStore::open(dir.join("sessions.db")).await.unwrap())
}

pub(super) type Events = Arc<Mutex<Vec<AgentEvent>>>;

pub(super) fn recording(events: &Events) -> AgentSessionOptions {
    let events = events.clone();
    AgentSessionOptions::new().on_event(move |e| events.lock().unwrap().push(e.clone()))
}

/// Runs `text` on the session `name` of a first process until a held
/// body or approval is reached, then drops the run there: the crash.
async fn crash_during(
    store: Arc<dyn SessionStore>,
    effects: &Arc<Effects>,
    replies: Vec<ChatMessage>,
    text: &str,
) {
    let script = Script::new(replies);
    let agents = process(store, &script, effects, &Arc::default());
    let mut session = agents
        .session(UserInfo::new("alice"), "work", AgentSessionOptions::new())
        .await
        .unwrap();
    let text = text.to_owned();
    let run = tokio::spawn(async move { session.prompt(text).await });
    tokio::time::timeout(Duration::from_secs(30), effects.entered.notified())
        .await
        .expect("the held body or approval is reached");
    run.abort();
    assert!(run.await.unwrap_err().is_cancelled());
}

/// The branch as the store has it now, read afresh: `user`, `assistant`,
/// `started c1`, `tool c1`, `tool c1 interrupted`.
pub(super) async fn branch(store: &Arc<dyn SessionStore>) -> Vec<String> {
    let session = Session::open(store.clone(), UserInfo::new("alice"), "work")
        .await
        .unwrap();
    session.branch().into_iter().map(describe).collect()
}

fn describe(entry: &SessionEntry) -> String {
    match &entry.kind {
        EntryKind::Message { message } => match message {
            AgentMessage::User(_) => "user".into(),
            AgentMessage::Assistant(_) => "assistant".into(),
            AgentMessage::ToolResult(result) => {
                let unrun = ["interrupted", "expired"]
                    .into_iter()
                    .find(|why| result.extra.get("details") == Some(json!({ "error": why })));
                assert_eq!(result.is_error, unrun.is_some(), "{result:?}");
                let suffix = unrun.map(|why| format!(" {why}")).unwrap_or_default();
                format!("tool {}{suffix}", result.tool_call_id)
            }
            other => format!("{other:?}"),
        },
        other => match (other.started_call_id(), other.call_wait()) {
            (Some(id), _) => format!("started {id}"),
            (_, Some(wait)) => format!("waiting {}", wait.tool_call_id),
            _ => other.type_name().to_owned(),
        },
    }
}

/// (role, text) of each message the model was sent in its call `i`.
pub(super) fn sent(script: &Script, i: usize) -> Vec<(String, String)> {
    script
        .seen(i)
        .0
        .iter()
        .map(|m| {
            let role = match m.role {
                ChatRole::User => "user",
                ChatRole::Assistant => "assistant",
                ChatRole::Tool => "tool",
                _ => "other",
            };
            (role.to_owned(), m.content.clone())
        })
        .collect()
}

pub(super) fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

pub(super) fn said(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(r, t)| ((*r).to_owned(), (*t).to_owned()))
        .collect()
}

const INTERRUPTED: &str = "interrupted: the process running this call stopped after the call \
     started and before its result was kept. It was not run again, so whether it took effect \
     is unknown; check before calling it again.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_started_call_without_a_result_is_reported_interrupted_and_not_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(dir.path()).await;
    let effects = Effects::holding(&["charge rent"]);
    let asks = ChatMessage::assistant("", vec![call("c1", CHARGE, json!({"what": "rent"}))]);
    crash_during(store.clone(), &effects, vec![asks], "Pay the rent").await;
    // The mark was committed before the body ran; no result followed.
    assert_eq!(effects.ran(), ["charge rent"]);
    assert_eq!(branch(&store).await, ["user", "assistant", "started c1"]);

    // Started again, on a store opened afresh: the next prompt settles
    // the batch first, and the model reads both.
    let store = sqlite(dir.path()).await;
    let script = Script::new([ChatMessage::assistant("I will check the bank.", vec![])]);
    let agents = process(store.clone(), &script, &effects, &Arc::default());
    let events = Events::default();
    let mut session = agents
        .session(UserInfo::new("alice"), "work", recording(&events))
        .await
        .unwrap();
    let outcome = session.prompt("Did it go through?").await.unwrap();
    assert_eq!(outcome.text, "I will check the bank.");
    assert_eq!((outcome.turns, outcome.tool_calls), (1, 1));
    assert_eq!(effects.ran(), ["charge rent"], "not run a second time");
    assert_eq!(
        branch(&store).await,
        [
            "user",
            "assistant",
            "started c1",
            "tool c1 interrupted",
            "user",
            "assistant"
        ]
    );
    // The marks never reach the model; the interruption does.
    assert_eq!(
        sent(&script, 0),
        said(&[
            ("user", "Pay the rent"),
            ("assistant", ""),
            ("tool", INTERRUPTED),
            ("user", "Did it go through?"),
        ])
    );
    let told: Vec<_> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolInterrupted { call, result } => Some((
                call.id.clone(),
                call.name.clone(),
                call.arguments.clone(),
                result.details.clone(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        told,
        [(
            "c1".to_owned(),
            CHARGE.to_owned(),
            json!({"what": "rent"}),
            json!({"error": "interrupted"})
        )]
    );
    // Settled: nothing is left to recover.
    assert!(session.recover().await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotent_tool_runs_again_on_recover() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(dir.path()).await;
    let effects = Effects::holding(&["refresh prices"]);
    let asks = ChatMessage::assistant("", vec![call("c1", REFRESH, json!({"what": "prices"}))]);
    crash_during(store.clone(), &effects, vec![asks], "Refresh the prices").await;

    let script = Script::new([ChatMessage::assistant("Prices are fresh.", vec![])]);
    let agents = process(store.clone(), &script, &effects, &Arc::default());
    let events = Events::default();
    let mut session = agents
        .session(UserInfo::new("alice"), "work", recording(&events))
        .await
        .unwrap();
    let outcome = session.recover().await.unwrap().expect("a batch to settle");
    // The run went on as it would have: the model got the result.
    assert_eq!(outcome.text, "Prices are fresh.");
    assert_eq!((outcome.turns, outcome.tool_calls), (1, 1));
    assert_eq!(effects.ran(), ["refresh prices", "refresh prices"]);
    assert_eq!(
        branch(&store).await,
        [
            "user",
            "assistant",
            "started c1",
            "started c1",
            "tool c1",
            "assistant"
        ]
    );
    assert_eq!(
        sent(&script, 0)[2..],
        said(&[("tool", "done: refresh prices")])
    );
    let events = events.lock().unwrap();
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolInterrupted { .. }))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_never_started_runs_on_recover_with_its_approval_asked_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(dir.path()).await;
    // The first process stops while the person is asked.
    let effects = Effects::holding(&["approve send invoice"]);
    let asks = ChatMessage::assistant("", vec![call("c1", SEND, json!({"what": "invoice"}))]);
    crash_during(store.clone(), &effects, vec![asks], "Send the invoice").await;
    assert!(effects.ran().is_empty());
    assert_eq!(
        branch(&store).await,
        ["user", "assistant", "waiting c1"],
        "the wait is kept before the person is asked"
    );

    let script = Script::new([ChatMessage::assistant("Sent.", vec![])]);
    let asked = Arc::new(Mutex::new(0));
    let agents = process(store.clone(), &script, &effects, &asked);
    let mut session = agents
        .session(UserInfo::new("alice"), "work", AgentSessionOptions::new())
        .await
        .unwrap();
    let outcome = session.recover().await.unwrap().expect("a batch to settle");
    assert_eq!(outcome.text, "Sent.");
    assert_eq!(*asked.lock().unwrap(), 1, "the approval is asked again");
    assert_eq!(effects.ran(), ["send invoice"]);
    assert_eq!(
        branch(&store).await,
        [
            "user",
            "assistant",
            "waiting c1",
            "waiting c1",
            "started c1",
            "tool c1",
            "assistant"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_call_of_a_cut_batch_is_kept_and_not_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(dir.path()).await;
    // A concurrent batch: coffee ends while rent still runs.
    let effects = Effects::holding(&["charge rent"]);
    let asks = ChatMessage::assistant(
        "",
        vec![
            call("c1", CHARGE, json!({"what": "coffee"})),
            call("c2", CHARGE, json!({"what": "rent"})),
        ],
    );
    let script = Script::new([asks]);
    let agents = process(store.clone(), &script, &effects, &Arc::default());
    let mut session = agents
        .session(UserInfo::new("alice"), "work", AgentSessionOptions::new())
        .await
        .unwrap();
    let run = tokio::spawn(async move { session.prompt("Pay both").await });
    // The coffee's answer is kept without waiting for the rent's.
    let kept = async {
        loop {
            if branch(&store).await.contains(&"tool c1".to_owned()) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), kept)
        .await
        .expect("the finished call's answer is stored while the other runs");
    run.abort();
    let _ = run.await;
    drop(agents);
    let mut stored = branch(&store).await;
    stored[2..].sort();
    assert_eq!(
        stored,
        ["user", "assistant", "started c1", "started c2", "tool c1"]
    );

    let script = Script::new([ChatMessage::assistant("Coffee paid; rent unknown.", vec![])]);
    let agents = process(store.clone(), &script, &effects, &Arc::default());
    let mut session = agents
        .session(UserInfo::new("alice"), "work", AgentSessionOptions::new())
        .await
        .unwrap();
    session.recover().await.unwrap().expect("a batch to settle");
    let mut ran = effects.ran();
    ran.sort();
    assert_eq!(ran, ["charge coffee", "charge rent"]);
    let stored = branch(&store).await;
    assert_eq!(stored.iter().filter(|e| *e == "tool c1").count(), 1);
    assert_eq!(&stored[5..], ["tool c2 interrupted", "assistant"]);
    assert_eq!(
        sent(&script, 0)[2..],
        said(&[("tool", "done: charge coffee"), ("tool", INTERRUPTED)])
    );
}

/// A sequential batch cut at its second call: the first finished, the
/// second started, the third never started.
async fn mid_batch_crash_settles_each_call(store: Arc<dyn SessionStore>) {
    let effects = Effects::holding(&["step two"]);
    let asks = ChatMessage::assistant(
        "",
        vec![
            call("c1", STEP, json!({"what": "one"})),
            call("c2", STEP, json!({"what": "two"})),
            call("c3", STEP, json!({"what": "three"})),
        ],
    );
    crash_during(store.clone(), &effects, vec![asks], "Do the steps").await;
    assert_eq!(effects.ran(), ["step one", "step two"]);
    assert_eq!(
        branch(&store).await,
        ["user", "assistant", "started c1", "tool c1", "started c2"]
    );

    let script = Script::new([ChatMessage::assistant("Step two needs a look.", vec![])]);
    let agents = process(store.clone(), &script, &effects, &Arc::default());
    let mut session = agents
        .session(UserInfo::new("alice"), "work", AgentSessionOptions::new())
        .await
        .unwrap();
    let outcome = session.recover().await.unwrap().expect("a batch to settle");
    assert_eq!((outcome.turns, outcome.tool_calls), (1, 2));
    assert_eq!(effects.ran(), ["step one", "step two", "step three"]);
    assert_eq!(
        branch(&store).await,
        strings(&[
            "user",
            "assistant",
            "started c1",
            "tool c1",
            "started c2",
            "tool c2 interrupted",
            "started c3",
            "tool c3",
            "assistant",
        ])
    );
    assert_eq!(
        sent(&script, 0)[2..],
        said(&[
            ("tool", "done: step one"),
            ("tool", INTERRUPTED),
            ("tool", "done: step three"),
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mid_batch_crash_settles_each_call_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    mid_batch_crash_settles_each_call(sqlite(dir.path()).await).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mid_batch_crash_settles_each_call_on_postgres() {
    let cluster = oscova_test_support::postgres::Cluster::start();
    let config = cluster.create_database("recover");
    let store = oscova_agent::session::PostgresStore::connect(&config)
        .await
        .unwrap();
    mid_batch_crash_settles_each_call(Arc::new(store)).await;
}
