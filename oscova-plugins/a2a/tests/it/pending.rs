//! Tasks still running when a call returned are kept per user
//! (`[a2a] pending_dir`): after a restart (a new host over the same
//! directory), `status` without a task id polls them and delivers the
//! result of each one that finished, which then leaves the list.

use crate::support::{Agents, scope};

use oscova_plugin_a2a::A2aConfig;
use oscova_test_kit::TestUser;
use serde_json::json;

fn kept(agents: &Agents, dir: &std::path::Path) -> A2aConfig {
    let mut config = agents.config(|a| a);
    config.pending_dir = Some(dir.to_path_buf());
    config
}

#[tokio::test]
async fn a_pending_task_survives_a_restart_and_status_delivers_its_result() {
    let agents = Agents::start(&["--polls", "2"]).await;
    let dir = tempfile::tempdir().unwrap();
    let id = {
        let s = scope(kept(&agents, dir.path()), TestUser::new("alice"));
        let sent = s
            .call(
                "send",
                json!({"agent": "slow", "message": "kept", "wait_secs": 0}),
            )
            .await
            .assert_ok();
        sent.details()["task_id"].as_str().unwrap().to_owned()
    };
    // A new host: what the first knew is only in the directory.
    let s = scope(kept(&agents, dir.path()), TestUser::new("alice"));
    let bob = scope(kept(&agents, dir.path()), TestUser::new("bob"));
    let theirs = bob.call("status", json!({})).await.assert_ok();
    assert!(
        theirs.text().contains("no A2A task is pending"),
        "{}",
        theirs.text()
    );

    let first = s.call("status", json!({})).await.assert_ok();
    let tasks = first.details()["tasks"].as_array().unwrap().clone();
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    assert_eq!(tasks[0]["task_id"], json!(id));
    assert_eq!(tasks[0]["state"], "TASK_STATE_WORKING");

    let second = s.call("status", json!({"agent": "slow"})).await.assert_ok();
    assert_eq!(
        second.details()["tasks"][0]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert!(second.text().contains("done: kept"), "{}", second.text());

    let third = s.call("status", json!({})).await.assert_ok();
    assert!(
        third.text().contains("no A2A task is pending"),
        "{}",
        third.text()
    );
}

#[tokio::test]
async fn a_cancelled_task_leaves_the_list_and_without_a_list_status_needs_an_id() {
    let agents = Agents::start(&["--polls", "100"]).await;
    let dir = tempfile::tempdir().unwrap();
    let s = scope(kept(&agents, dir.path()), TestUser::new("alice"));
    let sent = s
        .call(
            "send",
            json!({"agent": "slow", "message": "x", "wait_secs": 0}),
        )
        .await
        .assert_ok();
    let id = sent.details()["task_id"].as_str().unwrap().to_owned();
    s.call("cancel", json!({"agent": "slow", "task_id": id}))
        .await
        .assert_ok();
    let status = s.call("status", json!({})).await.assert_ok();
    assert!(
        status.text().contains("no A2A task is pending"),
        "{}",
        status.text()
    );

    let unkept = scope(agents.config(|a| a), TestUser::new("alice"));
    unkept
        .call("status", json!({}))
        .await
        .assert_error("give `agent` and `task_id`");
    unkept
        .call("status", json!({"task_id": "t"}))
        .await
        .assert_error("needs the `agent`");
}
