//! The official A2A client SDKs against the server, over both bindings:
//! each scenario is written once, for a [`Client`], and run for the Python
//! SDK's client and the JavaScript SDK's, two peers with their own reading
//! of the protocol.
//!
//! Rules: a scenario checks what holds for every client; where the SDKs
//! report differently, the difference is a method of [`Client`] (the
//! error class, in [`Peer::assert_error`]), never a second copy of the
//! scenario. [`for_each_client!`] makes one test per client, named by it
//! (`sdk::<scenario>::python`, `sdk::<scenario>::js`): a failure names the
//! SDK, each can be run alone, and a new scenario cannot leave one out.

use std::fmt;

use serde_json::Value;

use crate::clients::Client;
use crate::support::{ALICE, BOB, Server};

const BINDINGS: [&str; 2] = ["JSONRPC", "HTTP+JSON"];

/// One test per client for each scenario `fn NAME(client: Client)`, in a
/// module `NAME`.
macro_rules! for_each_client {
    ($($scenario:ident),+ $(,)?) => {$(
        mod $scenario {
            use crate::clients::Client;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn python() {
                super::$scenario(Client::Python).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn js() {
                super::$scenario(Client::Js).await;
            }
        }
    )+};
}

for_each_client!(
    reads_the_card_sends_gets_and_lists,
    cancels_a_running_task_and_a_finished_one_is_not_cancelable,
    streams_a_task_then_its_chunks_and_closes_at_the_terminal_state,
    finds_no_task_of_another_user_and_a_missing_or_wrong_token_is_refused,
    answers_a_tools_question_in_the_task_that_waits_on_it,
);

/// A client over one binding of one server.
struct Peer<'a> {
    client: Client,
    base: &'a str,
    binding: &'a str,
}

impl<'a> Peer<'a> {
    fn new(client: Client, server: &'a Server, binding: &'a str) -> Self {
        Self {
            client,
            base: &server.base,
            binding,
        }
    }

    /// `op` as `token`'s user: the client's answer, an error or not.
    async fn call(&self, token: Option<&str>, op: &[&str]) -> Value {
        self.client.run(self.base, token, self.binding, op).await
    }

    /// `op` as `token`'s user, which must succeed: its result.
    async fn ok(&self, token: Option<&str>, op: &[&str]) -> Value {
        let answer = self.call(token, op).await;
        assert!(answer.get("error").is_none(), "{self}: failed: {answer}");
        answer["ok"].clone()
    }

    /// `answer` is the specification's error `name`, and of the class
    /// the client reports for it over this binding, if any.
    fn assert_error(&self, answer: &Value, name: &str, what: &str) {
        assert_eq!(answer["error"], name, "{self} {what}: {answer}");
        if let Some(class) = self.client.error_class(self.binding, name) {
            assert_eq!(answer["class"], class, "{self} {what}: {answer}");
        }
    }
}

impl fmt::Display for Peer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} over {}", self.client, self.binding)
    }
}

async fn reads_the_card_sends_gets_and_lists(client: Client) {
    let server = Server::start().await;
    let card = Peer::new(client, &server, "JSONRPC")
        .ok(None, &["card"])
        .await;
    assert_eq!(card["name"], "test agent");
    assert_eq!(card["skills"][0]["id"], "chat");
    let bindings: Vec<&str> = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["protocolBinding"].as_str().unwrap())
        .collect();
    assert_eq!(bindings, ["JSONRPC", "HTTP+JSON"]);
    assert_eq!(
        card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );

    for binding in BINDINGS {
        let peer = Peer::new(client, &server, binding);
        let sent = peer.ok(Some(ALICE), &["send", "hello"]).await;
        let task = &sent["task"];
        assert_eq!(
            task["status"]["state"], "TASK_STATE_COMPLETED",
            "{peer}: {task}"
        );
        assert_eq!(
            task["artifacts"][0]["parts"][0]["text"], "You said: hello (1 user messages)",
            "{peer}"
        );
        let context = task["contextId"].as_str().unwrap().to_owned();
        let id = task["id"].as_str().unwrap().to_owned();

        // The context is the session: the second task's run sees the first.
        let again = peer.ok(Some(ALICE), &["send", "more", &context]).await;
        assert_eq!(again["task"]["contextId"], context.as_str());
        assert_eq!(
            again["task"]["artifacts"][0]["parts"][0]["text"], "You said: more (2 user messages)",
            "{peer}"
        );

        let got = peer.ok(Some(ALICE), &["get", &id]).await;
        assert_eq!(got["id"], id.as_str());
        assert_eq!(got["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(got["history"][0]["parts"][0]["text"], "hello");
        assert_eq!(got["history"][1]["role"], "ROLE_AGENT");

        let listed = peer.ok(Some(ALICE), &["list", &context]).await;
        let ids: Vec<&str> = listed["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids.len(), 2, "{peer}: {listed}");
        assert_eq!(ids[1], id, "{peer}: newest first");
    }
    server.stop().await;
}

async fn cancels_a_running_task_and_a_finished_one_is_not_cancelable(client: Client) {
    let server = Server::start().await;
    for binding in BINDINGS {
        let peer = Peer::new(client, &server, binding);
        let sent = peer.ok(Some(ALICE), &["send-nowait", "slow one"]).await;
        let task = &sent["task"];
        let state = task["status"]["state"].as_str().unwrap();
        assert!(
            state == "TASK_STATE_SUBMITTED" || state == "TASK_STATE_WORKING",
            "{peer}: {task}"
        );
        let id = task["id"].as_str().unwrap().to_owned();
        let canceled = peer.ok(Some(ALICE), &["cancel", &id]).await;
        assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED", "{peer}");
        let got = peer.ok(Some(ALICE), &["get", &id]).await;
        assert_eq!(
            got["status"]["state"], "TASK_STATE_CANCELED",
            "{peer}: stays canceled"
        );

        let again = peer.call(Some(ALICE), &["cancel", &id]).await;
        peer.assert_error(&again, "TaskNotCancelableError", "cancel again");
    }
    server.stop().await;
}

async fn streams_a_task_then_its_chunks_and_closes_at_the_terminal_state(client: Client) {
    let server = Server::start().await;
    let card = Peer::new(client, &server, "JSONRPC")
        .ok(None, &["card"])
        .await;
    assert_eq!(card["capabilities"]["streaming"], true);
    for binding in BINDINGS {
        let peer = Peer::new(client, &server, binding);
        let events = peer.ok(Some(ALICE), &["stream", "streamed"]).await;
        let events = events.as_array().unwrap();
        assert!(
            events[0].get("task").is_some(),
            "{peer}: the task first: {events:?}"
        );
        let id = events[0]["task"]["id"].as_str().unwrap();
        let states: Vec<&str> = events
            .iter()
            .filter_map(|e| e["statusUpdate"]["status"]["state"].as_str())
            .collect();
        assert_eq!(
            states,
            ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"],
            "{peer}: {events:?}"
        );
        let text: String = events
            .iter()
            .filter_map(|e| e["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str())
            .collect();
        assert_eq!(text, "You said: streamed (1 user messages)", "{peer}");
        assert!(
            events
                .iter()
                .filter_map(|e| e.get("artifactUpdate").or_else(|| e.get("statusUpdate")))
                .all(|e| e["taskId"] == id),
            "{peer}: every event names the task"
        );
        assert!(
            events.last().unwrap().get("statusUpdate").is_some(),
            "{peer}: closed after the terminal state"
        );
        let got = peer.ok(Some(ALICE), &["get", id]).await;
        assert_eq!(got["status"]["state"], "TASK_STATE_COMPLETED", "{peer}");
        assert_eq!(
            got["artifacts"][0]["artifactId"],
            events
                .iter()
                .find_map(|e| e["artifactUpdate"]["artifact"]["artifactId"].as_str())
                .unwrap(),
            "{peer}: the stored artifact is the one streamed"
        );
    }
    server.stop().await;
}

async fn finds_no_task_of_another_user_and_a_missing_or_wrong_token_is_refused(client: Client) {
    let server = Server::start().await;
    for binding in BINDINGS {
        let peer = Peer::new(client, &server, binding);
        let sent = peer.ok(Some(ALICE), &["send", "mine"]).await;
        let id = sent["task"]["id"].as_str().unwrap().to_owned();
        let context = sent["task"]["contextId"].as_str().unwrap().to_owned();

        for op in ["get", "cancel"] {
            let answer = peer.call(Some(BOB), &[op, &id]).await;
            peer.assert_error(&answer, "TaskNotFoundError", op);
        }
        let missing = peer.call(Some(ALICE), &["get", "no-such-task"]).await;
        assert_eq!(
            missing["message"],
            peer.call(Some(BOB), &["get", &id]).await["message"],
            "{peer}: another user's task reads as a missing one"
        );
        let listed = peer.ok(Some(BOB), &["list", &context]).await;
        assert!(
            listed
                .get("tasks")
                .is_none_or(|t| t.as_array().unwrap().is_empty()),
            "{peer}: {listed}"
        );
        // Bob's message in Alice's context is his own session.
        let bobs = peer.ok(Some(BOB), &["send", "hi", &context]).await;
        assert_eq!(
            bobs["task"]["artifacts"][0]["parts"][0]["text"], "You said: hi (1 user messages)",
            "{peer}"
        );
        // Alice still sees her own.
        let hers = peer.ok(Some(ALICE), &["get", &id]).await;
        assert_eq!(hers["status"]["state"], "TASK_STATE_COMPLETED", "{peer}");

        for token in [None, Some("wrong-token")] {
            let refused = peer.call(token, &["get", &id]).await;
            assert!(
                refused.get("error").is_some(),
                "{peer} {token:?}: {refused}"
            );
            assert!(
                refused["message"].as_str().unwrap().contains("401"),
                "{peer} {token:?}: {refused}"
            );
        }
    }
    server.stop().await;
}

async fn answers_a_tools_question_in_the_task_that_waits_on_it(client: Client) {
    let server = Server::start().await;
    for binding in BINDINGS {
        let peer = Peer::new(client, &server, binding);
        let sent = peer.ok(Some(ALICE), &["send", "ask me"]).await;
        let task = &sent["task"];
        assert_eq!(
            task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
            "{peer}: {task}"
        );
        assert_eq!(
            task["status"]["message"]["parts"][0]["text"],
            "What is your name? Answer with the text."
        );
        let id = task["id"].as_str().unwrap().to_owned();
        let context = task["contextId"].as_str().unwrap().to_owned();

        // Another user cannot answer it.
        let bob = peer
            .call(Some(BOB), &["answer", "Mallory", &context, &id])
            .await;
        peer.assert_error(&bob, "TaskNotFoundError", "Bob answers");

        let answered = peer
            .ok(Some(ALICE), &["answer", "Ada", &context, &id])
            .await;
        let task = &answered["task"];
        assert_eq!(task["id"], id.as_str());
        assert_eq!(
            task["status"]["state"], "TASK_STATE_COMPLETED",
            "{peer}: {task}"
        );
        assert_eq!(
            task["artifacts"][0]["parts"][0]["text"],
            "Tool said: Hello, Ada"
        );
        let said: Vec<&str> = task["history"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["parts"][0]["text"].as_str())
            .collect();
        assert_eq!(said, ["ask me", "Ada", "Tool said: Hello, Ada"], "{peer}");

        let again = peer
            .call(Some(ALICE), &["answer", "Bob", &context, &id])
            .await;
        peer.assert_error(&again, "UnsupportedOperationError", "answered again");
    }
    server.stop().await;
}
