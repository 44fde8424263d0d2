//! Two servers on one Postgres database (feature `postgres`): any instance
//! answers for a task another runs, and the owner rule holds across them.

use std::sync::Arc;

use oscova_a2a::{PostgresTaskStore, TaskStore};
use serde_json::json;

use crate::support::{ALICE, BOB, Server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_instance_answers_for_a_task_another_runs_and_a_cancel_there_holds() {
    let cluster = oscova_test_support::postgres::Cluster::start();
    let config = cluster.create_database("a2a_fleet");
    let store = |config: String| async move {
        Arc::new(PostgresTaskStore::connect(&config).await.unwrap()) as Arc<dyn TaskStore>
    };
    let a = Server::start_fleet(store(config.clone()).await).await;
    let b = Server::start_fleet(store(config.clone()).await).await;

    let done = a
        .rpc(
            ALICE,
            "SendMessage",
            json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "on a"}]}}),
        )
        .await;
    let done = done["result"]["task"]["id"].as_str().unwrap().to_owned();
    let seen = b.rpc(ALICE, "GetTask", json!({"id": done})).await;
    assert_eq!(
        seen["result"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{seen}"
    );
    assert_eq!(
        seen["result"]["artifacts"][0]["parts"][0]["text"],
        "You said: on a (1 user messages)"
    );
    let bob = b.rpc(BOB, "GetTask", json!({"id": done})).await;
    assert_eq!(bob["error"]["code"], -32001, "{bob}");

    // A run in progress on A, cancelled through B: the state holds when A's
    // run ends.
    let running = a
        .rpc(
            ALICE,
            "SendMessage",
            json!({"message": {"messageId": "m2", "role": "ROLE_USER", "parts": [{"text": "slow on a"}]},
                   "configuration": {"returnImmediately": true}}),
        )
        .await;
    let running = running["result"]["task"]["id"].as_str().unwrap().to_owned();
    let listed = b.rpc(ALICE, "ListTasks", json!({})).await;
    assert_eq!(listed["result"]["totalSize"], 2, "{listed}");
    let canceled = b.rpc(ALICE, "CancelTask", json!({"id": running})).await;
    assert_eq!(
        canceled["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
    a.stop().await;
    let after = b.rpc(ALICE, "GetTask", json!({"id": running})).await;
    assert_eq!(
        after["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{after}"
    );
    b.stop().await;
}
