//! The host-run follower against the SDK's slow agent: a session's model
//! calls `send`, the task outlives the call, and the follower delivers
//! its result into that session (`AgentHost::deliver`), stored or live,
//! after a restart too.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::{Agents, scope};

use oscova_agent::session::agent::{
    AgentHost, AgentSessionOptions, Delivered, Delivery, ExtensionMessage,
};
use oscova_agent::session::{EntryKind, SessionStore, SqliteStore};
use oscova_core::context::NoCredentials;
use oscova_core::prelude::*;
use oscova_core::provider::model::ModelProviderConfig;
use oscova_plugin_a2a::follow::{FollowLimits, FollowUpMessage, Follower, WebhookRefused};
use oscova_plugin_a2a::{A2aConfig, A2aPlugin};
use oscova_test_kit::http::{Reply, Request, TestServer};
use oscova_test_kit::{FakeModel, TestHost, TestUser};
use serde_json::json;
use tokio::sync::mpsc;

const SEND: &str = "oscova_a2a__a2a__send";

fn kept(agents: &Agents, dir: &Path) -> A2aConfig {
    let mut config = agents.config(|a| a);
    config.pending_dir = Some(dir.to_path_buf());
    config
}

/// A host over the plugin and `model`, sessions in `store`.
fn agent_host(config: A2aConfig, model: &FakeModel, store: Arc<dyn SessionStore>) -> AgentHost {
    let plugin = A2aPlugin::new(config).expect("a valid configuration");
    let test = TestHost::builder()
        .plugin_instance(plugin)
        .model_provider(model.clone())
        .build();
    let mut config = ModelProviderConfig::new("fake");
    config.model = Some("scripted".into());
    AgentHost::builder(test.host().clone(), store)
        .model(config)
        .stream(false)
        .build()
        .unwrap()
}

/// A follower delivering into `agents`, telling `done` what it delivered.
fn follower(
    config: A2aConfig,
    agents: &AgentHost,
    done: mpsc::UnboundedSender<(Delivered, FollowUpMessage)>,
) -> Follower {
    let host = agents.clone();
    let mut limits = FollowLimits::default();
    limits.min_gap = Duration::from_millis(100);
    limits.max_gap = Duration::from_millis(400);
    limits.scan_every = Duration::from_millis(100);
    Follower::new(
        config,
        agents.plugins().http_client(),
        Arc::new(NoCredentials),
        move |user: String, session: String, message: FollowUpMessage| {
            let host = host.clone();
            let done = done.clone();
            async move {
                let mut custom =
                    ExtensionMessage::new(FollowUpMessage::CUSTOM_TYPE, message.content());
                custom.details = Some(message.details.clone());
                let how = host
                    .deliver(&UserInfo::new(user), &session, custom, Delivery::FollowUp)
                    .await
                    .map_err(|e| e.to_string())?;
                let _ = done.send((how, message));
                Ok(())
            }
        },
    )
    .expect("a pending dir")
    .with_limits(limits)
}

/// The follow-ups stored on the branch of `user`'s session `name`.
async fn follow_ups(store: &Arc<dyn SessionStore>, user: &str, name: &str) -> Vec<String> {
    let session = oscova_agent::session::Session::open(store.clone(), UserInfo::new(user), name)
        .await
        .expect("the session");
    session
        .branch()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::CustomMessage {
                custom_type,
                content,
                ..
            } if custom_type == FollowUpMessage::CUSTOM_TYPE => Some(content.text()),
            _ => None,
        })
        .collect()
}

/// Runs a prompt in `user`'s session `name` whose model calls `send`
/// (see [`sends`]); returns the session's id.
async fn send_from_session(agents: &AgentHost, user: &str, name: &str) -> String {
    let mut session = agents
        .session(UserInfo::new(user), name, AgentSessionOptions::new())
        .await
        .expect("a session");
    let outcome = session.prompt("ask the slow agent").await.expect("a run");
    assert_eq!(outcome.tool_calls, 1);
    let id = session.session_snapshot().await.0.id.as_str().to_owned();
    session.shutdown().await;
    id
}

fn sends(text: &str) -> FakeModel {
    FakeModel::new("fake")
        .reply_tool_call(
            SEND,
            json!({"agent": "slow", "message": text, "wait_secs": 0}),
        )
        .reply_text("Sent; it runs long.")
}

async fn next(
    done: &mut mpsc::UnboundedReceiver<(Delivered, FollowUpMessage)>,
) -> (Delivered, FollowUpMessage) {
    tokio::time::timeout(Duration::from_secs(60), done.recv())
        .await
        .expect("a delivery within 60 s")
        .expect("the follower is alive")
}

fn pending_count(dir: &Path) -> usize {
    let file = dir.join("alice.json");
    match std::fs::read(&file) {
        Ok(bytes) => serde_json::from_slice::<Vec<serde_json::Value>>(&bytes)
            .unwrap()
            .len(),
        Err(_) => 0,
    }
}

#[tokio::test]
async fn a_long_task_is_delivered_into_the_stored_session_that_sent_it() {
    let agents = Agents::start(&["--polls", "2"]).await;
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn SessionStore> =
        Arc::new(SqliteStore::open(dir.path().join("s.db")).await.unwrap());
    let model = sends("the report");
    let host = agent_host(kept(&agents, dir.path()), &model, store.clone());
    let session = send_from_session(&host, "alice", "research").await;
    // The tool result the model saw: the task's id and `working`.
    let seen = model.requests();
    let told = &seen[1].messages.last().unwrap().content;
    assert!(told.contains("TASK_STATE_WORKING"), "{told}");
    assert_eq!(pending_count(dir.path()), 1);
    let listed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("alice.json")).unwrap()).unwrap();
    assert_eq!(listed[0]["session"], json!(session));

    let (tx, mut rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let run = tokio::spawn(follower(kept(&agents, dir.path()), &host, tx).run(cancel.clone()));
    let (how, message) = next(&mut rx).await;
    assert_eq!(how, Delivered::Stored);
    assert_eq!(message.state, "TASK_STATE_COMPLETED");
    assert_eq!(message.text, "done: the report");
    assert_eq!(
        follow_ups(&store, "alice", "research").await,
        [message.content()]
    );
    assert!(message.content().contains("done: the report"));
    assert_eq!(pending_count(dir.path()), 0);
    // Bob's sessions got nothing, and nothing is delivered twice.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(rx.try_recv().is_err());
    cancel.cancel();
    run.await.unwrap();
}

#[tokio::test]
async fn a_live_session_sees_the_follow_up_in_its_next_turn() {
    let agents = Agents::start(&["--polls", "2"]).await;
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn SessionStore> =
        Arc::new(SqliteStore::open(dir.path().join("s.db")).await.unwrap());
    let model = sends("the live report").reply_text("The report is done.");
    let host = agent_host(kept(&agents, dir.path()), &model, store.clone());
    let mut session = host
        .session(UserInfo::new("alice"), "live", AgentSessionOptions::new())
        .await
        .unwrap();
    session.prompt("ask the slow agent").await.unwrap();

    let (tx, mut rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let run = tokio::spawn(follower(kept(&agents, dir.path()), &host, tx).run(cancel.clone()));
    let (how, _) = next(&mut rx).await;
    assert_eq!(how, Delivered::StoredLive);
    tokio::time::timeout(Duration::from_secs(10), session.pending())
        .await
        .expect("the delivery asks for a turn");
    let outcome = session.run_pending().await.unwrap().expect("a run");
    assert_eq!(outcome.text, "The report is done.");
    let last = model.requests().pop().unwrap();
    assert!(
        last.messages
            .iter()
            .any(|m| m.content.contains("done: the live report")),
        "{:?}",
        last.messages
    );
    assert_eq!(follow_ups(&store, "alice", "live").await.len(), 1);
    cancel.cancel();
    run.await.unwrap();
}

#[tokio::test]
async fn a_restart_between_send_and_completion_still_delivers() {
    // The task completes 3 s after it started, whoever polls it.
    let agents = Agents::start(&["--polls", "1000", "--after", "3"]).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    {
        let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&db).await.unwrap());
        let model = sends("after restart");
        let host = agent_host(kept(&agents, dir.path()), &model, store.clone());
        send_from_session(&host, "alice", "research").await;
        let (tx, mut rx) = mpsc::unbounded_channel();
        let cancel = CancellationToken::new();
        let run = tokio::spawn(follower(kept(&agents, dir.path()), &host, tx).run(cancel.clone()));
        tokio::time::sleep(Duration::from_millis(500)).await;
        cancel.cancel();
        run.await.unwrap();
        assert!(rx.try_recv().is_err(), "nothing was done yet");
    }
    assert_eq!(pending_count(dir.path()), 1);
    // A new process: a new store handle, host and follower.
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&db).await.unwrap());
    let host = agent_host(
        kept(&agents, dir.path()),
        &FakeModel::new("fake"),
        store.clone(),
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let run = tokio::spawn(follower(kept(&agents, dir.path()), &host, tx).run(cancel.clone()));
    let (how, message) = next(&mut rx).await;
    assert_eq!(how, Delivered::Stored);
    assert_eq!(message.text, "done: after restart");
    assert_eq!(
        follow_ups(&store, "alice", "research").await,
        [message.content()]
    );
    assert_eq!(pending_count(dir.path()), 0);
    cancel.cancel();
    run.await.unwrap();
}

#[tokio::test]
async fn a_task_cancelled_elsewhere_is_delivered_as_canceled_and_leaves_the_list() {
    let agents = Agents::start(&["--polls", "1000"]).await;
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn SessionStore> =
        Arc::new(SqliteStore::open(dir.path().join("s.db")).await.unwrap());
    let model = sends("never done");
    let host = agent_host(kept(&agents, dir.path()), &model, store.clone());
    send_from_session(&host, "alice", "research").await;
    let listed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("alice.json")).unwrap()).unwrap();
    let id = listed[0]["task_id"].as_str().unwrap().to_owned();
    // Cancelled by a host that keeps no list: the entry stays for the follower.
    let other = scope(agents.config(|a| a), TestUser::new("alice"));
    other
        .call("cancel", json!({"agent": "slow", "task_id": id}))
        .await
        .assert_ok();

    let (tx, mut rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let run = tokio::spawn(follower(kept(&agents, dir.path()), &host, tx).run(cancel.clone()));
    let (_, message) = next(&mut rx).await;
    assert_eq!(message.state, "TASK_STATE_CANCELED");
    assert!(message.text.contains("was canceled"), "{}", message.text);
    assert_eq!(pending_count(dir.path()), 0);
    assert_eq!(follow_ups(&store, "alice", "research").await.len(), 1);
    cancel.cancel();
    run.await.unwrap();
}

#[tokio::test]
async fn the_agents_push_wakes_the_follower_and_a_forged_call_is_refused() {
    // The task completes 2 s after it started; the follower polls a pushed
    // task once, then only when its webhook arrives (`push_poll` is an
    // hour here), so a delivery proves the SDK's push reached the route.
    let agents = Agents::start(&["--polls", "1000", "--after", "2", "--push"]).await;
    let dir = tempfile::tempdir().unwrap();
    let slot: Arc<std::sync::OnceLock<Follower>> = Arc::default();
    let route = slot.clone();
    let webhook = TestServer::start(move |request: &Request| {
        let id = request.path.trim_start_matches("/a2a/followups/");
        let token = request.header("x-a2a-notification-token");
        match route.get().map(|f| f.webhook(id, token)) {
            Some(Ok(())) => Reply::new(200),
            _ => Reply::new(401),
        }
    })
    .await;
    let mut config = kept(&agents, dir.path());
    config.push_url = Some(webhook.url());
    let store: Arc<dyn SessionStore> =
        Arc::new(SqliteStore::open(dir.path().join("s.db")).await.unwrap());
    let model = sends("pushed");
    let host = agent_host(config.clone(), &model, store.clone());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut limits = FollowLimits::default();
    limits.min_gap = Duration::from_millis(100);
    limits.scan_every = Duration::from_millis(100);
    limits.push_poll = Duration::from_secs(3600);
    let follower = follower(config, &host, tx).with_limits(limits);
    let _ = slot.set(follower.clone());
    send_from_session(&host, "alice", "research").await;
    let listed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("alice.json")).unwrap()).unwrap();
    let id = listed[0]["push_id"].as_str().unwrap().to_owned();
    let token = listed[0]["push_token"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 32);
    assert_eq!(token.len(), 64);

    // Until the follower has read the lists it knows no webhook; then
    // it knows this one, and a wrong token is forged.
    let forged = "0".repeat(64);
    assert_eq!(
        follower.webhook(&id, Some(&forged)),
        Err(WebhookRefused::Unknown)
    );
    let cancel = CancellationToken::new();
    let run = tokio::spawn(follower.clone().run(cancel.clone()));
    let deadline = Instant::now() + Duration::from_secs(10);
    while follower.webhook(&id, Some(&forged)) != Err(WebhookRefused::Forged) {
        assert!(
            Instant::now() < deadline,
            "the follower never indexed the webhook"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(follower.webhook(&id, None), Err(WebhookRefused::Forged));
    assert_eq!(
        follower.webhook("not-a-webhook", Some(&token)),
        Err(WebhookRefused::Unknown)
    );
    let (how, message) = next(&mut rx).await;
    assert_eq!(how, Delivered::Stored);
    assert_eq!(message.text, "done: pushed");
    let pushed = webhook
        .requests()
        .into_iter()
        .filter(|r| r.path == format!("/a2a/followups/{id}"))
        .filter(|r| r.header("x-a2a-notification-token") == Some(token.as_str()))
        .count();
    assert!(pushed >= 1, "the SDK pushed to the webhook");
    assert_eq!(pending_count(dir.path()), 0);
    cancel.cancel();
    run.await.unwrap();
}

#[tokio::test]
async fn a_streaming_agents_task_is_followed_by_its_subscription() {
    // The task completes 2 s after it started and polls are an hour
    // apart: only the subscription (`SubscribeToTask`) sees it end in time.
    let agents = Agents::start(&["--polls", "100000", "--after", "2", "--streaming"]).await;
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn SessionStore> =
        Arc::new(SqliteStore::open(dir.path().join("s.db")).await.unwrap());
    let model = sends("streamed");
    let host = agent_host(kept(&agents, dir.path()), &model, store.clone());
    send_from_session(&host, "alice", "research").await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut limits = FollowLimits::default();
    limits.min_gap = Duration::from_secs(3600);
    limits.max_gap = Duration::from_secs(3600);
    limits.scan_every = Duration::from_millis(100);
    let follower = follower(kept(&agents, dir.path()), &host, tx).with_limits(limits);
    let cancel = CancellationToken::new();
    let run = tokio::spawn(follower.run(cancel.clone()));
    let (_, message) = next(&mut rx).await;
    assert_eq!(message.text, "done: streamed");
    assert_eq!(
        follow_ups(&store, "alice", "research").await,
        [message.content()]
    );
    assert_eq!(pending_count(dir.path()), 0);
    cancel.cancel();
    run.await.unwrap();
}

#[tokio::test]
async fn a_model_cannot_name_the_session_a_result_goes_to() {
    let agents = Agents::start(&["--polls", "1000"]).await;
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn SessionStore> =
        Arc::new(SqliteStore::open(dir.path().join("s.db")).await.unwrap());
    let victim = {
        let model = FakeModel::new("fake").reply_text("hi");
        let host = agent_host(kept(&agents, dir.path()), &model, store.clone());
        let mut session = host
            .session(UserInfo::new("alice"), "victim", AgentSessionOptions::new())
            .await
            .unwrap();
        session.prompt("hello").await.unwrap();
        session.session_snapshot().await.0.id.as_str().to_owned()
    };
    // The model adds the victim session's id to its call: the tool has
    // no such argument, so the call is refused and nothing is sent; the
    // same call without it is kept for the session that made it.
    let model = FakeModel::new("fake")
        .reply_tool_call(
            SEND,
            json!({"agent": "slow", "message": "x", "wait_secs": 0, "session": victim}),
        )
        .reply_tool_call(
            SEND,
            json!({"agent": "slow", "message": "x", "wait_secs": 0}),
        )
        .reply_text("done");
    let host = agent_host(kept(&agents, dir.path()), &model, store.clone());
    let mut session = host
        .session(
            UserInfo::new("alice"),
            "attacker",
            AgentSessionOptions::new(),
        )
        .await
        .unwrap();
    let outcome = session.prompt("ask").await.unwrap();
    assert_eq!(outcome.tool_calls, 2);
    let own = session.session_snapshot().await.0.id.as_str().to_owned();
    assert_ne!(own, victim);
    let refused = model.requests()[1].messages.last().unwrap().content.clone();
    assert!(refused.contains("session"), "{refused}");
    let listed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("alice.json")).unwrap()).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed[0]["session"], json!(own), "{listed}");
}
