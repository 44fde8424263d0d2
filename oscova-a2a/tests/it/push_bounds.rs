//! Webhooks past their bounds, on both bindings: refused with the same
//! error, no task started for a refused `SendMessage`, and a final state
//! POSTed to no more webhooks than a task may have.

use std::time::{Duration, Instant};

use oscova_core::HttpClient;
use oscova_test_support::http::{Reply, TestServer};
use serde_json::{Value, json};

use crate::support::{ALICE, BOB, Server};

/// `CreateTaskPushNotificationConfig` over HTTP+JSON: the status and body.
async fn rest_create(server: &Server, task: &str, config: Value) -> (u16, Value) {
    let answer = reqwest::Client::new()
        .post(format!(
            "{}/tasks/{task}/pushNotificationConfigs",
            server.base
        ))
        .bearer_auth(ALICE)
        .header("A2A-Version", "1.0")
        .json(&config)
        .send()
        .await
        .unwrap();
    (answer.status().as_u16(), answer.json().await.unwrap())
}

/// A task of `token`'s user waiting for an answer, with `config` sent
/// along when given: the JSON-RPC answer.
async fn ask(server: &Server, token: &str, config: Option<Value>) -> Value {
    let mut params = json!({"message": {"messageId": "m1", "role": "ROLE_USER",
                                        "parts": [{"text": "ask me"}]}});
    if let Some(config) = config {
        params["configuration"] = json!({"taskPushNotificationConfig": config});
    }
    server.rpc(token, "SendMessage", params).await
}

fn asked(sent: &Value) -> String {
    let task = &sent["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{sent}"
    );
    task["id"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_past_their_bounds_are_refused_on_both_bindings_and_never_pushed() {
    let hook = TestServer::start(|_| Reply::json(200, json!({}))).await;
    let allowed = hook
        .url()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let http = HttpClient::builder()
        .allow_internal([allowed])
        .build()
        .unwrap();
    let limits = Box::new(|s: oscova_a2a::A2aServer| {
        let mut limits = oscova_a2a::Limits::default();
        limits.max_push_configs_per_task = 3;
        limits.max_push_configs_per_user = 5;
        s.limits(limits)
    });
    let server = Server::start_tweaked(limits, Some(http)).await;
    let url = hook.url();
    let create = |task: &str, id: &str| json!({"taskId": task, "id": id, "url": url});

    // Three webhooks on one task, over both bindings; a fourth is refused
    // on each, with the same error; replacing one by its id is not.
    let first = asked(&ask(&server, ALICE, None).await);
    for id in ["h1", "h2"] {
        let created = server
            .rpc(
                ALICE,
                "CreateTaskPushNotificationConfig",
                create(&first, id),
            )
            .await;
        assert_eq!(created["result"]["id"], id, "{created}");
    }
    let (status, created) = rest_create(&server, &first, json!({"id": "h3", "url": url})).await;
    assert_eq!((status, &created["id"]), (200, &json!("h3")), "{created}");
    let refused = server
        .rpc(
            ALICE,
            "CreateTaskPushNotificationConfig",
            create(&first, "h4"),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32004, "{refused}");
    assert_eq!(
        refused["error"]["data"][0]["reason"], "UNSUPPORTED_OPERATION",
        "{refused}"
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 3 per task"),
        "{refused}"
    );
    let (status, refused) = rest_create(&server, &first, json!({"id": "h4", "url": url})).await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(
        refused["error"]["details"][0]["reason"],
        "UNSUPPORTED_OPERATION"
    );
    let (status, replaced) = rest_create(&server, &first, json!({"id": "h2", "url": url})).await;
    assert_eq!(status, 200, "{replaced}");
    // An answer naming the task, with a webhook: refused the same way,
    // and the task is not answered.
    let refused = server
        .rpc(
            ALICE,
            "SendMessage",
            json!({"message": {"messageId": "m2", "role": "ROLE_USER", "taskId": first,
                               "parts": [{"text": "Ada"}]},
                   "configuration": {"taskPushNotificationConfig": {"url": url}}}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32004, "{refused}");
    let listed = server
        .rpc(
            ALICE,
            "ListTaskPushNotificationConfigs",
            json!({"taskId": first}),
        )
        .await;
    assert_eq!(listed["result"]["configs"].as_array().unwrap().len(), 3);

    // A second task with one webhook sent along, then one more: five on
    // the user's tasks that have not ended. A third task with a webhook
    // is refused and never started; a webhook on any task is refused.
    let second = asked(&ask(&server, ALICE, Some(json!({"url": url}))).await);
    let created = server
        .rpc(
            ALICE,
            "CreateTaskPushNotificationConfig",
            create(&second, "s2"),
        )
        .await;
    assert_eq!(created["result"]["id"], "s2", "{created}");
    let refused = ask(&server, ALICE, Some(json!({"url": url}))).await;
    assert_eq!(refused["error"]["code"], -32004, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 5 per user"),
        "{refused}"
    );
    let listed = server.rpc(ALICE, "ListTasks", json!({})).await;
    assert_eq!(listed["result"]["totalSize"], 2, "no third task: {listed}");
    let (status, refused) = rest_create(&server, &second, json!({"id": "s3", "url": url})).await;
    assert_eq!(status, 400, "{refused}");
    // Another user's bound is their own.
    let bobs = asked(&ask(&server, BOB, Some(json!({"url": url}))).await);
    assert!(!bobs.is_empty());

    // The first task ends: its final state goes to its three webhooks,
    // no more, and its webhooks no longer count against the user's bound.
    let answered = server
        .rpc(
            ALICE,
            "SendMessage",
            json!({"message": {"messageId": "m3", "role": "ROLE_USER", "taskId": first,
                               "parts": [{"text": "Ada"}]}}),
        )
        .await;
    assert_eq!(
        answered["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answered}"
    );
    let completed = |hook: &TestServer| {
        hook.requests()
            .iter()
            .filter(|r| {
                let update = &r.json()["statusUpdate"];
                update["taskId"] == first.as_str()
                    && update["status"]["state"] == "TASK_STATE_COMPLETED"
            })
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while completed(&hook) < 3 {
        assert!(Instant::now() < deadline, "the final state was not pushed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(completed(&hook), 3, "one POST per webhook, three at most");
    let created = server
        .rpc(
            ALICE,
            "CreateTaskPushNotificationConfig",
            create(&second, "s3"),
        )
        .await;
    assert_eq!(created["result"]["id"], "s3", "{created}");
    server.stop().await;
}
