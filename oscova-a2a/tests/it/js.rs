//! The official JavaScript SDK's client (@a2a-js/sdk 1.3.0,
//! `scripts/a2a/client.mjs`, on pi's Node 22) against the server, over both
//! bindings: a second peer's reading of the protocol beside the Python
//! SDK's (`sdk`).

use oscova_test_support::a2a_js;
use serde_json::Value;

use crate::support::{ALICE, BOB, Server};

const BINDINGS: [&str; 2] = ["JSONRPC", "HTTP+JSON"];

/// The SDK's error class for the specification's error `name` as it came
/// over `binding`: the error was read from that binding's own shape.
fn class(binding: &str, name: &str) -> String {
    match binding {
        "JSONRPC" => format!("JsonRpc{name}"),
        _ => format!("Rest{name}"),
    }
}

/// Runs `client.mjs` with `op` and returns the JSON line it printed.
async fn js(base: &str, token: Option<&str>, binding: &str, op: &[&str]) -> Value {
    let mut command = tokio::process::Command::new(a2a_js::node());
    command
        .arg(a2a_js::client_script())
        .arg(a2a_js::a2a_js_dir())
        .args(["--url", base, "--binding", binding]);
    if let Some(token) = token {
        command.args(["--token", token]);
    }
    let output = command.args(op).kill_on_drop(true).output().await.unwrap();
    assert!(
        output.status.success(),
        "client.mjs {op:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "client.mjs printed no JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn ok(answer: Value) -> Value {
    assert!(answer.get("error").is_none(), "the JS SDK failed: {answer}");
    answer["ok"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_js_sdk_reads_the_card_sends_gets_and_lists_over_both_bindings() {
    let server = Server::start().await;
    let card = ok(js(&server.base, None, "JSONRPC", &["card"]).await);
    assert_eq!(card["name"], "test agent");
    assert_eq!(card["skills"][0]["id"], "chat");
    assert_eq!(card["capabilities"]["streaming"], true);
    let bindings: Vec<&str> = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["protocolBinding"].as_str().unwrap())
        .collect();
    assert_eq!(bindings, ["JSONRPC", "HTTP+JSON"]);

    for binding in BINDINGS {
        let sent = ok(js(&server.base, Some(ALICE), binding, &["send", "hello"]).await);
        let task = &sent["task"];
        assert_eq!(
            task["status"]["state"], "TASK_STATE_COMPLETED",
            "{binding}: {task}"
        );
        assert_eq!(
            task["artifacts"][0]["parts"][0]["text"], "You said: hello (1 user messages)",
            "{binding}"
        );
        let context = task["contextId"].as_str().unwrap().to_owned();
        let id = task["id"].as_str().unwrap().to_owned();

        // The context is the session: the second task's run sees the first.
        let again = ok(js(
            &server.base,
            Some(ALICE),
            binding,
            &["send", "more", &context],
        )
        .await);
        assert_eq!(again["task"]["contextId"], context.as_str());
        assert_eq!(
            again["task"]["artifacts"][0]["parts"][0]["text"], "You said: more (2 user messages)",
            "{binding}"
        );

        let got = ok(js(&server.base, Some(ALICE), binding, &["get", &id]).await);
        assert_eq!(got["id"], id.as_str());
        assert_eq!(got["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(got["history"][0]["parts"][0]["text"], "hello");
        assert_eq!(got["history"][1]["role"], "ROLE_AGENT");

        let listed = ok(js(&server.base, Some(ALICE), binding, &["list", &context]).await);
        let ids: Vec<&str> = listed["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids.len(), 2, "{listed}");
        assert_eq!(ids[1], id, "newest first");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_js_sdk_cancels_a_running_task_and_a_finished_one_is_not_cancelable() {
    let server = Server::start().await;
    for binding in BINDINGS {
        let sent = ok(js(
            &server.base,
            Some(ALICE),
            binding,
            &["send-nowait", "slow one"],
        )
        .await);
        let task = &sent["task"];
        let state = task["status"]["state"].as_str().unwrap();
        assert!(
            state == "TASK_STATE_SUBMITTED" || state == "TASK_STATE_WORKING",
            "{binding}: {task}"
        );
        let id = task["id"].as_str().unwrap().to_owned();
        let canceled = ok(js(&server.base, Some(ALICE), binding, &["cancel", &id]).await);
        assert_eq!(
            canceled["status"]["state"], "TASK_STATE_CANCELED",
            "{binding}"
        );
        let got = ok(js(&server.base, Some(ALICE), binding, &["get", &id]).await);
        assert_eq!(
            got["status"]["state"], "TASK_STATE_CANCELED",
            "stays canceled"
        );

        let again = js(&server.base, Some(ALICE), binding, &["cancel", &id]).await;
        assert_eq!(
            again["error"], "TaskNotCancelableError",
            "{binding}: {again}"
        );
        assert_eq!(
            again["class"],
            class(binding, "TaskNotCancelableError"),
            "{again}"
        );
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_js_sdk_streams_a_task_then_its_chunks_and_closes_at_the_terminal_state() {
    let server = Server::start().await;
    for binding in BINDINGS {
        let events = ok(js(&server.base, Some(ALICE), binding, &["stream", "streamed"]).await);
        let events = events.as_array().unwrap();
        assert!(
            events[0].get("task").is_some(),
            "{binding}: the task first: {events:?}"
        );
        let id = events[0]["task"]["id"].as_str().unwrap();
        let states: Vec<&str> = events
            .iter()
            .filter_map(|e| e["statusUpdate"]["status"]["state"].as_str())
            .collect();
        assert_eq!(
            states,
            ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"],
            "{binding}: {events:?}"
        );
        let text: String = events
            .iter()
            .filter_map(|e| e["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str())
            .collect();
        assert_eq!(text, "You said: streamed (1 user messages)", "{binding}");
        assert!(
            events
                .iter()
                .filter_map(|e| e.get("artifactUpdate").or_else(|| e.get("statusUpdate")))
                .all(|e| e["taskId"] == id),
            "{binding}: every event names the task"
        );
        assert!(
            events.last().unwrap().get("statusUpdate").is_some(),
            "{binding}: closed after the terminal state"
        );
        let got = ok(js(&server.base, Some(ALICE), binding, &["get", id]).await);
        assert_eq!(got["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(
            got["artifacts"][0]["artifactId"],
            events
                .iter()
                .find_map(|e| e["artifactUpdate"]["artifact"]["artifactId"].as_str())
                .unwrap(),
            "the stored artifact is the one streamed"
        );
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_js_sdk_finds_no_task_of_another_user_and_a_missing_or_wrong_token_is_refused() {
    let server = Server::start().await;
    for binding in BINDINGS {
        let sent = ok(js(&server.base, Some(ALICE), binding, &["send", "mine"]).await);
        let id = sent["task"]["id"].as_str().unwrap().to_owned();
        let context = sent["task"]["contextId"].as_str().unwrap().to_owned();

        for op in ["get", "cancel"] {
            let answer = js(&server.base, Some(BOB), binding, &[op, &id]).await;
            assert_eq!(
                answer["error"], "TaskNotFoundError",
                "{binding} {op}: {answer}"
            );
            assert_eq!(
                answer["class"],
                class(binding, "TaskNotFoundError"),
                "{answer}"
            );
        }
        let missing = js(&server.base, Some(ALICE), binding, &["get", "no-such-task"]).await;
        assert_eq!(
            missing["message"],
            js(&server.base, Some(BOB), binding, &["get", &id]).await["message"],
            "{binding}: another user's task reads as a missing one"
        );
        let listed = ok(js(&server.base, Some(BOB), binding, &["list", &context]).await);
        assert!(
            listed
                .get("tasks")
                .is_none_or(|t| t.as_array().unwrap().is_empty()),
            "{binding}: {listed}"
        );
        // Alice still sees her own.
        let hers = ok(js(&server.base, Some(ALICE), binding, &["get", &id]).await);
        assert_eq!(hers["status"]["state"], "TASK_STATE_COMPLETED");

        for token in [None, Some("wrong-token")] {
            let refused = js(&server.base, token, binding, &["get", &id]).await;
            assert!(
                refused.get("error").is_some(),
                "{binding} {token:?}: {refused}"
            );
            assert!(
                refused["message"].as_str().unwrap().contains("401"),
                "{binding} {token:?}: {refused}"
            );
        }
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_js_sdk_answers_a_tools_question_in_the_task_that_waits_on_it() {
    let server = Server::start().await;
    for binding in BINDINGS {
        let sent = ok(js(&server.base, Some(ALICE), binding, &["send", "ask me"]).await);
        let task = &sent["task"];
        assert_eq!(
            task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
            "{binding}: {task}"
        );
        assert_eq!(
            task["status"]["message"]["parts"][0]["text"],
            "What is your name? Answer with the text."
        );
        let id = task["id"].as_str().unwrap().to_owned();
        let context = task["contextId"].as_str().unwrap().to_owned();

        let bob = js(
            &server.base,
            Some(BOB),
            binding,
            &["answer", "Mallory", &context, &id],
        )
        .await;
        assert_eq!(bob["error"], "TaskNotFoundError", "{binding}: {bob}");

        let answered = ok(js(
            &server.base,
            Some(ALICE),
            binding,
            &["answer", "Ada", &context, &id],
        )
        .await);
        let task = &answered["task"];
        assert_eq!(task["id"], id.as_str());
        assert_eq!(
            task["status"]["state"], "TASK_STATE_COMPLETED",
            "{binding}: {task}"
        );
        assert_eq!(
            task["artifacts"][0]["parts"][0]["text"],
            "Tool said: Hello, Ada"
        );

        let again = js(
            &server.base,
            Some(ALICE),
            binding,
            &["answer", "Bob", &context, &id],
        )
        .await;
        assert_eq!(
            again["error"], "UnsupportedOperationError",
            "{binding}: {again}"
        );
        assert_eq!(
            again["class"],
            class(binding, "UnsupportedOperationError"),
            "{again}"
        );
    }
    server.stop().await;
}
