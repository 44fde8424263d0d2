//! Two servers on one Postgres database (feature `postgres`): any instance
//! answers for a task another runs, and the user rule holds across them;
//! a webhook set through one is called by the one that runs the task; a
//! subscriber on one gets the text of a run on the other.

use std::sync::Arc;
use std::time::{Duration, Instant};

use oscova_a2a::{PostgresTaskStore, TaskStore};
use oscova_core::HttpClient;
use oscova_test_support::http::{Reply, TestServer};
use serde_json::json;

use crate::support::{ALICE, BOB, Server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_instance_answers_for_a_task_another_runs_and_a_cancel_there_holds() {
    let cluster = oscova_test_support::postgres::Cluster::start();
    let config = cluster.create_database("a2a_fleet");
    let store = |config: String| async move {
        Arc::new(PostgresTaskStore::connect(&config).await.unwrap()) as Arc<dyn TaskStore>
    };
    let a = Server::start_fleet(store(config.clone()).await, None).await;
    let b = Server::start_fleet(store(config.clone()).await, None).await;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_set_through_one_instance_is_called_by_the_one_running_the_task() {
    let cluster = oscova_test_support::postgres::Cluster::start();
    let config = cluster.create_database("a2a_fleet_push");
    let hook = TestServer::start(|_| Reply::json(200, json!({}))).await;
    let http = HttpClient::builder()
        .allow_internal([hook.url().trim_start_matches("http://").to_owned()])
        .build()
        .unwrap();
    let store = |config: String| async move {
        Arc::new(PostgresTaskStore::connect(&config).await.unwrap()) as Arc<dyn TaskStore>
    };
    let a = Server::start_fleet(store(config.clone()).await, Some(http.clone())).await;
    let b = Server::start_fleet(store(config.clone()).await, Some(http)).await;

    // B runs a task that waits for the client's answer.
    let sent = b
        .rpc(
            ALICE,
            "SendMessage",
            json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "ask me"}]}}),
        )
        .await;
    let task = &sent["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{sent}"
    );
    let (id, context) = (
        task["id"].as_str().unwrap().to_owned(),
        task["contextId"].as_str().unwrap().to_owned(),
    );
    // The webhook is set through A, and Bob cannot see it there or on B.
    let created = a
        .rpc(
            ALICE,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": id, "id": "hook", "url": hook.url(),
                   "authentication": {"scheme": "Bearer", "credentials": "fleet-secret"}}),
        )
        .await;
    assert_eq!(created["result"]["id"], "hook", "{created}");
    for server in [&a, &b] {
        let bobs = server
            .rpc(
                BOB,
                "ListTaskPushNotificationConfigs",
                json!({"taskId": id}),
            )
            .await;
        assert_eq!(bobs["error"]["code"], -32001, "{bobs}");
    }
    let listed = b
        .rpc(
            ALICE,
            "ListTaskPushNotificationConfigs",
            json!({"taskId": id}),
        )
        .await;
    assert_eq!(listed["result"]["configs"][0]["id"], "hook", "{listed}");

    let answered = b
        .rpc(
            ALICE,
            "SendMessage",
            json!({"message": {"messageId": "m2", "role": "ROLE_USER", "taskId": id,
                               "contextId": context, "parts": [{"text": "Ada"}]}}),
        )
        .await;
    assert_eq!(
        answered["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answered}"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let completed = loop {
        let found = hook
            .requests()
            .into_iter()
            .find(|r| r.json()["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED");
        if let Some(found) = found {
            break found;
        }
        assert!(Instant::now() < deadline, "B never pushed the final state");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(completed.json()["statusUpdate"]["taskId"], id.as_str());
    assert_eq!(
        completed.header("authorization"),
        Some("Bearer fleet-secret")
    );
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_on_one_instance_gets_the_text_of_a_run_on_the_other() {
    let cluster = oscova_test_support::postgres::Cluster::start();
    let config = cluster.create_database("a2a_fleet_stream");
    let store = |config: String| async move {
        Arc::new(PostgresTaskStore::connect(&config).await.unwrap()) as Arc<dyn TaskStore>
    };
    let a = Server::start_fleet(store(config.clone()).await, None).await;
    let b = Server::start_fleet(store(config.clone()).await, None).await;

    // A runs a task whose model waits for the gate, then streams its answer.
    let text = "gate:fleet-stream tell me";
    let sent = a
        .rpc(
            ALICE,
            "SendMessage",
            json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]},
                   "configuration": {"returnImmediately": true}}),
        )
        .await;
    let id = sent["result"]["task"]["id"].as_str().unwrap().to_owned();

    let bob = b.rpc(BOB, "SubscribeToTask", json!({"id": id})).await;
    assert_eq!(bob["error"]["code"], -32001, "{bob}");
    let mut stream = reqwest::Client::new()
        .post(format!("{}/", b.base))
        .bearer_auth(ALICE)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": "s1", "method": "SubscribeToTask", "params": {"id": id}}))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    let mut seen = String::new();
    while !seen.contains("\n\n") {
        seen.push_str(&String::from_utf8_lossy(
            &stream.chunk().await.unwrap().unwrap(),
        ));
    }
    // B follows the task: the model may go on.
    crate::support::gate("fleet-stream").add_permits(1);
    while let Some(chunk) = stream.chunk().await.unwrap() {
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    let events: Vec<serde_json::Value> = seen
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["result"].take())
        .collect();
    assert_eq!(events[0]["task"]["id"], id.as_str(), "{seen}");
    let chunks: Vec<&serde_json::Value> = events
        .iter()
        .filter_map(|e| e.get("artifactUpdate"))
        .collect();
    assert!(!chunks.is_empty(), "no artifact update reached B: {seen}");
    let joined: String = chunks
        .iter()
        .map(|c| c["artifact"]["parts"][0]["text"].as_str().unwrap())
        .collect();
    let answer = format!("You said: {text} (1 user messages)");
    assert_eq!(joined, answer, "{seen}");
    assert!(chunks.iter().all(|c| c["taskId"] == id.as_str()));
    let last = events.last().unwrap();
    assert_eq!(
        last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "the stream ends at the final state, after the text: {seen}"
    );
    let states: Vec<&str> = events
        .iter()
        .filter_map(|e| e["statusUpdate"]["status"]["state"].as_str())
        .collect();
    let mut unique = states.clone();
    unique.dedup();
    assert_eq!(states, unique, "no state is told twice: {seen}");
    let stored = b.rpc(ALICE, "GetTask", json!({"id": id})).await;
    assert_eq!(
        stored["result"]["artifacts"][0]["parts"][0]["text"],
        answer.as_str()
    );
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_keeps_webhooks_by_owner_and_owes_final_states() {
    let cluster = oscova_test_support::postgres::Cluster::start();
    let config = cluster.create_database("a2a_owed");
    let store = PostgresTaskStore::connect(&config).await.unwrap();
    crate::stores::check_owed_pushes(&store).await;
    crate::stores::check_push_bounds(&store).await;
    crate::stores::check_waits(&store).await;
}
