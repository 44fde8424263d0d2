//! The four tools against the official A2A Python SDK (a2a-sdk 1.3.0)
//! serving an echo agent and a slow agent: the field names, states and
//! methods are the SDK's, not this client's reading of the spec.

use crate::support::{Agents, scope};

use oscova_test_kit::TestUser;
use serde_json::json;

#[tokio::test]
async fn agents_lists_each_agent_with_its_skills() {
    let agents = Agents::start(&[]).await;
    let s = scope(agents.config(|a| a), TestUser::new("alice"));
    let call = s.call("agents", json!({})).await.assert_ok();
    assert!(
        call.text().contains("skill `echo`: Repeats the message."),
        "{}",
        call.text()
    );
    assert!(call.text().contains("skill `wait`"), "{}", call.text());
    let listed = &call.details()["agents"];
    assert_eq!(listed[0]["agent"], "echo");
    assert_eq!(listed[0]["name"], "Echo");
    assert_eq!(listed[0]["binding"], "JSONRPC");
    assert_eq!(listed[0]["skills"][0]["examples"], json!(["hello"]));
    assert_eq!(listed[1]["agent"], "slow");
}

#[tokio::test]
async fn send_to_echo_returns_its_text_and_carries_the_hop_count() {
    let agents = Agents::start(&[]).await;
    let s = scope(agents.config(|a| a), TestUser::new("alice"));
    let call = s
        .call("send", json!({"agent": "echo", "message": "hello there"}))
        .await
        .assert_ok();
    assert_eq!(call.text(), "echo: hello there");
    assert_eq!(call.details()["kind"], "message");
    // The echo agent returns the metadata it received: one hop, as the
    // SDK's protobuf Struct spells a number.
    assert_eq!(call.details()["metadata"]["oscova.hops"], json!(1.0));
    let context = call.details()["context_id"].as_str().unwrap().to_owned();
    assert!(!context.is_empty());
    let again = s
        .call(
            "send",
            json!({"agent": "echo", "message": "again", "context_id": context}),
        )
        .await
        .assert_ok();
    assert_eq!(again.details()["context_id"], json!(context));
}

#[tokio::test]
async fn a_slow_task_returns_its_id_and_state_and_status_follows_it_to_the_result() {
    let agents = Agents::start(&["--polls", "2"]).await;
    let s = scope(agents.config(|a| a), TestUser::new("alice"));
    let sent = s
        .call(
            "send",
            json!({"agent": "slow", "message": "the report", "wait_secs": 0}),
        )
        .await
        .assert_ok();
    assert_eq!(sent.details()["state"], "TASK_STATE_WORKING");
    let id = sent.details()["task_id"].as_str().unwrap().to_owned();
    assert!(sent.text().contains(&id), "{}", sent.text());
    assert!(
        sent.text().contains("oscova_a2a__a2a__status"),
        "{}",
        sent.text()
    );

    let first = s
        .call("status", json!({"agent": "slow", "task_id": id}))
        .await
        .assert_ok();
    assert_eq!(first.details()["state"], "TASK_STATE_WORKING");
    let second = s
        .call("status", json!({"agent": "slow", "task_id": id}))
        .await
        .assert_ok();
    assert_eq!(second.details()["state"], "TASK_STATE_COMPLETED");
    assert_eq!(second.text(), "done: the report");
    assert_eq!(second.details()["artifacts"][0]["name"], "result");
}

#[tokio::test]
async fn send_follows_a_running_task_until_it_completes_within_the_wait() {
    let agents = Agents::start(&["--polls", "2"]).await;
    let s = scope(agents.config(|a| a), TestUser::new("alice"));
    let call = s
        .call(
            "send",
            json!({"agent": "slow", "message": "x", "wait_secs": 30}),
        )
        .await
        .assert_ok();
    assert_eq!(call.details()["state"], "TASK_STATE_COMPLETED");
    assert_eq!(call.text(), "done: x");
    assert!(!call.progress_messages().is_empty());
}

#[tokio::test]
async fn cancel_cancels_a_running_task() {
    let agents = Agents::start(&["--polls", "100"]).await;
    let s = scope(agents.config(|a| a), TestUser::new("alice"));
    let sent = s
        .call(
            "send",
            json!({"agent": "slow", "message": "x", "wait_secs": 0}),
        )
        .await
        .assert_ok();
    let id = sent.details()["task_id"].as_str().unwrap().to_owned();
    let canceled = s
        .call("cancel", json!({"agent": "slow", "task_id": id}))
        .await
        .assert_ok();
    assert_eq!(canceled.details()["state"], "TASK_STATE_CANCELED");
    let status = s
        .call("status", json!({"agent": "slow", "task_id": id}))
        .await
        .assert_ok();
    assert_eq!(status.details()["state"], "TASK_STATE_CANCELED");
}

#[tokio::test]
async fn an_unknown_task_is_the_agents_error() {
    let agents = Agents::start(&[]).await;
    let s = scope(agents.config(|a| a), TestUser::new("alice"));
    s.call(
        "status",
        json!({"agent": "slow", "task_id": "no-such-task"}),
    )
    .await
    .assert_error("Task not found");
}

#[tokio::test]
async fn the_http_json_binding_is_used_when_the_card_prefers_it() {
    let agents = Agents::start(&["--binding", "HTTP+JSON", "--polls", "1"]).await;
    let s = scope(agents.config(|a| a), TestUser::new("alice"));
    let listed = s.call("agents", json!({})).await.assert_ok();
    assert_eq!(listed.details()["agents"][0]["binding"], "HTTP+JSON");
    let echo = s
        .call("send", json!({"agent": "echo", "message": "rest"}))
        .await
        .assert_ok();
    assert_eq!(echo.text(), "echo: rest");
    let sent = s
        .call(
            "send",
            json!({"agent": "slow", "message": "y", "wait_secs": 0}),
        )
        .await
        .assert_ok();
    let id = sent.details()["task_id"].as_str().unwrap().to_owned();
    let done = s
        .call("status", json!({"agent": "slow", "task_id": id}))
        .await
        .assert_ok();
    assert_eq!(done.details()["state"], "TASK_STATE_COMPLETED");
    assert_eq!(done.text(), "done: y");
}

#[tokio::test]
async fn the_users_credential_is_sent_and_a_missing_one_is_an_error_with_guidance() {
    let agents = Agents::start(&["--token", "research-token"]).await;
    let config = agents.config(|a| a.credential_header("Authorization", "research.bearer"));

    let with = scope(
        config.clone(),
        TestUser::new("alice").with_credential("research.bearer", "research-token"),
    );
    let call = with
        .call("send", json!({"agent": "echo", "message": "hi"}))
        .await
        .assert_ok();
    assert_eq!(call.text(), "echo: hi");

    let without = scope(config.clone(), TestUser::new("bob"));
    let call = without
        .call("send", json!({"agent": "echo", "message": "hi"}))
        .await
        .assert_error("`research.bearer`");
    assert!(
        call.text().contains("[users.bob.credentials]"),
        "{}",
        call.text()
    );
    assert_eq!(call.details()["error"], "missing_credential");
    assert_eq!(call.details()["credentials"], json!(["research.bearer"]));

    let wrong = scope(
        config,
        TestUser::new("carol").with_credential("research.bearer", "not-it"),
    );
    wrong
        .call("status", json!({"agent": "slow", "task_id": "t"}))
        .await
        .assert_error("refused the request (401)");
}

#[tokio::test]
async fn a_file_from_the_users_root_is_attached() {
    let agents = Agents::start(&[]).await;
    let user = TestUser::new("alice").with_temp_files();
    let s = scope(agents.config(|a| a), user);
    let root = s.files_root().unwrap().to_owned();
    std::fs::write(root.join("notes.txt"), b"file body").unwrap();
    let call = s
        .call(
            "send",
            json!({"agent": "echo", "message": "see file", "files": ["notes.txt"]}),
        )
        .await
        .assert_ok();
    // The SDK decoded the part: its name, type and size.
    assert_eq!(
        call.text(),
        "echo: see file\nfile notes.txt (text/plain, 9 bytes)"
    );
    s.call(
        "send",
        json!({"agent": "echo", "message": "m", "files": ["../outside.txt"]}),
    )
    .await
    .assert_error("cannot be attached");
}
