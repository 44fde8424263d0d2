//! A tool call that comes back with a missing credential ends the task in
//! `AUTH_REQUIRED` with the guidance; once the person set the credential,
//! the client's next message in the task runs it again. Driven by the
//! official Python SDK's client (`scripts/a2a/client.py`).

use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::support::{ALICE, KEY, Server, sdk};

fn ok(answer: Value) -> Value {
    assert!(answer.get("error").is_none(), "the SDK failed: {answer}");
    answer["ok"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_credential_is_auth_required_with_guidance_and_the_next_message_runs_it_again() {
    let key = Arc::new(Mutex::new(None));
    let server = Server::start_keyed(key.clone()).await;
    for binding in ["JSONRPC", "HTTP+JSON"] {
        *key.lock().unwrap() = None;
        let sent = ok(sdk(&server.base, Some(ALICE), binding, &["send", "key please"]).await);
        let task = &sent["task"];
        assert_eq!(
            task["status"]["state"], "TASK_STATE_AUTH_REQUIRED",
            "{binding}: {task}"
        );
        let guidance = task["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(
            guidance.contains(KEY) && guidance.contains("[users.<you>.credentials]"),
            "{binding}: the guidance says what to set and where: {task}"
        );
        assert!(
            task.get("artifacts")
                .is_none_or(|a| a.as_array().unwrap().is_empty()),
            "no answer while the credential is missing: {task}"
        );
        let id = task["id"].as_str().unwrap().to_owned();
        let context = task["contextId"].as_str().unwrap().to_owned();
        let got = ok(sdk(&server.base, Some(ALICE), binding, &["get", &id]).await);
        assert_eq!(got["status"]["state"], "TASK_STATE_AUTH_REQUIRED", "stored");

        // Still missing: the task asks again, it does not complete.
        let again = ok(sdk(
            &server.base,
            Some(ALICE),
            binding,
            &["answer", "key: is it there now?", &context, &id],
        )
        .await);
        assert_eq!(again["task"]["id"], id.as_str());
        assert_eq!(
            again["task"]["status"]["state"], "TASK_STATE_AUTH_REQUIRED",
            "{binding}: {again}"
        );

        *key.lock().unwrap() = Some("s3cret".to_owned());
        let done = ok(sdk(
            &server.base,
            Some(ALICE),
            binding,
            &["answer", "key: set it, try again", &context, &id],
        )
        .await);
        let task = &done["task"];
        assert_eq!(task["id"], id.as_str(), "the same task ran again");
        assert_eq!(
            task["status"]["state"], "TASK_STATE_COMPLETED",
            "{binding}: {task}"
        );
        assert_eq!(
            task["artifacts"][0]["parts"][0]["text"], "Tool said: the key opened it",
            "{binding}"
        );
        let history: Vec<&str> = task["history"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "ROLE_USER")
            .filter_map(|m| m["parts"][0]["text"].as_str())
            .collect();
        assert_eq!(
            history,
            [
                "key please",
                "key: is it there now?",
                "key: set it, try again"
            ],
            "{binding}"
        );

        // A completed task takes no further message.
        let refused = sdk(
            &server.base,
            Some(ALICE),
            binding,
            &["answer", "key: more", &context, &id],
        )
        .await;
        assert!(refused.get("error").is_some(), "{binding}: {refused}");
    }
    server.stop().await;
}
