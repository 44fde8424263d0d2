//! Push notifications to webhooks this test hosts on loopback.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use oscova_a2a::{MemoryTaskStore, SqliteTaskStore, TaskStore};
use oscova_core::HttpClient;
use oscova_test_support::http::{Reply, TestServer};
use serde_json::{Value, json};

use crate::support::{ALICE, BOB, Server};

fn states(hook: &TestServer) -> Vec<String> {
    hook.requests()
        .iter()
        .map(|r| {
            r.json()["statusUpdate"]["status"]["state"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_get_each_status_with_their_authorization_retried_and_a_private_one_is_refused() {
    // The first POST fails: the push is retried.
    let failures = Arc::new(AtomicUsize::new(1));
    let hook = TestServer::start(move |_| {
        if failures
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            Reply::json(500, json!({"error": "try again"}))
        } else {
            Reply::json(200, json!({}))
        }
    })
    .await;
    let private = TestServer::start(|_| Reply::json(200, json!({}))).await;
    // The operator allows the one webhook's address, not the other's.
    let allowed = hook
        .url()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let http = HttpClient::builder()
        .allow_internal([allowed])
        .build()
        .unwrap();
    let server = Server::start_full(Arc::new(MemoryTaskStore::new()), Some(http)).await;

    let card: Value = reqwest::get(format!("{}/.well-known/agent-card.json", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(card["capabilities"]["pushNotifications"], true);

    // A task that waits for the client, so the webhooks are set before it
    // goes on.
    let sent = server
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
        task["id"].as_str().unwrap(),
        task["contextId"].as_str().unwrap(),
    );

    let bobs = server
        .rpc(
            BOB,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": id, "url": hook.url()}),
        )
        .await;
    assert_eq!(bobs["error"]["code"], -32001, "another user's task: {bobs}");

    let created = server
        .rpc(
            ALICE,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": id, "id": "private", "url": private.url(), "token": "tok-1",
                   "authentication": {"scheme": "Bearer", "credentials": "hook-secret"}}),
        )
        .await;
    assert_eq!(created["result"]["id"], "private", "{created}");
    assert_eq!(
        created["result"]["authentication"],
        json!({"scheme": "Bearer"}),
        "the credentials are never answered: {created}"
    );
    assert!(created["result"].get("token").is_none(), "{created}");
    // The SDK's client sets the other one, over HTTP+JSON.
    let op = ["push", id, &hook.url(), "hook", "tok-1", "hook-secret"];
    let created = crate::support::sdk(&server.base, Some(ALICE), "HTTP+JSON", &op).await;
    assert_eq!(created["ok"]["id"], "hook", "{created}");
    assert_eq!(created["ok"]["taskId"], id, "{created}");
    let listed: Value = reqwest::Client::new()
        .get(format!(
            "{}/tasks/{id}/pushNotificationConfigs",
            server.base
        ))
        .bearer_auth(ALICE)
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["configs"].as_array().unwrap().len(), 2, "{listed}");
    assert!(
        !listed.to_string().contains("hook-secret") && !listed.to_string().contains("tok-1"),
        "{listed}"
    );
    let bobs = server
        .rpc(
            BOB,
            "ListTaskPushNotificationConfigs",
            json!({"taskId": id}),
        )
        .await;
    assert_eq!(
        bobs["error"]["code"], -32001,
        "another user's configs: {bobs}"
    );
    let bobs = server
        .rpc(
            BOB,
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": id, "id": "hook"}),
        )
        .await;
    assert_eq!(bobs["error"]["code"], -32001, "{bobs}");
    // Nor can Bob hang a webhook on it by answering it.
    let bobs = server
        .rpc(
            BOB,
            "SendMessage",
            json!({"message": {"messageId": "b1", "role": "ROLE_USER", "taskId": id,
                               "parts": [{"text": "Eve"}]},
                   "configuration": {"taskPushNotificationConfig": {"url": private.url()}}}),
        )
        .await;
    assert_eq!(bobs["error"]["code"], -32001, "{bobs}");
    let listed = server
        .rpc(
            ALICE,
            "ListTaskPushNotificationConfigs",
            json!({"taskId": id}),
        )
        .await;
    assert_eq!(
        listed["result"]["configs"].as_array().unwrap().len(),
        2,
        "{listed}"
    );

    let answered = server
        .rpc(
            ALICE,
            "SendMessage",
            json!({"message": {"messageId": "m2", "role": "ROLE_USER", "taskId": id,
                               "contextId": context, "parts": [{"text": "Ada"}]}}),
        )
        .await;
    assert_eq!(
        answered["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );

    // Webhooks are called in order, one at a time: once the allowed one
    // has the last state, the private one has had every chance.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !states(&hook).contains(&"TASK_STATE_COMPLETED".to_owned()) {
        assert!(
            Instant::now() < deadline,
            "no COMPLETED push: {:?}",
            states(&hook)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        states(&hook),
        [
            "TASK_STATE_WORKING",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED"
        ],
        "the failed push was sent again, then the next state"
    );
    for request in hook.requests() {
        assert_eq!(request.header("authorization"), Some("Bearer hook-secret"));
        assert_eq!(request.header("x-a2a-notification-token"), Some("tok-1"));
        assert_eq!(request.json()["statusUpdate"]["taskId"], id);
    }
    assert!(
        private.requests().is_empty(),
        "a webhook on a loopback address the operator did not allow is never called"
    );

    let deleted = server
        .rpc(
            ALICE,
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": id, "id": "private"}),
        )
        .await;
    assert_eq!(deleted["result"], json!({}), "{deleted}");
    let listed = server
        .rpc(
            ALICE,
            "ListTaskPushNotificationConfigs",
            json!({"taskId": id}),
        )
        .await;
    assert_eq!(listed["result"]["configs"][0]["id"], "hook", "{listed}");
    server.stop().await;
}

/// Every state `hook` was sent, and how many times it was sent `state`.
fn count(hook: &TestServer, state: &str) -> usize {
    states(hook).iter().filter(|s| *s == state).count()
}

async fn wait_for(hook: &TestServer, state: &str, times: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while count(hook, state) < times {
        assert!(
            Instant::now() < deadline,
            "{state} not pushed {times} times: {:?}",
            states(hook)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configs_outlive_a_restart_and_a_final_state_not_delivered_is_delivered_after_it() {
    // The webhook is down while the first process runs the task.
    let down = Arc::new(AtomicBool::new(true));
    let is_down = down.clone();
    let hook = TestServer::start(move |_| {
        if is_down.load(Ordering::SeqCst) {
            Reply::json(503, json!({"error": "down"}))
        } else {
            Reply::json(200, json!({}))
        }
    })
    .await;
    let allowed = hook.url().trim_start_matches("http://").to_owned();
    let http = HttpClient::builder()
        .allow_internal([allowed])
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    let store =
        || async { Arc::new(SqliteTaskStore::open(&db).await.unwrap()) as Arc<dyn TaskStore> };

    let first = Server::start_full(store().await, Some(http.clone())).await;
    let sent = first
        .rpc(
            ALICE,
            "SendMessage",
            json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hello"}]},
                   "configuration": {"taskPushNotificationConfig": {
                       "id": "hook", "url": hook.url(), "token": "tok-1",
                       "authentication": {"scheme": "Bearer", "credentials": "hook-secret"}}}}),
        )
        .await;
    let task = &sent["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{sent}");
    let id = task["id"].as_str().unwrap().to_owned();
    // Three attempts at the final state, all refused; then the process stops.
    wait_for(&hook, "TASK_STATE_COMPLETED", 3).await;
    first.stop().await;

    down.store(false, Ordering::SeqCst);
    let second = Server::start_full(store().await, Some(http)).await;
    let listed = second
        .rpc(
            ALICE,
            "ListTaskPushNotificationConfigs",
            json!({"taskId": id}),
        )
        .await;
    let configs = listed["result"]["configs"].as_array().unwrap();
    assert_eq!(configs.len(), 1, "{listed}");
    assert_eq!(configs[0]["id"], "hook");
    assert_eq!(configs[0]["url"], hook.url());
    assert_eq!(configs[0]["authentication"], json!({"scheme": "Bearer"}));
    let got = second
        .rpc(
            ALICE,
            "GetTaskPushNotificationConfig",
            json!({"taskId": id, "id": "hook"}),
        )
        .await;
    assert_eq!(got["result"]["taskId"], id.as_str(), "{got}");
    for answer in [&listed, &got] {
        let text = answer.to_string();
        assert!(
            !text.contains("hook-secret") && !text.contains("tok-1"),
            "{text}"
        );
    }
    let bobs = second
        .rpc(
            BOB,
            "ListTaskPushNotificationConfigs",
            json!({"taskId": id}),
        )
        .await;
    assert_eq!(bobs["error"]["code"], -32001, "{bobs}");

    // The restarted process owes the final state and delivers it, with the
    // config's secrets, once.
    wait_for(&hook, "TASK_STATE_COMPLETED", 4).await;
    let last = hook.requests().pop().unwrap();
    assert_eq!(last.header("authorization"), Some("Bearer hook-secret"));
    assert_eq!(last.header("x-a2a-notification-token"), Some("tok-1"));
    assert_eq!(last.json()["statusUpdate"]["taskId"], id.as_str());
    second.stop().await;
    // Delivered: nothing is owed any more.
    let owed = store()
        .await
        .claim_owed_pushes(Duration::ZERO, oscova_a2a::push::MAX_CLAIMS)
        .await
        .unwrap();
    assert!(owed.is_empty(), "{owed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_and_sqlite_keep_webhooks_by_owner_and_owe_final_states() {
    crate::stores::check_owed_pushes(&MemoryTaskStore::new()).await;
    crate::stores::check_push_bounds(&MemoryTaskStore::new()).await;
    crate::stores::check_waits(&MemoryTaskStore::new()).await;
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteTaskStore::open(dir.path().join("tasks.db"))
        .await
        .unwrap();
    crate::stores::check_owed_pushes(&store).await;
    crate::stores::check_push_bounds(&store).await;
    crate::stores::check_waits(&store).await;
}
