//! The protocol's edges over raw HTTP: versions, tokens, error codes, and
//! tasks that outlive a restart.

use std::sync::Arc;

use oscova_a2a::model::{Message, Part, Role, Task, TaskState};
use oscova_a2a::{RESTART_REASON, SqliteTaskStore, TaskStore};
use serde_json::json;

use crate::support::{ALICE, Server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a2a_version_other_than_1_0_is_version_not_supported() {
    let server = Server::start().await;
    let client = reqwest::Client::new();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}});
    for version in [None, Some("0.3"), Some("2.0"), Some("1.0"), Some("1.0.2")] {
        let mut request = client
            .post(format!("{}/", server.base))
            .bearer_auth(ALICE)
            .json(&body);
        if let Some(version) = version {
            request = request.header("A2A-Version", version);
        }
        let answer: serde_json::Value = request.send().await.unwrap().json().await.unwrap();
        if version.is_some_and(|v| v.starts_with("1.0")) {
            assert!(
                answer["result"]["tasks"].is_array(),
                "{version:?}: {answer}"
            );
        } else {
            assert_eq!(answer["error"]["code"], -32009, "{version:?}: {answer}");
            assert_eq!(
                answer["error"]["data"][0]["reason"],
                "VERSION_NOT_SUPPORTED"
            );
        }
    }
    let rest = client
        .get(format!("{}/tasks", server.base))
        .bearer_auth(ALICE)
        .header("A2A-Version", "0.3")
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), 400);
    let rest: serde_json::Value = rest.json().await.unwrap();
    assert_eq!(
        rest["error"]["details"][0]["reason"],
        "VERSION_NOT_SUPPORTED"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_is_public_and_everything_else_needs_a_token() {
    let server = Server::start().await;
    let client = reqwest::Client::new();
    let card = client
        .get(format!("{}/.well-known/agent-card.json", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(card.status(), 200);
    for (method, path) in [("POST", "/"), ("GET", "/tasks"), ("POST", "/message:send")] {
        let answer = client
            .request(method.parse().unwrap(), format!("{}{path}", server.base))
            .header("A2A-Version", "1.0")
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 401, "{method} {path}");
        assert!(
            answer.headers()["www-authenticate"]
                .to_str()
                .unwrap()
                .starts_with("Bearer")
        );
    }
    server.stop().await;
}

/// Issue 36, finding 1: a web page whose name was rebound to 127.0.0.1
/// (its `Host` and `Origin` its own name) reaches no path of a server on
/// loopback, the card included, whatever token it holds; the same
/// requests addressed to this machine are served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_host_or_origin_is_refused_on_every_path() {
    let server = Server::start().await;
    let client = reqwest::Client::new();
    let here = server.base.trim_start_matches("http://").to_owned();
    let port = here.rsplit(':').next().unwrap();
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}});
    let foreign = [
        (
            format!("evil.example:{port}"),
            Some(format!("http://evil.example:{port}")),
        ),
        ("evil.example".to_owned(), None),
        (here.clone(), Some("http://evil.example".to_owned())),
    ];
    let paths = [
        ("POST", "/"),
        ("GET", "/tasks"),
        ("POST", "/message:send"),
        ("GET", "/.well-known/agent-card.json"),
    ];
    for (method, path) in paths {
        for (host, origin) in &foreign {
            let mut request = client
                .request(method.parse().unwrap(), format!("{}{path}", server.base))
                .bearer_auth(ALICE)
                .header("A2A-Version", "1.0")
                .header("host", host)
                .json(&send);
            if let Some(origin) = origin {
                request = request.header("origin", origin);
            }
            let answer = request.send().await.unwrap();
            assert_eq!(answer.status(), 403, "{method} {path} {host} {origin:?}");
            let text = answer.text().await.unwrap();
            assert!(text.starts_with("Forbidden: the "), "{text}");
        }
    }
    let served = client
        .post(format!("{}/", server.base))
        .bearer_auth(ALICE)
        .header("A2A-Version", "1.0")
        .header("host", &here)
        .header("origin", format!("http://localhost:{port}"))
        .json(&send)
        .send()
        .await
        .unwrap();
    assert_eq!(served.status(), 200);
    let answer: serde_json::Value = served.json().await.unwrap();
    assert!(answer["result"]["tasks"].is_array(), "{answer}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_carry_the_specifications_codes() {
    let server = Server::start().await;
    let cases = [
        ("GetTask", json!({"id": "nope"}), -32001),
        ("Frobnicate", json!({}), -32601),
        ("GetTask", json!({}), -32602),
        ("SendStreamingMessage", json!({}), -32602),
        ("CreateTaskPushNotificationConfig", json!({}), -32602),
        ("GetExtendedAgentCard", json!({}), -32007),
    ];
    for (method, params, code) in cases {
        let answer = server.rpc(ALICE, method, params).await;
        assert_eq!(answer["error"]["code"], code, "{method}: {answer}");
        assert_eq!(answer["id"], 7);
    }
    let parse: serde_json::Value = reqwest::Client::new()
        .post(format!("{}/", server.base))
        .bearer_auth(ALICE)
        .header("A2A-Version", "1.0")
        .body("{not json")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(parse["error"]["code"], -32700);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_outlive_a_restart_and_a_run_lost_with_the_process_is_failed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let store: Arc<dyn TaskStore> = Arc::new(SqliteTaskStore::open(&path).await.unwrap());
    let server = Server::start_with(store.clone()).await;
    let sent = server
        .rpc(
            ALICE,
            "SendMessage",
            json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "keep me"}]}}),
        )
        .await;
    let done = sent["result"]["task"]["id"].as_str().unwrap().to_owned();
    server.stop().await;

    // A task a process was running when it died, as that process stored it.
    let message = serde_json::from_value::<Message>(json!({
        "messageId": "m2", "role": "ROLE_USER", "parts": [{"text": "lost"}]
    }))
    .unwrap();
    assert_eq!(message.role, Role::User);
    assert_eq!(message.parts, vec![Part::text("lost")]);
    let mut lost = Task::submitted("lost-task".into(), "c1".into(), message);
    lost.set_state(TaskState::Working, None);
    store.put("alice", &lost).await.unwrap();
    drop(store);

    let store: Arc<dyn TaskStore> = Arc::new(SqliteTaskStore::open(&path).await.unwrap());
    let server = Server::start_with(store).await;
    let kept = server.rpc(ALICE, "GetTask", json!({"id": done})).await;
    assert_eq!(
        kept["result"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{kept}"
    );
    assert_eq!(
        kept["result"]["artifacts"][0]["parts"][0]["text"],
        "You said: keep me (1 user messages)"
    );
    let failed = server
        .rpc(ALICE, "GetTask", json!({"id": "lost-task"}))
        .await;
    assert_eq!(
        failed["result"]["status"]["state"], "TASK_STATE_FAILED",
        "{failed}"
    );
    assert_eq!(
        failed["result"]["status"]["message"]["parts"][0]["text"],
        RESTART_REASON
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_sees_a_cancel_and_the_stream_ends_and_others_are_refused() {
    let server = Server::start().await;
    let sent = server
        .rpc(
            ALICE,
            "SendMessage",
            json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "slow run"}]},
                   "configuration": {"returnImmediately": true}}),
        )
        .await;
    let id = sent["result"]["task"]["id"].as_str().unwrap().to_owned();

    let bob = server
        .rpc(crate::support::BOB, "SubscribeToTask", json!({"id": id}))
        .await;
    assert_eq!(bob["error"]["code"], -32001, "{bob}");

    let mut stream = reqwest::Client::new()
        .post(format!("{}/", server.base))
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
    assert!(seen.starts_with("data: "), "{seen}");
    let first: serde_json::Value = serde_json::from_str(seen[6..].lines().next().unwrap()).unwrap();
    assert_eq!(first["id"], "s1");
    assert_eq!(first["result"]["task"]["id"], id.as_str());

    let canceled = server.rpc(ALICE, "CancelTask", json!({"id": id})).await;
    assert_eq!(
        canceled["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
    while let Some(chunk) = stream.chunk().await.unwrap() {
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    let last = seen.trim_end().lines().last().unwrap();
    let last: serde_json::Value = serde_json::from_str(&last[6..]).unwrap();
    assert_eq!(
        last["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_CANCELED",
        "{seen}"
    );

    let again = server
        .rpc(ALICE, "SubscribeToTask", json!({"id": id}))
        .await;
    assert_eq!(
        again["error"]["code"], -32004,
        "a terminal task has no stream: {again}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_past_the_cap_is_413_and_a_huge_context_id_is_refused() {
    let server = Server::start().await;
    let big = "x".repeat(oscova_a2a::Limits::default().max_body_bytes + 1);
    let answer = reqwest::Client::new()
        .post(format!("{}/", server.base))
        .bearer_auth(ALICE)
        .header("A2A-Version", "1.0")
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 413);

    let context = "c".repeat(257);
    let refused = server
        .rpc(
            ALICE,
            "SendMessage",
            json!({"message": {"messageId": "m1", "role": "ROLE_USER", "contextId": context,
                               "parts": [{"text": "hi"}]}}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let listed = server.rpc(ALICE, "ListTasks", json!({})).await;
    assert_eq!(
        listed["result"]["totalSize"], 0,
        "nothing was stored: {listed}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_without_events_past_its_idle_time_is_closed() {
    let server = Server::start_idle(std::time::Duration::from_millis(300)).await;
    let sent = server
        .rpc(
            ALICE,
            "SendMessage",
            json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "slow idle"}]},
                   "configuration": {"returnImmediately": true}}),
        )
        .await;
    let id = sent["result"]["task"]["id"].as_str().unwrap().to_owned();
    let body = reqwest::Client::new()
        .post(format!("{}/", server.base))
        .bearer_auth(ALICE)
        .header("A2A-Version", "1.0")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": id}}),
        )
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // The body ended: the task first, and no terminal state (it still runs).
    assert!(body.starts_with("data: "), "{body}");
    assert!(
        !body.contains("TASK_STATE_COMPLETED") && !body.contains("TASK_STATE_CANCELED"),
        "{body}"
    );
    let still = server.rpc(ALICE, "GetTask", json!({"id": id})).await;
    assert_eq!(
        still["result"]["status"]["state"], "TASK_STATE_WORKING",
        "{still}"
    );
    server.stop().await;
}
