//! A call waiting for a person's approval outlives its process: the wait
//! is kept in the session before the person is asked; the next run of a
//! killed process's session asks again (its tool then runs exactly once);
//! and a wait that expires ends its call with a result saying so, whether
//! a process was waiting or none ran (`session/agent/wait.rs`).
//!
//! The killed process is this test binary run again (`approval_waiter`,
//! ignored unless asked for): it asks for an approval over a SQLite file
//! and holds there until the test kills it with SIGKILL. The processes
//! started again are agent hosts in the test's own process over the same
//! file, as in `recover.rs`.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oscova_agent::session::agent::*;
use oscova_agent::session::{CallWait, Session, SessionStore, iso_to_millis, now_iso};
use oscova_core::prelude::*;
use oscova_core::provider::model::ChatMessage;
use serde_json::json;

use super::recover::{Effects, Events, SEND, branch, process, recording, sent, sqlite};
use super::*;

const WAITER_DB: &str = "OSCOVA_WAITER_DB";
const WAITER_EXPIRY_MS: &str = "OSCOVA_WAITER_EXPIRY_MS";

/// The model's first answer in every test: send the invoice.
fn asks_to_send() -> ChatMessage {
    ChatMessage::assistant("", vec![call("c1", SEND, json!({"what": "invoice"}))])
}

/// The process the tests kill: asks for the approval of sending the
/// invoice on the session `work` of the file `$OSCOVA_WAITER_DB`, with a
/// wait of `$OSCOVA_WAITER_EXPIRY_MS`, says `WAITER asked` once the
/// approver is reached, and holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the process the wait tests kill; they run it"]
async fn approval_waiter() {
    let db = std::env::var(WAITER_DB).expect("run by the wait tests");
    let expiry: u64 = std::env::var(WAITER_EXPIRY_MS).unwrap().parse().unwrap();
    let dir = Path::new(&db).parent().unwrap().to_owned();
    let store = sqlite(&dir).await;
    let effects = Effects::holding(&["approve send invoice"]);
    let script = Script::new(vec![asks_to_send()]);
    let agents = process(store, &script, &effects, &Arc::default());
    let options = AgentSessionOptions::new().wait_expiry(Duration::from_millis(expiry));
    let mut session = agents
        .session(UserInfo::new("alice"), "work", options)
        .await
        .unwrap();
    let run = tokio::spawn(async move { session.prompt("Send the invoice").await });
    effects.entered.notified().await;
    say("asked");
    let ended = run.await;
    // Only reached when the wait ended before the test killed us.
    say(&format!("ended {ended:?}"));
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "WAITER {line}").unwrap();
    out.flush().unwrap();
}

/// A running `approval_waiter`.
struct Waiter {
    child: Child,
    lines: std::io::Lines<BufReader<ChildStdout>>,
}

impl Waiter {
    /// Starts one over `dir`'s session file; returns once it asked.
    fn asking(dir: &Path, expiry: Duration) -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "agent::waits::approval_waiter",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(WAITER_DB, dir.join("sessions.db"))
            .env(WAITER_EXPIRY_MS, expiry.as_millis().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut waiter = Self { child, lines };
        assert_eq!(waiter.heard(), "asked");
        waiter
    }

    fn heard(&mut self) -> String {
        for line in self.lines.by_ref() {
            // libtest may print `test name ... ` before it on the same line.
            if let Some((_, said)) = line.unwrap().split_once("WAITER ") {
                return said.to_owned();
            }
        }
        panic!("the waiter ended early: {:?}", self.child.wait());
    }

    /// SIGKILL: nothing of the process's runs after this.
    fn kill(mut self) {
        self.child.kill().unwrap();
        let status = self.child.wait().unwrap();
        assert!(!status.success(), "{status:?}");
    }
}

/// The waits kept on the session's branch, oldest first.
async fn waits(store: &Arc<dyn SessionStore>) -> Vec<CallWait> {
    let session = Session::open(store.clone(), UserInfo::new("alice"), "work")
        .await
        .unwrap();
    session
        .branch()
        .into_iter()
        .filter_map(|entry| entry.kind.call_wait())
        .collect()
}

fn now_millis() -> i64 {
    iso_to_millis(&now_iso()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_asked_in_a_killed_process_is_asked_again_and_its_tool_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let waiter = Waiter::asking(dir.path(), Duration::from_secs(3600));
    let store = sqlite(dir.path()).await;
    // Kept before the person was asked: what, of whom, until when.
    let kept = waits(&store).await;
    assert_eq!(kept.len(), 1, "{kept:?}");
    let wait = &kept[0];
    assert_eq!(
        (wait.tool_call_id.as_str(), wait.tool_name.as_str()),
        ("c1", SEND)
    );
    assert_eq!(wait.user_id, "alice");
    assert_eq!(wait.arguments, json!({"what": "invoice"}));
    assert!(wait.asked.contains(SEND), "{}", wait.asked);
    let left = wait.expires_at_millis().unwrap() - now_millis();
    assert!((3_000_000..=3_600_000).contains(&left), "{left} ms left");
    waiter.kill();
    assert_eq!(branch(&store).await, ["user", "assistant", "waiting c1"]);

    // Started again: the person is asked again, says yes, the tool runs.
    let effects = Arc::new(Effects::default());
    let asked = Arc::new(Mutex::new(0));
    let script = Script::new([ChatMessage::assistant("Sent.", vec![])]);
    let agents = process(store.clone(), &script, &effects, &asked);
    let mut session = agents
        .session(UserInfo::new("alice"), "work", AgentSessionOptions::new())
        .await
        .unwrap();
    let outcome = session.recover().await.unwrap().expect("a batch to settle");
    assert_eq!(outcome.text, "Sent.");
    assert_eq!(*asked.lock().unwrap(), 1, "asked again");
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
    let kept = waits(&store).await;
    assert_eq!(
        kept[1].expires_at, kept[0].expires_at,
        "asking again keeps the first expiry"
    );
    drop(session);

    // And once only: a third process finds nothing to settle.
    let again = Arc::new(Mutex::new(0));
    let agents = process(store.clone(), &Script::new([]), &effects, &again);
    let mut session = agents
        .session(UserInfo::new("alice"), "work", AgentSessionOptions::new())
        .await
        .unwrap();
    assert!(session.recover().await.unwrap().is_none());
    assert_eq!(effects.ran(), ["send invoice"], "run exactly once");
    assert_eq!(*again.lock().unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_that_expired_while_no_process_ran_ends_its_call_unasked() {
    let dir = tempfile::tempdir().unwrap();
    let waiter = Waiter::asking(dir.path(), Duration::from_millis(1500));
    waiter.kill();
    let store = sqlite(dir.path()).await;
    let wait = waits(&store).await.remove(0);
    let until = wait.expires_at_millis().unwrap() - now_millis();
    tokio::time::sleep(Duration::from_millis(
        u64::try_from(until).unwrap_or(0) + 50,
    ))
    .await;

    let effects = Arc::new(Effects::default());
    let asked = Arc::new(Mutex::new(0));
    let script = Script::new([ChatMessage::assistant("It was not sent.", vec![])]);
    let agents = process(store.clone(), &script, &effects, &asked);
    let events = Events::default();
    let mut session = agents
        .session(UserInfo::new("alice"), "work", recording(&events))
        .await
        .unwrap();
    let outcome = session.recover().await.unwrap().expect("a batch to settle");
    assert_eq!(outcome.text, "It was not sent.");
    assert_eq!(
        *asked.lock().unwrap(),
        0,
        "an expired wait is not asked again"
    );
    assert!(effects.ran().is_empty(), "{:?}", effects.ran());
    assert_eq!(
        branch(&store).await,
        [
            "user",
            "assistant",
            "waiting c1",
            "tool c1 expired",
            "assistant"
        ]
    );
    let told = sent(&script, 0);
    let (role, text) = told.last().unwrap();
    assert_eq!(role, "tool");
    assert!(text.starts_with("expired: "), "{text}");
    assert!(text.contains(&wait.expires_at), "{text}");
    let expired = events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, AgentEvent::WaitExpired { call, .. } if call.id == "c1"))
        .count();
    assert_eq!(expired, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_that_expires_while_its_process_waits_ends_its_call_as_expired() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(dir.path()).await;
    // The person never answers.
    let effects = Effects::holding(&["approve send invoice"]);
    let asked = Arc::new(Mutex::new(0));
    let script = Script::new([
        asks_to_send(),
        ChatMessage::assistant("It was not sent.", vec![]),
    ]);
    let agents = process(store.clone(), &script, &effects, &asked);
    let events = Events::default();
    let options = recording(&events).wait_expiry(Duration::from_millis(300));
    let mut session = agents
        .session(UserInfo::new("alice"), "work", options)
        .await
        .unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(30), session.prompt("Send the invoice"))
        .await
        .expect("the wait ends at its expiry")
        .unwrap();
    assert_eq!(outcome.text, "It was not sent.");
    assert_eq!(*asked.lock().unwrap(), 1);
    assert!(effects.ran().is_empty(), "{:?}", effects.ran());
    // Stored as any call's tool message is (what the model read).
    assert_eq!(
        branch(&store).await,
        ["user", "assistant", "waiting c1", "tool c1", "assistant"]
    );
    let (role, text) = sent(&script, 1).pop().unwrap();
    assert_eq!(role, "tool");
    assert!(text.starts_with("error: expired: "), "{text}");
    let events = events.lock().unwrap();
    let waiting = events
        .iter()
        .position(|e| matches!(e, AgentEvent::CallWaiting(w) if w.tool_call_id == "c1"));
    let expired = events.iter().position(|e| {
        matches!(e, AgentEvent::ToolFinished { id, result, .. }
            if id == "c1" && result.details == json!({"error": "expired"}))
    });
    assert!(
        matches!((waiting, expired), (Some(w), Some(e)) if w < e),
        "{events:?}"
    );
}

/// An extension's tool that pays, once approved.
pub struct PayToolset {
    paid: Arc<Mutex<Vec<String>>>,
}

#[toolset]
impl PayToolset {
    /// Pays an account.
    #[tool(approval = Required)]
    pub fn pay(
        &self,
        /// The account.
        to: String,
    ) -> String {
        self.paid.lock().unwrap().push(to);
        "paid".to_owned()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_tools_wait_is_kept_redacted_and_expires_unrun() {
    let script = Script::new([
        ChatMessage::assistant("", vec![call("c1", "pay", json!({"to": "acct-9931"}))]),
        ChatMessage::assistant("Not paid.", vec![]),
    ]);
    let plugins = plugin_host(&script);
    plugins.redactor().add("acct-9931");
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(dir.path()).await;
    let paid = Arc::new(Mutex::new(Vec::new()));
    let kept = paid.clone();
    let agents = AgentHost::builder(plugins, store.clone())
        .model(model())
        .add_extension_with(probe("pay", move |api| {
            api.register_toolset(PayToolset { paid: kept.clone() });
            Ok(())
        }))
        .build()
        .unwrap();
    // A person who never answers.
    let options = AgentSessionOptions::new()
        .interaction_handler(|_| std::future::pending())
        .wait_expiry(Duration::from_millis(300));
    let mut session = agents
        .session(UserInfo::new("alice"), "work", options)
        .await
        .unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(30), session.prompt("Pay it"))
        .await
        .expect("the wait ends at its expiry")
        .unwrap();
    assert_eq!(outcome.text, "Not paid.");
    assert!(paid.lock().unwrap().is_empty());
    let kept = waits(&store).await;
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].tool_name, "pay");
    assert_eq!(
        kept[0].arguments,
        json!({"to": "[REDACTED]"}),
        "a secret never reaches the store"
    );
    let (_, text) = sent(&script, 1).pop().unwrap();
    assert!(text.contains("expired: "), "{text}");
}

/// A session's own approver (`AgentSessionOptions::approval_handler`):
/// answers `yes` or no, and notes at each asking how many waits the
/// session had kept in the store by then.
struct OwnApprover {
    store: Arc<dyn SessionStore>,
    yes: bool,
    kept: Arc<Mutex<Vec<usize>>>,
}

impl oscova_core::host::ApprovalHandler for OwnApprover {
    fn approve<'a>(
        &'a self,
        request: &'a ApprovalRequest<'a>,
    ) -> oscova_core::provider::BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            assert_eq!(request.wire_name, SEND);
            let kept = waits(&self.store).await.len();
            self.kept.lock().unwrap().push(kept);
            if self.yes {
                ApprovalDecision::Approve
            } else {
                ApprovalDecision::Deny(Some("the person said no".into()))
            }
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_own_approval_handler_is_asked_instead_of_the_hosts_its_wait_kept_first() {
    for yes in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let store = sqlite(dir.path()).await;
        let effects = Arc::new(Effects::default());
        let host_asked = Arc::new(Mutex::new(0));
        let script = Script::new(vec![
            asks_to_send(),
            ChatMessage::assistant("Done.", vec![]),
        ]);
        let agents = process(store.clone(), &script, &effects, &host_asked);
        let own = OwnApprover {
            store: store.clone(),
            yes,
            kept: Arc::default(),
        };
        let kept = own.kept.clone();
        let options = AgentSessionOptions::new().approval_handler(own);
        let mut session = agents
            .session(UserInfo::new("alice"), "work", options)
            .await
            .unwrap();
        let outcome = session.prompt("Send the invoice").await.unwrap();
        assert_eq!(outcome.text, "Done.");
        assert_eq!(
            *kept.lock().unwrap(),
            [1],
            "asked once, the call's wait already kept in the store"
        );
        assert_eq!(
            *host_asked.lock().unwrap(),
            0,
            "the host's handler is not asked"
        );
        let kept = waits(&store).await;
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert_eq!(
            (kept[0].tool_call_id.as_str(), kept[0].tool_name.as_str()),
            ("c1", SEND)
        );
        assert_eq!(kept[0].arguments, json!({"what": "invoice"}));
        let told = sent(&script, 1);
        let (role, text) = told.last().unwrap();
        assert_eq!(role, "tool");
        if yes {
            assert_eq!(effects.ran(), ["send invoice"]);
            assert_eq!(text, "done: send invoice");
            assert_eq!(
                branch(&store).await,
                [
                    "user",
                    "assistant",
                    "waiting c1",
                    "started c1",
                    "tool c1",
                    "assistant"
                ]
            );
        } else {
            assert!(effects.ran().is_empty(), "refused: {:?}", effects.ran());
            assert!(text.contains("the person said no"), "{text}");
        }
    }
}
